"""``DocumentLoaderPyMuPDF``: ExtractThinker's missing PyMuPDF loader, one page dict per PDF page."""

from __future__ import annotations

from collections.abc import Sequence
from io import BytesIO
from typing import Any, ClassVar

from extract_thinker.document_loader.document_loader import DocumentLoader

from ..ocr.settings import DEFAULT_OCR_DPI, OcrEngine, OcrMode, ocr_settings
from ..pages import PageSpec
from ..pdf import PdfSource
from ..pdf_pages import read_pdf_pages

__all__ = ["DocumentLoaderPyMuPDF"]


class DocumentLoaderPyMuPDF(DocumentLoader):
    """Load PDFs with PyMuPDF: one dict per page, fast enough to sit in front of retrieval.

    Each page dict has ``content`` (the page text in reading order; with ``tables=True`` each table is
    rendered as Markdown in place), ``markdown`` (the same text), ``tables`` (row lists, with
    ``tables=True``), ``page_number`` (1-based, as in the PDF), ``text_source`` (``"text_layer"``, or
    ``"ocr"`` for a page read by OCR) and, in vision mode, ``image`` (PNG bytes).

    Scanned pages (no usable text layer: no words, or a few stray glyphs over a page-size picture) are read
    with OCR, with no model: Tesseract by default (through tesserocr from the ``[ocr]`` extra, else the one
    inside PyMuPDF; language data from that extra or the system's ``tesseract-ocr-<lang>`` packages), in
    worker processes. Born-digital pages are never
    OCR'd under ``ocr="auto"`` and cost nothing more. See docs/ocr.md.

    Args:
        content: Passed to ExtractThinker's ``DocumentLoader``.
        cache_ttl: Passed to ExtractThinker's ``DocumentLoader``.
        pages: Only these 1-based pages (``5``, ``(3, 7)``, ``[(1, 3), 5]`` or ``"1-3,5"``).
        password: Password of an encrypted PDF.
        tables: Find tables with PyMuPDF's table finder. Off by default: it runs at a few pages per second
            (see docs/benchmarks.md), against hundreds for plain text.
        dpi: Resolution of page images in vision mode.
        ocr: ``"auto"`` (pages without a usable text layer), ``"always"`` (every page; the text layer is
            replaced) or ``"never"``.
        ocr_engine: ``"tesseract"`` or ``"rapidocr"`` (the ``[rapidocr]`` extra).
        ocr_languages: Tesseract language codes: ``"eng"``, ``"eng+deu"`` or ``["eng", "deu"]``.
        ocr_workers: Processes that OCR pages side by side (default: the machine's cores).
        ocr_dpi: The resolution pages are drawn at for OCR.

    Raises:
        InvalidOptionError: an OCR option outside its choices.

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
        ocr: OcrMode = "auto",
        ocr_engine: OcrEngine = "tesseract",
        ocr_languages: str | list[str] = "eng",
        ocr_workers: int | None = None,
        ocr_dpi: int = DEFAULT_OCR_DPI,
    ) -> None:
        super().__init__(content, cache_ttl)
        self.pages = pages
        self.password = password
        self.tables = tables
        self.dpi = dpi
        self.ocr = ocr_settings(ocr, ocr_engine, ocr_languages, ocr_workers, ocr_dpi)

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
            OcrError: ``ocr="always"`` and the OCR engine or its language data is not installed.

        Warns:
            PageIndexWarning: scanned pages were met and no OCR engine is installed, or OCR failed on a page.
        """
        return read_pdf_pages(
            source,
            pages=self.pages,
            password=self.password,
            tables=self.tables,
            image_dpi=self.dpi if self.vision_mode else None,
            ocr=self.ocr,
        )

    def load_text(self, source: PdfSource) -> list[dict[str, Any]]:
        """The pages as :meth:`load` gives them, without images whatever the vision mode: the first step of
        a two-step load (:class:`DocumentLoaderRAG` renders only the pages it keeps, with
        :meth:`page_images`).

        Raises:
            As :meth:`load`.
        """
        return read_pdf_pages(
            source, pages=self.pages, password=self.password, tables=self.tables, image_dpi=None, ocr=self.ocr
        )

    def page_images(self, source: PdfSource, page_numbers: Sequence[int]) -> dict[int, bytes]:
        """The PNG images :meth:`load` attaches in vision mode, of the pages numbered ``page_numbers``
        (1-based, as in the PDF) only.

        Raises:
            DocumentLoadError: the file cannot be read (as :meth:`load`).
        """
        from ..pdf import PYMUPDF_LOCK, open_pdf, render_page_png

        if isinstance(source, BytesIO):
            source.seek(0)
        with open_pdf(source, password=self.password) as document, PYMUPDF_LOCK:
            return {
                number: render_page_png(document[number - 1], self.dpi)
                for number in dict.fromkeys(page_numbers)
                if 1 <= number <= document.page_count
            }

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
