"""A PDF's pages as page dicts (text in reading order, optional tables, text regions and images), read with
PyMuPDF.

``DocumentLoaderPyMuPDF`` returns what :func:`read_pdf_pages` reads; the command line's ``search`` calls it
directly, so that it never imports ExtractThinker (whose ``DocumentLoader`` the loader subclasses).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from io import BytesIO
from typing import Any

from ..errors import PageIndexWarning
from ..inputs.pages import PageSpec, normalize_page_spec
from ..ocr.settings import OcrSettings
from ..pdf.images import render_page_png
from ..pdf.opening import (
    PYMUPDF_LOCK,
    PdfSource,
    describe_source,
    fewer_collections,
    load_pymupdf,
    open_pdf,
    pdf_errors,
    read_pdf_bytes,
)
from ..tables import PageTable, find_page_tables, reading_matrix, turned_box
from ..tables.drawings import VECTOR_FLAGS, text_blocks, textpage_paths

__all__ = ["read_pdf_pages"]


def _text_flags() -> int:
    pymupdf = load_pymupdf()

    # Ligatures ("ﬁ", "ﬂ") become their letters: "definitions" is found where a PDF drew "deﬁnitions".
    # The drawn shapes' boxes come with the text, for the table finder's rules (the text is the same).
    return int((pymupdf.TEXTFLAGS_TEXT | VECTOR_FLAGS) & ~pymupdf.TEXT_PRESERVE_LIGATURES)


def _outside(lines: list[dict[str, Any]], boxes: Sequence[Sequence[float]]) -> list[dict[str, Any]]:
    """The ``dict`` lines whose middle is in none of ``boxes`` (the tables' lines are the tables')."""

    def inside(box: Sequence[float]) -> bool:
        x = (box[0] + box[2]) / 2
        y = (box[1] + box[3]) / 2
        return any(x0 <= x <= x1 and y0 <= y <= y1 for x0, y0, x1, y1 in boxes)

    return [line for line in lines if not inside(line["bbox"])]


def _page_text_with_tables(page: Any, tables: list[PageTable], textpage: Any) -> str:
    """Page text in reading order with each table's lines replaced by the table as Markdown (on a rotated
    page whose text is shown upright, in the order it is shown)."""
    boxes = [table.bbox for table in tables]
    blocks = text_blocks(page.get_text("dict", textpage=textpage)["blocks"])
    turn = reading_matrix(page, blocks=blocks)

    def place(box: Sequence[float]) -> tuple[float, float]:
        x0, y0 = (box[0], box[1]) if turn is None else turned_box(box, turn)[:2]
        return y0, x0

    pieces: list[tuple[float, float, str]] = []
    for block in blocks:
        kept = _outside(block["lines"], boxes) if block.get("type", 0) == 0 else []
        if kept:
            text = "\n".join("".join(span["text"] for span in line["spans"]) for line in kept)
            pieces.append((*place(kept[0]["bbox"]), text.strip()))
    for table in tables:
        pieces.append((*place(table.bbox), table.markdown()))
    return _in_reading_order(pieces)


def _page_frame(page: Any) -> tuple[Any, float, float]:
    """What maps a box of the page's own (unrotated) points onto the drawn page: the rotation matrix, and
    the drawn page's width and height."""
    from ..pdf.images import page_turn

    return page_turn(page)[0], float(page.rect.width), float(page.rect.height)


def _region(
    text: str, box: Sequence[float], page_number: int, frame: tuple[Any, float, float]
) -> dict[str, Any]:
    """A ``regions`` entry in the shape of ExtractThinker's ``DocumentRegion``: ``text``, ``bounding_box``
    (``page``, 1-based, and ``x0``..``y1`` as fractions of the drawn page, its ``/Rotate`` applied, from
    the top-left corner) and ``confidence`` (``None``: neither a text layer nor this package's OCR gives
    one)."""
    pymupdf = load_pymupdf()

    matrix, width, height = frame
    drawn = pymupdf.Rect(box[:4]) * matrix

    def fraction(value: float, size: float) -> float:
        return min(1.0, max(0.0, float(value) / size)) if size > 0 else 0.0

    return {
        "text": text,
        "bounding_box": {
            "page": page_number,
            "x0": fraction(drawn.x0, width),
            "y0": fraction(drawn.y0, height),
            "x1": fraction(drawn.x1, width),
            "y1": fraction(drawn.y1, height),
        },
        "confidence": None,
    }


def _text_layer_regions(page: Any, page_number: int, flags: int) -> list[dict[str, Any]]:
    """One region per text block of the page's text layer (pictures skipped), in reading order."""
    frame = _page_frame(page)
    return [
        _region(block[4].rstrip("\n"), block[:4], page_number, frame)
        for block in page.get_text("blocks", flags=flags & ~VECTOR_FLAGS, sort=True)
        if block[6] == 0  # type 0 = text block
    ]


def _ocr_regions(
    blocks: list[dict[str, Any]], page_number: int, frame: tuple[Any, float, float]
) -> list[dict[str, Any]]:
    """One region per block OCR read, in its order (the order of the page's ``content``)."""
    from ..ocr.engines import plain_text

    return [
        _region(plain_text([block]).rstrip("\n"), block["bbox"], page_number, frame)
        for block in blocks
        if block.get("type", 0) == 0 and "lines" in block
    ]


def _in_reading_order(pieces: list[tuple[float, float, str]]) -> str:
    """``(top, left, text)`` pieces of a page, top to bottom then left to right, a blank line apart."""
    pieces.sort(key=lambda piece: (round(piece[0], 1), piece[1]))
    return "\n\n".join(text for _, _, text in pieces if text)


def read_pdf_pages(
    source: PdfSource,
    *,
    pages: PageSpec | None = None,
    password: str | None = None,
    tables: bool = True,
    regions: bool = False,
    image_dpi: int | None = None,
    image_max_side: int | None = None,
    ocr: OcrSettings | None = None,
) -> list[dict[str, Any]]:
    """Read a PDF's pages as page dicts.

    Args:
        source: A path, bytes or BytesIO.
        pages: Only these 1-based pages (``5``, ``(3, 7)``, ``[(1, 3), 5]`` or ``"1-3,5"``).
        password: Password of an encrypted PDF.
        tables: Find tables (ruled grids, and columns aligned by whitespace: see :mod:`..tables`), render
            each as Markdown in place of its lines, and list their rows under ``tables``.
        regions: Add ``regions``: the page's text blocks (from OCR on a page read by OCR), each with its
            box as fractions of the drawn page, in the shape of ExtractThinker's ``DocumentRegion``.
        image_dpi: When set, add each page rendered as PNG bytes at this resolution under ``image``.
        image_max_side: With ``image_dpi``, draw no image wider or taller than this many pixels.
        ocr: How pages without a usable text layer are read (``None``: the defaults, ``ocr="auto"``).

    Returns:
        One dict per selected page, in page order: ``content`` and ``markdown`` (the page text),
        ``tables`` (row lists), ``page_number`` (1-based) and ``text_source`` (``"text_layer"``, or
        ``"ocr"`` for a page read by OCR), plus ``regions`` with ``regions`` and ``image`` with
        ``image_dpi``.

    Raises:
        DocumentLoadError: the file is missing, not a PDF, corrupt, or encrypted without the password.
        EmptyDocumentError: the PDF has no pages.
        PageSpecError: ``pages`` does not fit the document.
        OcrError: ``ocr="always"`` (or an engine named) and the engine or language data is missing.

    Warns:
        PageIndexWarning: pages need OCR and no engine is installed (``ocr="auto"``), or OCR failed on a page.
    """
    settings = ocr if ocr is not None else OcrSettings()
    if settings.mode == "always":
        from ..ocr.settings import require_engine

        require_engine(settings)
    if isinstance(source, BytesIO):
        source.seek(0)
    result: list[dict[str, Any]] = []
    flags = _text_flags()
    name = describe_source(source)
    data = read_pdf_bytes(source, name)  # once: OCR workers open these same bytes
    with (
        fewer_collections(),
        open_pdf(data, password=password, name=name) as document,
        PYMUPDF_LOCK,
        pdf_errors(name),
    ):
        selected = normalize_page_spec(pages, document.page_count)
        for index in range(document.page_count):
            if selected is not None and index not in selected:
                continue
            page = document[index]
            textpage = page.get_textpage(flags=flags)
            drawings = functools.partial(textpage_paths, page, textpage)
            found = find_page_tables(page, textpage=textpage, drawings=drawings) if tables else []
            if found:
                text = _page_text_with_tables(page, found, textpage)
            else:
                text = page.get_text("text", textpage=textpage)
            item: dict[str, Any] = {
                "content": text,
                "markdown": text,
                "tables": [table.rows for table in found],
                "page_number": index + 1,
                "text_source": "text_layer",
            }
            if regions:
                item["regions"] = _text_layer_regions(page, index + 1, flags)
            if image_dpi is not None:
                item["image"] = render_page_png(page, image_dpi, image_max_side)
            result.append(item)
        if settings.enabled:
            from ..ocr.detect import needs_ocr

            wanted = [
                item
                for item in result
                if needs_ocr(document[item["page_number"] - 1], item["content"], settings.mode)
            ]
            if wanted:
                _ocr_items(document, data, password, wanted, settings, name, regions=regions)
    return result


def _ocr_items(
    document: Any,
    data: bytes,
    password: str | None,
    items: list[dict[str, Any]],
    settings: OcrSettings,
    name: str,
    *,
    regions: bool = False,
) -> None:
    """Replace the text of the page dicts ``items`` with what OCR reads on their pages, each ruled table
    as Markdown in place of its cells' lines and its rows under ``tables`` (the engine finds them in the
    page image at no cost worth a switch, so ``tables=False`` does not turn them off), and with
    ``regions``, their regions with OCR's blocks."""
    from ..ocr.engines import plain_text
    from ..ocr.pool import OcrOutcome, ocr_pages, warn_failures
    from ..ocr.settings import engine_problem, install_hint

    numbers = ", ".join(str(item["page_number"]) for item in items)
    problem = engine_problem(settings)
    if problem is not None:
        warnings.warn(
            f"Page(s) {numbers} of {name} have no usable text layer (scanned or pictures only) and were "
            f"not OCR'd: {problem}. Install it: {install_hint(settings)}; or pass ocr='never' to keep "
            "them empty without this warning.",
            PageIndexWarning,
            stacklevel=4,
        )
        return
    by_index = {item["page_number"] - 1: item for item in items}
    frames = {index: _page_frame(document[index]) for index in by_index}
    failed: list[OcrOutcome] = []

    def done(outcome: OcrOutcome) -> None:
        item = by_index[outcome.index]
        if outcome.blocks is None:
            failed.append(outcome)
            return
        found = outcome.tables
        if found:
            text = _ocr_text_with_tables(outcome.blocks, found, frames[outcome.index][0])
        else:
            text = plain_text(outcome.blocks)
        item.update(content=text, markdown=text, tables=[table["rows"] for table in found], text_source="ocr")
        if regions:
            item["regions"] = _ocr_regions(outcome.blocks, item["page_number"], frames[outcome.index])

    ocr_pages(document, data, sorted(by_index), settings, done, password=password)
    warn_failures(failed, name, stacklevel=4)


def _ocr_text_with_tables(blocks: list[dict[str, Any]], tables: list[dict[str, Any]], turn: Any) -> str:
    """OCR'd text in reading order with each ruled table's lines replaced by the table as Markdown, as
    :func:`_page_text_with_tables` does for a text layer. The boxes are in the page's own points; ``turn``
    maps them onto the page as shown, where the order is read."""
    from ..ocr.engines import plain_text
    from ..tables import turned_box
    from ..tables.grid import markdown_table

    def top_left(box: Any) -> tuple[float, float]:
        x0, y0, _, _ = turned_box(box, tuple(turn))
        return y0, x0

    boxes = [table["bbox"] for table in tables]
    pieces: list[tuple[float, float, str]] = []
    for block in blocks:
        kept = _outside(block["lines"], boxes)
        if kept:
            pieces.append((*top_left(kept[0]["bbox"]), plain_text([{"lines": kept}]).strip()))
    for table in tables:
        pieces.append((*top_left(table["bbox"]), markdown_table(table["rows"])))
    return _in_reading_order(pieces)
