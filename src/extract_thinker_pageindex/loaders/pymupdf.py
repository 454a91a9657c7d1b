"""``DocumentLoaderPyMuPDF``: ExtractThinker's missing PyMuPDF loader, one page dict per PDF page."""

from __future__ import annotations

from io import BytesIO
from typing import Any, ClassVar

from extract_thinker.document_loader.document_loader import DocumentLoader

from ..pages import PageSpec
from ..pdf import PdfSource
from ..pdf_pages import read_pdf_pages

__all__ = ["DocumentLoaderPyMuPDF"]


class DocumentLoaderPyMuPDF(DocumentLoader):
    """Load PDFs with PyMuPDF: one dict per page, fast enough to sit in front of retrieval.

    Each page dict has ``content`` (the page text in reading order; with ``tables=True`` each table is
    rendered as Markdown in place), ``markdown`` (the same text), ``tables`` (row lists, with
    ``tables=True``), ``page_number`` (1-based, as in the PDF) and, in vision mode, ``image`` (PNG bytes).

    Args:
        content: Passed to ExtractThinker's ``DocumentLoader``.
        cache_ttl: Passed to ExtractThinker's ``DocumentLoader``.
        pages: Only these 1-based pages (``5``, ``(3, 7)``, ``[(1, 3), 5]`` or ``"1-3,5"``).
        password: Password of an encrypted PDF.
        tables: Find tables with PyMuPDF's table finder. Off by default: it runs at a few pages per second
            (see docs/benchmarks.md), against hundreds for plain text.
        dpi: Resolution of page images in vision mode.

    PyMuPDF is not thread-safe, so loads from several threads run one at a time.
    """

    SUPPORTED_FORMATS: ClassVar[list[str]] = ["pdf"]

    def __init__(
        self,
        content: Any = None,
        cache_ttl: int = 300,
        *,
        pages: PageSpec | None = None,
        password: str | None = None,
        tables: bool = False,
        dpi: int = 150,
    ) -> None:
        super().__init__(content, cache_ttl)
        self.pages = pages
        self.password = password
        self.tables = tables
        self.dpi = dpi

    def load(self, source: PdfSource) -> list[dict[str, Any]]:
        """Load a PDF's pages.

        Args:
            source: A path, bytes or BytesIO.

        Returns:
            One dict per selected page, in page order.

        Raises:
            DocumentLoadError: the file is missing, not a PDF, corrupt, or encrypted without the password.
            EmptyDocumentError: the PDF has no pages.
            PageSpecError: ``pages`` does not fit the document.
        """
        return read_pdf_pages(
            source,
            pages=self.pages,
            password=self.password,
            tables=self.tables,
            image_dpi=self.dpi if self.vision_mode else None,
        )

    def can_handle(self, source: str | BytesIO) -> bool:
        """Whether this loader reads the source: an existing file with a supported extension, or a stream.

        Raises:
            DocumentLoadError: the source is a path with a supported extension and no such file exists, so
                ExtractThinker's ``Extractor`` reports the missing file, not "No suitable document loader".
        """
        from ..sources import check_source_file

        return super().can_handle(check_source_file(source, self.SUPPORTED_FORMATS))

    def can_handle_vision(self, source: str | BytesIO) -> bool:
        """PDFs can be rendered to page images, so vision mode works for whatever ``can_handle`` accepts."""
        return self.can_handle(source)
