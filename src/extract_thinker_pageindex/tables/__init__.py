"""Tables on a born-digital page, found without a model: ruled grids from the page's drawings, and tables
whose columns are aligned by whitespace from where its words stand.

:func:`find_page_tables` reads a PyMuPDF page; a page with no two rows of side-by-side pieces of text costs
one pass over its words and nothing more (its drawings are not read).

The PDF strategies, OCR and the PyMuPDF loader import it; it imports nothing else of the package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from .aligned import MIN_BODY_ROWS, aligned_tables, index_page
from .drawings import VECTOR_FLAGS, textpage_paths
from .grid import markdown_table
from .rows import Row, Word, page_rows, text_columns
from .ruled import grid_tables, may_hold_grid
from .table import PageTable

__all__ = [
    "PageTable",
    "find_page_tables",
    "inverse",
    "markdown_table",
    "reading_matrix",
    "tables_from_words",
    "turned_blocks",
    "turned_box",
    "turned_drawings",
]

# A caption names the table ("Table 3", "Exhibit 2.1", "Schedule II").
_CAPTION = re.compile(r"^(?i:table|exhibit|schedule|tab\.)\s+(\d[\w.-]*|[A-Z](?:\.\d+)*|[IVXLC]+)\b")
#: How many rows above or below a table a caption may stand.
CAPTION_ROWS = 3
#: How many short lines stacked above a table are read for its title, and how far apart (line heights).
STACK_ROWS = 5
STACK_GAP = 1.5
#: A caption line is at most this share of the table's width, and this many words.
CAPTION_WIDTH = 0.8
CAPTION_WORDS = 20


def find_page_tables(
    page: Any, *, textpage: Any = None, drawings: Callable[[], list[dict[str, Any]]] | None = None
) -> list[PageTable]:
    """The tables on a PyMuPDF page, top to bottom (call while holding ``PYMUPDF_LOCK``).

    Args:
        page: A ``pymupdf.Page``.
        textpage: The page's ``TextPage``, when the caller has one (it is made otherwise, with the boxes
            of the page's drawn shapes: :data:`~.drawings.VECTOR_FLAGS`).
        drawings: What gives the page's drawn lines (shaped as ``get_cdrawings()`` gives them, for
            example :func:`~.drawings.textpage_paths`), called only when the page may hold a table; by
            default read from the text page this function made, else by ``page.get_cdrawings()``.
    """
    if textpage is None:
        import pymupdf

        textpage = page.get_textpage(flags=pymupdf.TEXTFLAGS_WORDS | VECTOR_FLAGS)
        if drawings is None:
            made = textpage
            drawings = lambda: textpage_paths(page, made)  # noqa: E731
    words: list[Word] = [
        word[:5] for word in page.get_text("words", textpage=textpage) if not word[4].isspace()
    ]
    # A rotated page whose text is shown upright (a landscape table on a portrait sheet) is read as it is
    # shown: its words and rules turned, the tables' boxes turned back into the page's own coordinates.
    read = drawings or page.get_cdrawings
    turn = reading_matrix(page, textpage)
    if turn is not None:
        return _read_tables(words, read, turn, tuple(page.derotation_matrix), float(page.rect.width))
    tables = _read_tables(words, read, None, None, float(page.rect.width))
    # A page whose text is printed sideways (a table turned a quarter to fit the sheet) is read turned
    # upright too, and the reading whose tables hold more text is kept (a note printed up the margin
    # beside an upright table turns nothing).
    if _sideways(words):
        upright = _upright_matrix(page, textpage)
        if upright is not None:
            turned = _read_tables(words, read, upright, inverse(upright), float(page.cropbox.height))
            if _held(turned) > _held(tables):
                return turned
    return tables


def _held(tables: list[PageTable]) -> int:
    """How many characters the tables' cells hold."""
    return sum(len(cell) for table in tables for row in table.rows for cell in row)


def _read_tables(
    words: list[Word],
    drawings: Callable[[], list[dict[str, Any]]],
    turn: Sequence[float] | None,
    back: Sequence[float] | None,
    width: float,
) -> list[PageTable]:
    """The tables of a page's words and drawings, read turned by ``turn`` (their boxes turned back by
    ``back``) when it is given."""
    if turn is not None:
        words = [(*turned_box(word[:4], turn), word[4]) for word in words]
    rows = page_rows(words)
    if sum(1 for row in rows if len(row.segments) > 1) < 2:
        return []  # no two rows of side-by-side text: no table, and the drawings are never read
    shapes = drawings() if turn is None else turned_drawings(drawings(), turn)
    # Tables aligned by whitespace need two body rows (a figure after a row's first segment), grids two
    # rules down: a page with neither is passed over.
    if not may_hold_grid(shapes) and sum(1 for row in rows if _figure_after_label(row)) < MIN_BODY_ROWS:
        return []
    tables = tables_from_words(words, rows, shapes, width=width)
    if back is not None:
        for table in tables:
            table.bbox = turned_box(table.bbox, back)
    return tables


def _figure_after_label(row: Row) -> bool:
    """A figure after the row's first segment: what every body row of an aligned table holds, however
    the row is cut into a page's two text columns."""
    segments = row.segments
    return len(segments) > 1 and any(segment.figure for segment in segments[1:])


#: A page's text is printed sideways when more of its words of three characters or more stand at least
#: this many times taller than wide than lie as wide, and at least :data:`SIDEWAYS_WORDS` of them do.
SIDEWAYS_SHAPE = 1.5
SIDEWAYS_WORDS = 6


def _sideways(words: list[Word]) -> bool:
    """Whether most of the page's longer words stand on end (a table turned a quarter to fit the sheet)."""
    tall = wide = 0
    for x0, y0, x1, y1, text in words:
        if len(text) >= 3:
            if y1 - y0 >= SIDEWAYS_SHAPE * (x1 - x0):
                tall += 1
            elif x1 - x0 >= SIDEWAYS_SHAPE * (y1 - y0):
                wide += 1
    return tall >= SIDEWAYS_WORDS and tall > wide


def _upright_matrix(page: Any, textpage: Any) -> tuple[float, ...] | None:
    """The matrix that turns a page whose text runs up or down the sheet (in the page's own coordinates,
    whatever its ``/Rotate``) so that it runs left to right (the page's width becomes its height), or
    ``None`` when its lines do not run that way."""
    _dx, dy = _text_direction(page.get_text("dict", textpage=textpage)["blocks"])
    width, height = float(page.cropbox.width), float(page.cropbox.height)  # as stored, before /Rotate
    if dy < 0:  # reads bottom to top: turned a quarter clockwise, (x, y) -> (height - y, x)
        return (0.0, 1.0, -1.0, 0.0, height, 0.0)
    if dy > 0:  # reads top to bottom: (x, y) -> (y, width - x)
        return (0.0, -1.0, 1.0, 0.0, 0.0, width)
    return None


def _text_direction(blocks: list[dict[str, Any]]) -> tuple[float, float]:
    """The way a page's text runs in its own coordinates: its lines' directions weighted by their
    characters."""
    dx = dy = 0.0
    for block in blocks:
        for line in block.get("lines", ()):
            weight = sum(len(span["text"]) for span in line["spans"])
            dx += line["dir"][0] * weight
            dy += line["dir"][1] * weight
    return dx, dy


def inverse(matrix: Sequence[float]) -> tuple[float, ...]:
    """The inverse of an affine matrix ``(a, b, c, d, e, f)``."""
    a, b, c, d, e, f = matrix
    det = a * d - b * c
    return (d / det, -b / det, -c / det, a / det, (c * f - d * e) / det, (b * e - a * f) / det)


def reading_matrix(
    page: Any, textpage: Any = None, *, blocks: list[dict[str, Any]] | None = None
) -> tuple[float, ...] | None:
    """The matrix that shows a rotated page's text upright (its rotation matrix), or ``None`` when the page
    is not rotated or its text already runs left to right in the page's own coordinates (a page turned
    for viewing: its text reads sideways when shown, upright as stored). ``blocks``: the page's ``dict``
    blocks, when the caller has read them (else they are read, on a rotated page only)."""
    if not page.rotation:
        return None
    matrix = tuple(page.rotation_matrix)
    if blocks is None:
        blocks = page.get_text("dict", textpage=textpage)["blocks"]
    dx, dy = _text_direction(blocks)
    length = (dx * dx + dy * dy) ** 0.5
    if not length:
        return None
    a, c = matrix[0], matrix[2]
    turned_x = (a * dx + c * dy) / length  # the text's direction as shown: 1 when it runs left to right
    return matrix if turned_x > 0.7 and dx / length < 0.7 else None


def _point(x: float, y: float, matrix: Sequence[float]) -> tuple[float, float]:
    a, b, c, d, e, f = matrix
    return a * x + c * y + e, b * x + d * y + f


def turned_box(box: Sequence[float], matrix: Sequence[float]) -> tuple[float, float, float, float]:
    """A box through a matrix (a quarter turn keeps it a box)."""
    corners = [_point(x, y, matrix) for x in (box[0], box[2]) for y in (box[1], box[3])]
    xs, ys = [x for x, _ in corners], [y for _, y in corners]
    return min(xs), min(ys), max(xs), max(ys)


def turned_blocks(blocks: list[dict[str, Any]], matrix: Sequence[float]) -> list[dict[str, Any]]:
    """``dict`` blocks (text, picture and shape blocks; PyMuPDF's or OCR's) through a matrix of quarter
    turns, as new blocks: their boxes, their lines' boxes and directions, their spans' boxes and origins."""
    a, b, c, d, e, f = matrix

    def point(x: float, y: float) -> tuple[float, float]:
        return a * x + c * y + e, b * x + d * y + f

    turned = []
    for block in blocks:
        block = {**block, "bbox": turned_box(block["bbox"], matrix)}
        if "lines" in block:
            lines = []
            for line in block["lines"]:
                spans = [
                    {**span, "bbox": turned_box(span["bbox"], matrix), "origin": point(*span["origin"])}
                    if "origin" in span
                    else {**span, "bbox": turned_box(span["bbox"], matrix)}
                    for span in line["spans"]
                ]
                turned_line = {**line, "bbox": turned_box(line["bbox"], matrix), "spans": spans}
                if "dir" in line:
                    dx, dy = line["dir"]
                    turned_line["dir"] = (a * dx + c * dy, b * dx + d * dy)
                lines.append(turned_line)
            block["lines"] = lines
        turned.append(block)
    return turned


def turned_drawings(drawings: list[dict[str, Any]], matrix: Sequence[float]) -> list[dict[str, Any]]:
    """The lines and rectangles of a page's drawings through a matrix (what the ruled finder reads)."""
    turned = []
    for path in drawings:
        items = []
        for item in path.get("items", ()):
            if item[0] == "l":
                (x0, y0), (x1, y1) = item[1][:2], item[2][:2]
                items.append(("l", _point(x0, y0, matrix), _point(x1, y1, matrix)))
            elif item[0] == "re":
                items.append(("re", turned_box(item[1][:4], matrix), *item[2:]))
        turned.append({**path, "items": items, "rect": turned_box(path["rect"][:4], matrix)})
    return turned


def tables_from_words(
    words: list[Word], rows: list[Row], drawings: list[dict[str, Any]], *, width: float
) -> list[PageTable]:
    """The tables of a page from its words, their rows and its drawings: ruled grids first, then the
    aligned tables among the rows outside them, each text column of the page apart; each with its
    caption."""
    grids = grid_tables(drawings, words)

    def in_grid(row: Row) -> bool:
        middle = (row.y0 + row.y1) / 2
        return any(
            table.bbox[1] <= middle <= table.bbox[3] and row.x0 < table.bbox[2] and row.x1 > table.bbox[0]
            for table in grids
        )

    free = [row for row in rows if not in_grid(row)]
    # An index's columns of entries and page numbers line up row after row, but hold no table.
    parts = [] if index_page(free) else text_columns(free, width)
    tables = grids + [table for part in parts for table in aligned_tables(part)]
    tables.sort(key=lambda table: (table.bbox[1], table.bbox[0]))
    for table in tables:
        table.caption = _caption(table, rows, tables)
    return tables


def _caption(table: PageTable, rows: list[Row], tables: list[PageTable]) -> str | None:
    """The caption printed with the table, or ``None``: a line naming it ("Table 3: …") just above or
    below; else the nearest short line centred over it; else, of the short lines stacked just above it
    flush with its left edge (a statement's title, its company, its period, its unit), the first two."""
    x0, y0, x1, y1 = table.bbox
    middle = (x0 + x1) / 2

    def free(row: Row) -> bool:
        centre = (row.y0 + row.y1) / 2
        return (
            len(row.segments) == 1
            and row.x1 - row.x0 <= CAPTION_WIDTH * (x1 - x0)  # a paragraph's line runs the table's width
            and len(row.text.split()) <= CAPTION_WORDS
            and not any(other.bbox[1] <= centre <= other.bbox[3] for other in tables)
        )

    above = [row for row in rows if row.y1 <= y0 + 0.5][-CAPTION_ROWS:][::-1]
    below = [row for row in rows if row.y0 >= y1 - 0.5][:CAPTION_ROWS]
    for row in above + below:
        if free(row) and _CAPTION.match(row.text):
            return row.text
    for row in above:
        if not free(row):
            break
        if abs((row.x0 + row.x1) / 2 - middle) <= 0.05 * (x1 - x0):
            return row.text
    stack: list[Row] = []
    top = y0
    for row in [row for row in rows if row.y1 <= y0 + 0.5][::-1][:STACK_ROWS]:
        if not free(row) or top - row.y1 > STACK_GAP * row.height or abs(row.x0 - x0) > 3:
            break
        stack.append(row)
        top = row.y0
    # A statement's title and the line under it (its company, or the title under the company's name).
    return " — ".join(row.text for row in stack[::-1][:2]) if stack else None
