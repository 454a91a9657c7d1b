"""A PDF's pages as page dicts (text in reading order, optional tables and images), read with PyMuPDF.

``DocumentLoaderPyMuPDF`` returns what :func:`read_pdf_pages` reads; the command line's ``search`` calls it
directly, so that it never imports ExtractThinker (whose ``DocumentLoader`` the loader subclasses).
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

from .pages import PageSpec, normalize_page_spec
from .pdf import PYMUPDF_LOCK, PdfSource, describe_source, find_tables, open_pdf, pdf_errors, render_page_png

__all__ = ["read_pdf_pages"]


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


def read_pdf_pages(
    source: PdfSource,
    *,
    pages: PageSpec | None = None,
    password: str | None = None,
    tables: bool = False,
    image_dpi: int | None = None,
) -> list[dict[str, Any]]:
    """Read a PDF's pages as page dicts.

    Args:
        source: A path, bytes or BytesIO.
        pages: Only these 1-based pages (``5``, ``(3, 7)``, ``[(1, 3), 5]`` or ``"1-3,5"``).
        password: Password of an encrypted PDF.
        tables: Find tables with PyMuPDF's table finder and render each as Markdown in place.
        image_dpi: When set, add each page rendered as PNG bytes at this resolution under ``image``.

    Returns:
        One dict per selected page, in page order: ``content`` and ``markdown`` (the page text),
        ``tables`` (row lists) and ``page_number`` (1-based), plus ``image`` with ``image_dpi``.

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
    with open_pdf(source, password=password) as document, PYMUPDF_LOCK, pdf_errors(name):
        selected = normalize_page_spec(pages, document.page_count)
        for index in range(document.page_count):
            if selected is not None and index not in selected:
                continue
            page = document[index]
            found = find_tables(page) if tables else []
            text = _page_text_with_tables(page, found, flags) if found else page.get_text("text", flags=flags)
            item: dict[str, Any] = {
                "content": text,
                "markdown": text,
                "tables": [_table_rows(table) for table in found],
                "page_number": index + 1,
            }
            if image_dpi is not None:
                item["image"] = render_page_png(page, image_dpi)
            result.append(item)
    return result
