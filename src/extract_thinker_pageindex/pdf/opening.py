"""Opening PDFs with PyMuPDF: loading it (and its add-ons) once, the one lock that serialises its use across
threads, the translation of its errors into the package's, and reading a PDF's bytes safely."""

from __future__ import annotations

import gc
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import (
    DocumentLoadError,
    EmptyDocumentError,
    PageIndexError,
    PageIndexWarning,
    UnsupportedFormatError,
)
from ..inputs.files import MAX_DOCUMENT_BYTES, read_regular_file

if TYPE_CHECKING:
    import pymupdf

__all__ = [
    "PYMUPDF_LOCK",
    "PdfSource",
    "describe_source",
    "fewer_collections",
    "load_pymupdf",
    "load_pymupdf_layout",
    "mupdf_errors",
    "open_pdf",
    "pdf_errors",
    "read_pdf_bytes",
]

#: PyMuPDF is not thread-safe, even across separate documents; every call into it holds this lock.
PYMUPDF_LOCK = threading.RLock()

PdfSource = str | os.PathLike[str] | bytes | BytesIO


#: While pages are read, the cycle collector looks at young objects after this many new containers
#: (Python's default is 700).
READING_GC_THRESHOLD = 50_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cycles less often while pages are read. A page's text comes as thousands of dicts, lists
    and tuples that reference counting frees, but each allocation counts towards the cycle collector,
    whose runs then walk every object still alive (the lines of all pages read so far): about 6% of the
    text strategy's time. The threshold of the youngest generation is raised meanwhile and set back after,
    unless collection is off or something else changed it in between."""
    old = gc.get_threshold()
    if not gc.isenabled() or old[0] == 0 or old[0] >= READING_GC_THRESHOLD:
        yield
        return
    gc.set_threshold(READING_GC_THRESHOLD, *old[1:])
    try:
        yield
    finally:
        if gc.get_threshold()[0] == READING_GC_THRESHOLD:
            gc.set_threshold(*old)


# -- importing PyMuPDF ------------------------------------------------------------------------------------

#: What PyMuPDF 2.0's ``__init__`` imports by itself whenever they are installed (and pymupdf 2.0 depends
#: on both): its layout model, ``pymupdf.layout`` (onnxruntime, and the ONNX model loaded and activated on
#: import), and pymupdf4llm (which imports the layout model too). They are most of what ``import pymupdf``
#: costs: 1.6 s of CPU against 0.35 s without them (benchmarks/import_time.py). Only layout analysis uses
#: them; reading a PDF's text layer does not.
_PYMUPDF_ADD_ONS = ("pymupdf.layout", "pymupdf4llm")
_PYMUPDF_IMPORT_LOCK = threading.Lock()


def load_pymupdf() -> ModuleType:
    """PyMuPDF, imported (if this is the process's first import of it) without its layout model and
    pymupdf4llm; use this instead of ``import pymupdf``.

    PyMuPDF 2.0 imports both inside ``try: ... except ImportError`` and offers no switch to skip them (no
    environment variable; PyMuPDF 2.1 imports them lazily itself). So for that one import statement their
    ``sys.modules`` entries are ``None``, the import system's documented way to make an import raise
    ``ModuleNotFoundError``: PyMuPDF takes its own path for "not installed", as PyMuPDF 1.x without
    pymupdf-layout does. The entries are removed right after, so a later ``import pymupdf.layout`` or
    ``import pymupdf4llm`` loads them as usual (see :func:`load_pymupdf_layout`), and a process that
    imported PyMuPDF before this package keeps what it loaded. One thing stays off where this package
    imported PyMuPDF first: PyMuPDF 2.0's ``Document.to_markdown`` shortcut reports pymupdf4llm missing
    (call ``pymupdf4llm.to_markdown(document)`` instead).
    """
    if "pymupdf" not in sys.modules:
        with _PYMUPDF_IMPORT_LOCK:
            if "pymupdf" not in sys.modules:
                blocked = [name for name in _PYMUPDF_ADD_ONS if name not in sys.modules]
                for name in blocked:
                    sys.modules[name] = None  # type: ignore[assignment]
                try:
                    import pymupdf
                finally:
                    for name in blocked:
                        if name in sys.modules and sys.modules[name] is None:
                            del sys.modules[name]
    import pymupdf

    return pymupdf


def load_pymupdf_layout() -> ModuleType:
    """PyMuPDF's layout model, imported and active: what ``Page.get_layout`` (and PyMuPDF's own table
    finder's ``use_layout``) need (about a second, and onnxruntime, the first time in a process).

    Raises:
        UnsupportedFormatError: the installed PyMuPDF has no layout model (PyMuPDF 1.x without
            pymupdf-layout).
    """
    load_pymupdf()
    try:
        import pymupdf.layout
    except ImportError as exc:
        raise UnsupportedFormatError(
            "PyMuPDF's layout analysis needs PyMuPDF 2 (or pymupdf-layout with PyMuPDF 1.x); "
            "install it with pip install 'pymupdf>=2'."
        ) from exc
    # Importing activates it; again in case pymupdf4llm.use_layout(False) switched it off since.
    pymupdf.layout.activate()
    return pymupdf.layout


def describe_source(source: PdfSource) -> str:
    """How messages name a PDF source: its quoted path, or "The PDF stream"."""
    if isinstance(source, (str, os.PathLike)):
        return repr(str(source))
    return "The PDF stream"


@contextmanager
def pdf_errors(name: str) -> Iterator[None]:
    """Translate PyMuPDF's errors inside the block into ``DocumentLoadError`` naming the document."""
    pymupdf = load_pymupdf()

    try:
        yield
    except PageIndexError:
        raise
    except (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError, RuntimeError, IndexError, ValueError) as exc:
        raise DocumentLoadError(f"{name} is not a readable PDF: {exc}.") from exc


def mupdf_errors() -> tuple[type[Exception], ...]:
    """What PyMuPDF raises for data it cannot handle (MuPDF's own errors are not RuntimeErrors)."""
    pymupdf = load_pymupdf()

    return (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError)


def read_pdf_bytes(source: PdfSource, name: str) -> bytes:
    """A PDF source's bytes, read through the guarded reader (regular files only, size-limited).

    Raises:
        DocumentLoadError: the source cannot be read; ``EmptyDocumentError`` when it is 0 bytes.
    """
    if isinstance(source, (str, os.PathLike)):
        data = read_regular_file(source, limit=MAX_DOCUMENT_BYTES, error=DocumentLoadError)
    elif isinstance(source, BytesIO):
        data = source.getvalue()
    elif isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    else:
        raise DocumentLoadError(f"Cannot read a PDF from a {type(source).__name__}.")
    if not data:
        raise EmptyDocumentError(f"{name} is empty (0 bytes).")
    return data


@contextmanager
def open_pdf(
    source: PdfSource, *, password: str | None = None, name: str | None = None
) -> Iterator[pymupdf.Document]:
    """Open a PDF from a path, bytes or BytesIO, authenticated.

    The lock is held while opening and closing only: callers hold ``PYMUPDF_LOCK`` around every use of
    the document (several threads may render its pages in turn). Errors raised while the caller reads
    pages are the caller's to translate (see :func:`pdf_errors`).
    ``name`` is how messages call the document (by default its quoted path, or "The PDF stream").

    Raises:
        DocumentLoadError: missing file, not a PDF, corrupt, or encrypted without the right password.
        EmptyDocumentError: 0 bytes, or no pages.

    Warns:
        PageIndexWarning: the file was damaged and MuPDF repaired it (some text may be missing).
    """
    pymupdf = load_pymupdf()

    name = name or describe_source(source)
    data = read_pdf_bytes(source, name)
    with PYMUPDF_LOCK:
        with pdf_errors(name):
            document = pymupdf.open(stream=data, filetype="pdf")
        try:
            with pdf_errors(name):
                # MuPDF opens many formats whatever filetype says; only a PDF is a PDF here.
                if not document.is_pdf:
                    kind = (document.metadata or {}).get("format") or "another format"
                    raise DocumentLoadError(f"{name} is not a PDF (it reads as {kind}).")
                if document.needs_pass:
                    if password is None:
                        raise DocumentLoadError(
                            f"{name} is encrypted; pass its password (password= in Python, --password on "
                            "the command line) to open it."
                        )
                    if not document.authenticate(password):
                        raise DocumentLoadError(f"The password for {name} is wrong.")
                if document.page_count == 0:
                    raise EmptyDocumentError(f"{name} has no pages.")
                if document.is_repaired:
                    warnings.warn(
                        f"{name} is damaged; MuPDF repaired it, and some pages may have lost text.",
                        PageIndexWarning,
                        stacklevel=3,
                    )
        except BaseException:
            document.close()
            raise
    try:
        yield document
    finally:
        with PYMUPDF_LOCK:
            document.close()
