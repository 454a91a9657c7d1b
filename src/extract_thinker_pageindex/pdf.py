"""Opening PDFs with PyMuPDF: one place that translates its errors and serialises its use across threads."""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from typing import TYPE_CHECKING, Any

from .errors import DocumentLoadError, EmptyDocumentError, PageIndexError, PageIndexWarning
from .files import MAX_DOCUMENT_BYTES, read_regular_file

if TYPE_CHECKING:
    import pymupdf

__all__ = [
    "PYMUPDF_LOCK",
    "PdfSource",
    "describe_source",
    "find_tables",
    "open_pdf",
    "pdf_errors",
    "render_page_png",
]

#: PyMuPDF is not thread-safe, even across separate documents; every call into it holds this lock.
PYMUPDF_LOCK = threading.RLock()

PdfSource = str | os.PathLike[str] | bytes | BytesIO


def describe_source(source: PdfSource) -> str:
    """How messages name a PDF source: its quoted path, or "The PDF stream"."""
    if isinstance(source, (str, os.PathLike)):
        return repr(str(source))
    return "The PDF stream"


@contextmanager
def pdf_errors(name: str) -> Iterator[None]:
    """Translate PyMuPDF's errors inside the block into ``DocumentLoadError`` naming the document."""
    import pymupdf

    try:
        yield
    except PageIndexError:
        raise
    except (pymupdf.mupdf.FzErrorBase, pymupdf.FileDataError, RuntimeError, IndexError, ValueError) as exc:
        raise DocumentLoadError(f"{name} is not a readable PDF: {exc}.") from exc


def _read_bytes(source: PdfSource, name: str) -> bytes:
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
    import pymupdf

    name = name or describe_source(source)
    data = _read_bytes(source, name)
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
                        raise DocumentLoadError(f"{name} is encrypted; pass password= to open it.")
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


def find_tables(page: Any) -> list[Any]:
    """PyMuPDF's tables on a page (call while holding ``PYMUPDF_LOCK``).

    PyMuPDF 2 gates its finder by a layout model by default: slower, and on a plain ruled grid it adds
    empty columns. The finder's own line analysis is used instead where the option exists.
    """
    try:
        found = page.find_tables(use_layout=False)
    except TypeError:  # PyMuPDF before 2.0 has no layout gate
        found = page.find_tables()
    return list(found.tables)


def render_page_png(page: Any, dpi: int) -> bytes:
    """The page rendered as PNG bytes at ``dpi`` (call while holding ``PYMUPDF_LOCK``)."""
    pixmap = page.get_pixmap(dpi=dpi)
    return bytes(pixmap.tobytes("png"))
