"""``DocumentLoaderPyMuPDF``: ExtractThinker's missing PyMuPDF loader, one page dict per PDF page."""

from __future__ import annotations

from io import BytesIO
from typing import Any, ClassVar

from extract_thinker.document_loader.document_loader import DocumentLoader

from ..pages import PageSpec, normalize_page_spec
from ..pdf import PYMUPDF_LOCK, PdfSource, describe_source, find_tables, open_pdf, pdf_errors, render_page_png

__all__ = ["DocumentLoaderPyMuPDF"]


def _text_flags() -> int:
    import pymupdf

    # Ligatures ("ﬁ", "ﬂ") become their letters: "definitions" is found where a PDF drew "deﬁnitions".
    return int(pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES)


def _table_rows(table: Any) -> list[list[str]]:
    return [["" if cell is None else " ".join(str(cell).split()) for cell in row] for row in table.extract()]


def _page_text_with_tables(page: Any, tables: list[Any], flags: int) -> str:
    """Page text in reading order with each table's region replaced by the table as Markdown."""
    boxes = [tuple(table.bbox) for table in tables]

    def inside(block: tuple[float, ...]) -> bool:
        x = (block[0] + block[2]) / 2
        y = (block[1] + block[3]) / 2
        return any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in boxes)

    pieces: list[tuple[float, float, str]] = []
    for block in page.get_text("blocks", flags=flags):
        if block[6] == 0 and not inside(block):  # type 0 = text block
            pieces.append((block[1], block[0], block[4].strip()))
    for table in tables:
        pieces.append((table.bbox[1], table.bbox[0], table.to_markdown(clean=False).strip()))
    pieces.sort(key=lambda piece: (round(piece[0], 1), piece[1]))
    return "\n\n".join(text for _, _, text in pieces if text)


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
        if isinstance(source, BytesIO):
            source.seek(0)
        result: list[dict[str, Any]] = []
        flags = _text_flags()
        name = describe_source(source)
        with open_pdf(source, password=self.password) as document, PYMUPDF_LOCK, pdf_errors(name):
            selected = normalize_page_spec(self.pages, document.page_count)
            for index in range(document.page_count):
                if selected is not None and index not in selected:
                    continue
                page = document[index]
                found = find_tables(page) if self.tables else []
                text = (
                    _page_text_with_tables(page, found, flags)
                    if found
                    else page.get_text("text", flags=flags)
                )
                item: dict[str, Any] = {
                    "content": text,
                    "markdown": text,
                    "tables": [_table_rows(table) for table in found],
                    "page_number": index + 1,
                }
                if self.vision_mode:
                    item["image"] = render_page_png(page, self.dpi)
                result.append(item)
        return result

    def can_handle_vision(self, source: str | BytesIO) -> bool:
        """PDFs can be rendered to page images, so vision mode works for whatever ``can_handle`` accepts."""
        return self.can_handle(source)
