"""Opening PDFs with PyMuPDF: one place that translates its errors and serialises its use across threads."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import DocumentLoadError, EmptyDocumentError

if TYPE_CHECKING:
    import pymupdf

__all__ = ["PYMUPDF_LOCK", "PdfSource", "open_pdf", "render_page_png"]

#: PyMuPDF is not thread-safe, even across separate documents; every call into it holds this lock.
PYMUPDF_LOCK = threading.RLock()

PdfSource = str | os.PathLike[str] | bytes | BytesIO


def _describe(source: PdfSource) -> str:
    if isinstance(source, (str, os.PathLike)):
        return repr(str(source))
    return "the PDF stream"


@contextmanager
def open_pdf(source: PdfSource, *, password: str | None = None) -> Iterator[pymupdf.Document]:
    """Open a PDF from a path, bytes or BytesIO, authenticated, holding ``PYMUPDF_LOCK``.

    Raises:
        DocumentLoadError: missing file, not a PDF, corrupt, or encrypted without the right password.
        EmptyDocumentError: the PDF has no pages.
    """
    import pymupdf

    name = _describe(source)
    with PYMUPDF_LOCK:
        try:
            if isinstance(source, (str, os.PathLike)):
                path = Path(source)
                if not path.is_file():
                    raise DocumentLoadError(f"No such file: {str(path)!r}.")
                data = path.read_bytes()
            elif isinstance(source, BytesIO):
                data = source.getvalue()
            elif isinstance(source, (bytes, bytearray)):
                data = bytes(source)
            else:
                raise DocumentLoadError(f"Cannot read a PDF from a {type(source).__name__}.")
            if not data:
                raise EmptyDocumentError(f"{name} is empty (0 bytes).")
            document = pymupdf.open(stream=data, filetype="pdf")
        except (pymupdf.FileDataError, pymupdf.EmptyFileError, RuntimeError, ValueError) as exc:
            if isinstance(exc, DocumentLoadError):
                raise
            raise DocumentLoadError(f"{name} is not a readable PDF: {exc}.") from exc
        except OSError as exc:
            raise DocumentLoadError(f"Cannot read {name}: {exc}.") from exc
        try:
            if document.needs_pass:
                if password is None:
                    raise DocumentLoadError(f"{name} is encrypted; pass password= to open it.")
                if not document.authenticate(password):
                    raise DocumentLoadError(f"The password for {name} is wrong.")
            if document.page_count == 0:
                raise EmptyDocumentError(f"{name} has no pages.")
            yield document
        finally:
            document.close()


def render_page_png(page: Any, dpi: int) -> bytes:
    """The page rendered as PNG bytes at ``dpi`` (call while holding ``PYMUPDF_LOCK``)."""
    pixmap = page.get_pixmap(dpi=dpi)
    return bytes(pixmap.tobytes("png"))
