"""The OCR engines. Each reads one PyMuPDF page and answers its text as PyMuPDF's ``dict`` layout would
(blocks of lines of spans, boxes in page points), so an OCR'd page is read by the same rules as a text layer.

- **Tesseract**: the page is drawn in RGB at the OCR resolution and read by tesserocr where it is
  installed (the ``[ocr]`` extra; its wheels carry a Tesseract built for the CPU's vector instructions, half
  the CPU time of MuPDF's own build on the same words): Tesseract's paragraphs become blocks and its text
  lines lines. Without tesserocr, the Tesseract inside MuPDF (``Pixmap.pdfocr_tobytes``) reads the page
  into a one-page PDF with an invisible text layer, whose words are mapped back onto the page and gathered
  into lines and blocks by MuPDF.
- **RapidOCR** (PaddleOCR's models on onnxruntime): text lines as boxes; lines are gathered into blocks
  here (the next line starts within 0.8 of a line height below, overlaps it across, and is of like height).

A line's font size is told from its ink height and the letters it holds (:func:`font_size`), so lines of one
size agree and headings are told from the body by size, as on a text layer. Nothing is bold or
italic. A page that draws nothing (one colour) is not given to the engine.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ..errors import OcrError
from ..pdf.images import page_turn
from ..tables import turned_blocks, turned_box
from .settings import OcrSettings

__all__ = ["MAX_OCR_PIXELS", "MAX_OCR_SIDE", "OcrRead", "plain_text", "read_page"]

#: Pages are drawn for OCR at most this large (a poster-size page at 300 dpi would be 30,000 pixels wide).
MAX_OCR_SIDE = 7000
MAX_OCR_PIXELS = 40_000_000


def _pixmap(page: Any, dpi: int) -> Any:
    import pymupdf

    from ..pdf.images import fit_scale

    rect = page.rect
    zoom = fit_scale(
        rect.width, rect.height, dpi / 72, max_side=MAX_OCR_SIDE, max_pixels=MAX_OCR_PIXELS, rounding=1.0
    )
    return page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)


def draws_nothing(page: Any) -> bool:
    """Whether a page is one colour: drawn small and in grey, every pixel alike (PyMuPDF's own
    ``Pixmap.is_unicolor`` takes 20 s on a page drawn at 300 dpi)."""
    import pymupdf

    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(0.5, 0.5), colorspace=pymupdf.csGRAY, alpha=False)
    samples = pixmap.samples
    return not samples or samples == samples[:1] * len(samples)


def _span(text: str, bbox: tuple[float, ...], size: float) -> dict[str, Any]:
    return {"text": text, "bbox": bbox, "size": size, "flags": 0, "font": "OCR"}


_ASCENDING = frozenset("bdfhiklt" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + "0123456789" + "!?%&#$@/\\")
_DESCENDING = frozenset("gjpqy,;")
_BOTH = frozenset("()[]{}|")
# The share of the font size that a line's ink spans, by which letters it holds (Latin text faces: cap
# height and ascenders about 0.72 of the size, x-height 0.52, descenders 0.21).
_INK_SHARE = {(True, True): 0.93, (True, False): 0.72, (False, True): 0.73, (False, False): 0.52}


def font_size(text: str, ink_height: float) -> float:
    """The font size a line of ``text`` whose ink is ``ink_height`` tall was set in, rounded to 0.5 pt.

    OCR measures the ink, and "Notices" is shorter than "Company" at one size (no descender): the height
    is divided by the share of the size that the line's letters span, so lines of one size agree."""
    up = any(char in _ASCENDING or char in _BOTH for char in text)
    down = any(char in _DESCENDING or char in _BOTH for char in text)
    return round(ink_height / _INK_SHARE[(up, down)] * 2) / 2


def _even_sizes(blocks: list[dict[str, Any]], *, sideways: bool = False) -> list[dict[str, Any]]:
    """Each line's spans at the line's font size (see :func:`font_size`); only the keys the layout reader
    uses are kept. ``sideways``: the blocks are in the page's own points and the page is shown turned a
    quarter (``/Rotate`` 90 or 270), so a line's ink runs up the page: its height is the box's width."""
    result = []
    for block in blocks:
        if block.get("type", 0) != 0:
            continue
        lines = []
        for line in block.get("lines", []):
            spans = [span for span in line.get("spans", []) if span.get("text")]
            text = "".join(span["text"] for span in spans)
            if not text.strip():
                continue
            box = tuple(line["bbox"])
            size = font_size(text, box[2] - box[0] if sideways else box[3] - box[1])
            lines.append(
                {"bbox": box, "spans": [_span(span["text"], tuple(span["bbox"]), size) for span in spans]}
            )
        if lines:
            result.append({"type": 0, "bbox": tuple(block["bbox"]), "lines": lines})
    return result


@dataclass
class OcrRead:
    """What the engine read on a page, in page points: PyMuPDF ``dict`` blocks, and the ruled tables as
    ``{"bbox": (x0, y0, x1, y1), "rows": [[cell, ...], ...]}``."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)


def _gray(pixmap: Any) -> Any:
    import numpy

    rgb = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(pixmap.height, pixmap.width, 3)
    # Ink in any colour is dark in its darkest channel (two minimums: a quarter of ``min(axis=2)``'s time).
    return numpy.minimum(numpy.minimum(rgb[:, :, 0], rgb[:, :, 1]), rgb[:, :, 2])


def _to_page(page: Any, pixmap: Any) -> Any:
    """The matrix from the pixmap's pixels to the page's own (unrotated) points."""
    import pymupdf

    zoom = pixmap.width / page.rect.width
    return pymupdf.Matrix(1 / zoom, 1 / zoom) * page_turn(page)[1]


Word = tuple[float, float, float, float, str]


def _tables(grids: list[Any], page: Any, pixmap: Any, words: list[Word]) -> list[Any]:
    """The ruled tables of the grids found in ``pixmap``, their cells filled with ``words``, both in the
    points of the page as shown: rows and columns are those of the page as it is read, as on a text layer.
    Only each table's box is turned back into the page's own points (on a page turned by ``/Rotate``)."""
    import pymupdf

    from ..tables.grid import cell_rows
    from .tables import grid_on_page

    zoom = pixmap.width / page.rect.width
    to_shown = pymupdf.Matrix(1 / zoom, 1 / zoom)
    unturn = tuple(page_turn(page)[1])
    tables = []
    for grid in grids:
        placed = grid_on_page(grid, to_shown)
        rows = cell_rows(words, placed.rows, placed.columns)
        if rows:
            box = turned_box(placed.box, unturn) if page.rotation else placed.box
            tables.append({"bbox": box, "rows": rows})
    return tables


def _tesseract(page: Any, settings: OcrSettings) -> OcrRead:
    import numpy
    import pymupdf

    from .settings import tesseract_reader
    from .tables import erase_rules, find_grids
    from .tessdata import find_tessdata

    folder = find_tessdata(settings.languages)
    if folder is None:  # checked before any page is read; the data went away since
        raise OcrError(f"Tesseract's language data for {'+'.join(settings.languages)} is not installed.")
    if draws_nothing(page):
        return OcrRead()
    pixmap = _pixmap(page, settings.dpi)
    to_page = _to_page(page, pixmap)
    grids = find_grids(_gray(pixmap), 72 * pixmap.width / page.rect.width)
    if grids:
        # Tesseract leaves the words of a ruled table unread (it takes the boxed region for a picture):
        # it reads the page with the rules painted out.
        pixels = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(pixmap.height, pixmap.width, 3)
        pixels = pixels.copy()
        erase_rules(pixels, grids)
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap.width, pixmap.height, pixels.tobytes(), 0)
    languages = "+".join(settings.languages)
    if tesseract_reader() == "tesserocr":
        dpi = round(72 * pixmap.width / page.rect.width)
        blocks, words = _read_tesserocr(pixmap, dpi, str(folder), languages, to_page)
    else:
        blocks, words = _read_mupdf_tesseract(page, pixmap, str(folder), languages, want_words=bool(grids))
    if page.rotation and grids:  # the words into the page as shown, where tables are read
        turn = tuple(page_turn(page)[0])
        words = [(*turned_box(word[:4], turn), word[4]) for word in words]
    sideways = page.rotation % 180 == 90
    return OcrRead(_even_sizes(blocks, sideways=sideways), _tables(grids, page, pixmap, words))


def _read_mupdf_tesseract(
    page: Any, pixmap: Any, folder: str, languages: str, *, want_words: bool
) -> tuple[list[dict[str, Any]], list[Word]]:
    """The page read by the Tesseract inside MuPDF: into a one-page PDF with an invisible text layer,
    whose words are mapped back onto the page (lines and blocks as MuPDF gathers them)."""
    import pymupdf

    data = pixmap.pdfocr_tobytes(compress=False, language=languages, tessdata=folder)
    with pymupdf.open("pdf", data) as ocr_pdf:
        ocr_page = ocr_pdf[0]
        unzoom = page.rect.width / ocr_page.rect.width
        matrix = pymupdf.Matrix(unzoom, unzoom) * page_turn(page)[1]
        textpage = ocr_page.get_textpage(flags=0, matrix=matrix)
        layout = ocr_page.get_text("dict", textpage=textpage)
        words = (
            [tuple(word[:5]) for word in ocr_page.get_text("words", textpage=textpage)] if want_words else []
        )
    return layout.get("blocks", []), words


@functools.lru_cache(maxsize=2)
def _tesserocr_api(folder: str, languages: str) -> Any:
    import os

    import tesserocr

    # One API a process (the model loads once); automatic page segmentation, as Tesseract's own default.
    return tesserocr.PyTessBaseAPI(path=os.path.join(folder, ""), lang=languages)


#: A gap between two words of one Tesseract text line wider than this many line heights splits the line,
#: as MuPDF splits a text layer's line: a heading beside its text, or the cells of a table row.
WIDE_GAP = 1.5


def _read_tesserocr(
    pixmap: Any, dpi: int, folder: str, languages: str, to_page: Any
) -> tuple[list[dict[str, Any]], list[Word]]:
    """The page read by tesserocr's Tesseract: its paragraphs as blocks, its text lines as lines (so a
    two-column page's lines stay in their column; split at a gap wider than :data:`WIDE_GAP` line
    heights), one span a word; boxes are the words' ink."""
    import pymupdf
    from tesserocr import RIL, iterate_level

    api = _tesserocr_api(folder, languages)
    samples = pixmap.samples  # Tesseract reads this buffer without copying it: it lives until Clear()
    paragraphs: list[list[list[Word]]] = []
    try:
        api.SetImageBytes(samples, pixmap.width, pixmap.height, pixmap.n, pixmap.stride)
        api.SetSourceResolution(dpi)
        api.Recognize()
        iterator = api.GetIterator()
        if iterator is not None:
            for item in iterate_level(iterator, RIL.WORD):
                if item.IsAtBeginningOf(RIL.PARA) or not paragraphs:
                    paragraphs.append([])
                if item.IsAtBeginningOf(RIL.TEXTLINE) or not paragraphs[-1]:
                    paragraphs[-1].append([])
                try:
                    text = (item.GetUTF8Text(RIL.WORD) or "").strip()
                except RuntimeError:  # "No text returned": a page Tesseract found nothing on
                    continue
                box = item.BoundingBox(RIL.WORD) if text else None
                if box:
                    rect = pymupdf.Rect(box) * to_page
                    paragraphs[-1][-1].append((rect.x0, rect.y0, rect.x1, rect.y1, text))
    finally:
        api.Clear()
    blocks = []
    for lines in paragraphs:
        block_lines = [_line(piece) for line in lines for piece in _split_wide(line)]
        if block_lines:
            blocks.append(
                {"type": 0, "bbox": _union([line["bbox"] for line in block_lines]), "lines": block_lines}
            )
    return blocks, [word for lines in paragraphs for line in lines for word in line]


def _union(boxes: list[Any]) -> tuple[float, float, float, float]:
    return (
        min(box[0] for box in boxes),
        min(box[1] for box in boxes),
        max(box[2] for box in boxes),
        max(box[3] for box in boxes),
    )


def _split_wide(words: list[Word]) -> list[list[Word]]:
    """A text line's words in pieces, split where the gap between two words is wide (:data:`WIDE_GAP`)."""
    if not words:
        return []
    height = _union(list(words))
    limit = WIDE_GAP * (height[3] - height[1])
    pieces = [[words[0]]]
    for word in words[1:]:
        if word[0] - pieces[-1][-1][2] > limit:
            pieces.append([])
        pieces[-1].append(word)
    return pieces


def _line(words: list[Word]) -> dict[str, Any]:
    spans = [{"text": word[4] + " ", "bbox": word[:4]} for word in words]
    spans[-1]["text"] = words[-1][4]
    return {"bbox": _union(list(words)), "spans": spans}


@functools.lru_cache(maxsize=2)
def _rapid_engine(threads: int) -> Any:
    import logging

    from rapidocr import RapidOCR

    engine = RapidOCR(
        params={
            "Global.log_level": "error",
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        }
    )
    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return engine


def _group_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text lines (top to bottom) gathered into blocks: paragraphs for the reading-order rules."""
    blocks: list[dict[str, Any]] = []
    for line in sorted(lines, key=lambda item: (item["bbox"][1], item["bbox"][0])):
        x0, y0, x1, y1 = line["bbox"]
        height = y1 - y0
        home = None
        for block in reversed(blocks[-6:]):
            last = block["lines"][-1]["bbox"]
            last_height = last[3] - last[1]
            gap = y0 - last[3]
            overlap = min(x1, last[2]) - max(x0, last[0])
            alike = 0.75 <= height / max(last_height, 0.1) <= 1.33
            if -0.3 * height <= gap <= 0.8 * max(height, last_height) and overlap > 0 and alike:
                home = block
                break
        if home is None:
            blocks.append({"type": 0, "bbox": line["bbox"], "lines": [line]})
        else:
            home["lines"].append(line)
            bx0, by0, bx1, by1 = home["bbox"]
            home["bbox"] = (min(bx0, x0), min(by0, y0), max(bx1, x1), max(by1, y1))
    blocks.sort(key=lambda block: (block["bbox"][1], block["bbox"][0]))
    return blocks


def _rapidocr(page: Any, settings: OcrSettings, threads: int) -> OcrRead:
    import numpy

    from .tables import find_grids

    if draws_nothing(page):
        return OcrRead()
    pixmap = _pixmap(page, settings.dpi)
    image = numpy.frombuffer(pixmap.samples, dtype=numpy.uint8).reshape(pixmap.height, pixmap.width, 3)
    zoom_x = pixmap.width / page.rect.width
    zoom_y = pixmap.height / page.rect.height
    # RapidOCR finds text lines between the rules by itself: they are left in the image.
    grids = find_grids(_gray(pixmap), 72 * zoom_x)
    answer = _rapid_engine(threads)(image)
    if answer.boxes is None or answer.txts is None:
        return OcrRead()
    lines = []
    for polygon, text in zip(answer.boxes, answer.txts, strict=False):
        clean = " ".join(str(text).split())
        if not clean:
            continue
        xs = [float(point[0]) / zoom_x for point in polygon]
        ys = [float(point[1]) / zoom_y for point in polygon]
        box = (min(xs), min(ys), max(xs), max(ys))
        size = font_size(clean, box[3] - box[1])
        lines.append({"bbox": box, "spans": [_span(clean, box, size)]})
    # RapidOCR's lines are in the drawn page (page.rect), where tables are read; the text layer's are
    # unrotated.
    words = [(*line["bbox"], line["spans"][0]["text"]) for line in lines]
    blocks = _group_lines(lines)
    if page.rotation:
        blocks = turned_blocks(blocks, tuple(page_turn(page)[1]))
    return OcrRead(blocks, _tables(grids, page, pixmap, words))


def read_page(page: Any, settings: OcrSettings, *, threads: int = 1) -> OcrRead:
    """What the engine reads on a PyMuPDF page: its text as ``dict`` blocks and its ruled tables, in page
    points (in this process: hold ``PYMUPDF_LOCK`` when other threads may use PyMuPDF).

    Raises:
        OcrError: the engine cannot run, or failed on the page.
    """
    try:
        if settings.engine == "rapidocr":
            return _rapidocr(page, settings, threads)
        return _tesseract(page, settings)
    except OcrError:
        raise
    except Exception as exc:  # an engine's own failure on one page: the caller decides what it costs
        raise OcrError(f"{settings.engine} failed on page {page.number + 1}: {exc}") from exc


def plain_text(blocks: list[dict[str, Any]]) -> str:
    """The blocks as text the way PyMuPDF's ``"text"`` output gives a page: one line per line."""
    lines = []
    for block in blocks:
        for line in block["lines"]:
            text = " ".join("".join(span["text"] for span in line["spans"]).split())
            if text:
                lines.append(text)
    return "\n".join(lines) + ("\n" if lines else "")
