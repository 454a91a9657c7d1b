"""Reading a born-digital PDF page's text layer into styled lines, in reading order (PyMuPDF ``dict`` output).

This module knows PyMuPDF; the heading, header/footer and list logic in ``pdf_text`` works on the plain
``Line`` records it produces, so it can be tested on any page.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..document.boxes import outer_box, union_rect
from ..tables import inverse, reading_matrix, turned_blocks, turned_box, turned_drawings
from ..tables.drawings import THIN_POINTS, VECTOR_FLAGS, page_paths, text_blocks

__all__ = ["Line", "PageLines", "lines_from_blocks", "read_page_lines", "turned_lines"]

# A text column is at least a fifth of the page wide; a column of figures beside its labels is narrower.
COLUMN_MIN_WIDTH = 0.2

# (TeX's Computer Modern and EC bold fonts say so only in their names' letters: CMBX10, CMB10, SFBX1000.)
_BOLD_FONT = re.compile(
    r"bold|black|heavy|semibold|demibold|[-.,](?:B|BI|Bd|BdIt)$|-Medi$|^(?:[A-Z]{6}\+)?(?:cmbx|cmb[0-9]|sfbx)",
    re.IGNORECASE,
)
_ITALIC_FONT = re.compile(r"italic|oblique|[-.,](?:I|BI|It|BdIt|BoldIt)$|(?:Regu|Medi)Ital$", re.IGNORECASE)
# A section number alone: "2.1.", "3 ".
_PLAIN_NUMBER = re.compile(r"^\s*[0-9]{1,2}(?:\.[0-9]{1,2})*\.?\s*$")
#: A line is italic when this share of its characters is.
ITALIC_SHARE = 0.85
# (A weight or style name run into "SC", "Caecilia-RomanSC", "Minion-SemiboldSC", names a small-capitals
# cut too; a family name run into it, "NotoSansSC", "PingFangSC", is Simplified Chinese.)
_SMALL_CAPS_FONT = re.compile(
    r"smallcaps|^(?:[A-Z]{6}\+)?cmcsc|[-_.]sc$|[-_.]sc[0-9]"
    r"|(?-i:(?:Roman|Regular|Book|Light|Medium|Semibold|SemiBold|Demi|Bold|Heavy|Black|Italic|It)SC$)",
    re.IGNORECASE,
)
_MONO_FONT = re.compile(
    r"courier|mono|consol|menlo|typewriter|^(?:[A-Z]{6}\+)?(?:cmtt|sftt)|sourcecode|firacode|codenew",
    re.IGNORECASE,
)


@dataclass
class Line:
    """One line of text with its dominant style."""

    text: str
    bbox: tuple[float, float, float, float]
    size: float  # dominant font size (by characters), rounded to 0.5 pt
    bold: bool  # every visible character is bold
    italic: bool
    block: int  # index of the text block (in reading order) this line belongs to
    chars: int = 0
    max_gap: float = 0.0  # widest horizontal gap between two pieces of text on the line (table cells)
    pieces: int = 1  # how many side-by-side pieces were joined into this line (cells, or "ITEM 1." + title)
    lead: str = ""  # the text of the first piece (in reading order: the rightmost one in right-to-left text)
    underlined: bool = False  # a drawn rule runs under the text (and not much beyond it)
    spaced: bool = False  # the text layer holds a run of spaces (columns aligned with space characters)
    max_size: float = 0.0  # the largest font size of its visible characters (small capitals' initials)
    mono: bool = False  # every visible character is in a monospaced font (code)
    small_caps: bool = False  # most visible characters are in a small-capitals font
    font: str = ""  # the font of most of its visible characters
    apart: bool = False  # set in another font than the document's running text (set by heading detection)
    # The line's opening up to the end of a bold run that plain text follows ("2.1. High-degree
    # centrality." of "2.1. **High-degree centrality.** In this method..."); empty when there is none.
    bold_lead: str = ""
    # Its first letter is set in a small-capitals font: drawn as a capital whatever its case in the text
    # layer ("l-asparaginase" in small capitals reads "L-asparaginase").
    capital_opening: bool = False

    @property
    def caps(self) -> bool:
        """Every letter is a capital (and there are cased letters)."""
        return self.text.isupper()


@dataclass
class PageLines:
    """A page's lines in reading order, with the page size.

    A page whose text runs up or down the sheet as stored and reads upright as shown (a landscape page
    stored portrait, turned by its ``/Rotate``) is read as shown: its lines, width and height are the
    shown page's, ``turn`` maps the page's own coordinates onto it, and :meth:`own_box` turns a box back
    into the page's own coordinates, where the index keeps every box.
    """

    index: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    turn: tuple[float, ...] | None = None
    own_width: float = 0.0  # the page's own size, when it is read turned
    own_height: float = 0.0

    @property
    def own_size(self) -> tuple[float, float]:
        """The page's width and height in its own coordinates."""
        return (self.own_width, self.own_height) if self.turn is not None else (self.width, self.height)

    def reading_box(self, box: tuple[float, ...]) -> tuple[float, float, float, float]:
        """A box of the page's own coordinates in the page as it is read."""
        return (box[0], box[1], box[2], box[3]) if self.turn is None else turned_box(box, self.turn)

    def own_box(self, rect: tuple[float, float, float, float]) -> tuple[int, int, int, int] | None:
        """A box of the page as it is read as the index keeps it: in the page's own coordinates, outward to
        whole points, within the page (``None`` when nothing of it is on the page)."""
        if self.turn is not None:
            rect = turned_box(rect, inverse(self.turn))
        return outer_box(rect, *self.own_size)

    @property
    def text_chars(self) -> int:
        return sum(line.chars for line in self.lines)


@functools.lru_cache(maxsize=512)
def _font_style(font: str) -> tuple[bool, bool, bool, bool]:
    """Whether a font's name says bold, italic, monospaced, and small capitals (a document uses a few
    fonts: read each once)."""
    return (
        _BOLD_FONT.search(font) is not None,
        _ITALIC_FONT.search(font) is not None,
        _MONO_FONT.search(font) is not None,
        _SMALL_CAPS_FONT.search(font) is not None,
    )


def _line_from_spans(spans: list[dict[str, Any]], block: int) -> Line | None:
    if len(spans) == 1:
        return _line_from_span(spans[0], block)
    text = "".join([span["text"] for span in spans])
    clean = " ".join(text.split())
    if not clean:
        return None
    weights: dict[float, int] = {}
    fonts: dict[str, int] = {}
    bold = mono = True
    italic_chars = small_caps_chars = 0
    x0 = y0 = float("inf")
    x1 = y1 = float("-inf")
    max_gap, right = 0.0, None
    capital_opening: bool | None = None  # settled by the first span with a letter
    for span in spans:
        visible = len(span["text"].strip())
        if not visible:
            continue
        bx0, by0, bx1, by1 = span["bbox"]
        if right is not None and bx0 - right > max_gap:
            max_gap = bx0 - right
        right = bx1
        size = round(span["size"] * 2) / 2
        weights[size] = weights.get(size, 0) + visible
        fonts[span["font"]] = fonts.get(span["font"], 0) + visible
        flags = span["flags"]
        named_bold, named_italic, named_mono, named_small_caps = _font_style(span["font"])
        bold = bold and bool(flags & 16 or named_bold)
        mono = mono and bool(flags & 8 or named_mono)
        if flags & 2 or named_italic:
            italic_chars += visible
        if named_small_caps:
            small_caps_chars += visible
        if capital_opening is None and any(char.isalpha() for char in span["text"]):
            capital_opening = named_small_caps
        if bx0 < x0:
            x0 = bx0
        if by0 < y0:
            y0 = by0
        if bx1 > x1:
            x1 = bx1
        if by1 > y1:
            y1 = by1
    size = max(weights, key=weights.__getitem__) if len(weights) > 1 else next(iter(weights))
    spaced = "  " in text.strip()
    lead = _bold_lead(spans) if not bold else ""
    chars = sum(weights.values())
    # Italic when nearly every character is: a ligature or a symbol in an upright font does not unmake it.
    italic = italic_chars >= ITALIC_SHARE * chars
    return Line(
        clean,
        (x0, y0, x1, y1),
        size,
        bold,
        italic,
        block,
        chars,
        max_gap,
        1,
        clean,
        spaced=spaced,
        max_size=max(weights),
        mono=mono,
        small_caps=small_caps_chars > chars / 2,
        font=max(fonts, key=fonts.__getitem__),
        bold_lead=lead,
        capital_opening=bool(capital_opening),
    )


def _bold_lead(spans: list[dict[str, Any]]) -> str:
    """The text of ``spans`` up to the end of their first bold run, when plain text follows it; the run
    may follow a section number set in the body's font ("2.1.")."""
    taken: list[str] = []
    seen_bold = False
    for span in spans:
        piece = span["text"]
        if not piece.strip():
            taken.append(piece)
            continue
        if span["flags"] & 16 or _font_style(span["font"])[0]:
            seen_bold = True
        elif seen_bold:
            return " ".join("".join(taken).split())  # plain text after the bold run
        elif any(earlier.strip() for earlier in taken) or _PLAIN_NUMBER.match(piece) is None:
            return ""  # the line does not open with its bold run
        taken.append(piece)
    return ""


def _line_from_span(span: dict[str, Any], block: int) -> Line | None:
    """:func:`_line_from_spans` of a line of one span (most lines)."""
    text = span["text"]
    clean = " ".join(text.split())
    if not clean:
        return None
    flags = span["flags"]
    named_bold, named_italic, named_mono, named_small_caps = _font_style(span["font"])
    size = round(span["size"] * 2) / 2
    return Line(
        clean,
        tuple(span["bbox"]),
        size,
        bool(flags & 16 or named_bold),
        bool(flags & 2 or named_italic),
        block,
        len(text.strip()),
        0.0,
        1,
        clean,
        spaced="  " in text.strip(),
        max_size=size,
        mono=bool(flags & 8 or named_mono),
        small_caps=named_small_caps,
        font=span["font"],
        capital_opening=named_small_caps,
    )


_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def _right_to_left(text: str) -> bool:
    """Whether most letters of ``text`` are of a right-to-left script (Hebrew, Arabic, Syriac, Thaana...)."""
    if _RTL.search(text) is None:
        return False  # the common case, found at C speed
    letters = sum(map(str.isalpha, text))
    return letters > 0 and len(_RTL.findall(text)) > letters / 2


def _join_side_by_side(first: Line, second: Line) -> Line:
    """One line from two pieces on the same baseline band ("ITEM 1." and "Business", or table cells).

    The pieces are put in reading order whatever order the PDF wrote them in: left to right, or right to
    left when the text is of a right-to-left script. Pieces that touch (a word cut into two runs) are
    joined without a space.
    """
    left, right = (first, second) if first.bbox[0] <= second.bbox[0] else (second, first)
    (lx0, ly0, lx1, ly1), (rx0, ry0, rx1, ry1) = left.bbox, right.bbox
    gap = rx0 - lx1 if rx0 > lx1 else 0.0
    ordered = (right, left) if _right_to_left(first.text + second.text) else (left, right)
    separator = "" if gap <= 0.5 else " "
    # The size of most characters (the left piece's on a tie).
    size = left.size if left.size == right.size or left.chars >= right.chars else right.size
    return Line(
        f"{ordered[0].text}{separator}{ordered[1].text}",
        (
            lx0 if lx0 < rx0 else rx0,
            ly0 if ly0 < ry0 else ry0,
            lx1 if lx1 > rx1 else rx1,
            ly1 if ly1 > ry1 else ry1,
        ),
        size,
        left.bold and right.bold,
        left.italic and right.italic,
        left.block,
        left.chars + right.chars,
        max(left.max_gap, right.max_gap, gap),
        left.pieces + right.pieces,
        ordered[0].lead,
        left.underlined and right.underlined,
        left.spaced or right.spaced,
        max(left.max_size, right.max_size),
        left.mono and right.mono,
        left.small_caps if left.chars >= right.chars else right.small_caps,
        left.font if left.chars >= right.chars else right.font,
        capital_opening=ordered[0].capital_opening,
    )


def _same_band(a: Line, b: Line) -> bool:
    """Whether ``b`` stands beside ``a`` (either side, not overlapping it) on the same baseline band."""
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    beside = b.bbox[0] >= a.bbox[2] - 1 or b.bbox[2] <= a.bbox[0] + 1
    return overlap > 0.5 * min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1]) and beside


def _column_order(blocks: list[dict[str, Any]], width: float) -> list[dict[str, Any]]:
    """Order text blocks for reading.

    A page without columns keeps the PDF's own order. On a page with columns, full-width blocks cut it
    into bands, and inside a band of two text columns the left column is read before the right one.
    """
    middle = width / 2
    gutter = width * 0.02

    def side(block: dict[str, Any]) -> str:
        x0, _, x1, _ = block["bbox"]
        if x1 <= middle + gutter:
            return "left"
        if x0 >= middle - gutter:
            return "right"
        return "full"

    def columns_of_text(band: list[dict[str, Any]]) -> bool:
        # Real columns hold running text: most of each side's characters sit in blocks at least a fifth of
        # the page wide. Statement rows (a label at the left, figures at the right) do not.
        for wanted in ("left", "right"):
            chars = wide = 0
            for block in band:
                if side(block) != wanted:
                    continue
                count = sum(len(span["text"]) for line in block.get("lines", []) for span in line["spans"])
                chars += count
                if block["bbox"][2] - block["bbox"][0] >= width * COLUMN_MIN_WIDTH:
                    wide += count
            if chars == 0 or wide < chars * 0.6:
                return False
        return True

    bands: list[list[dict[str, Any]]] = [[]]
    for block in sorted(blocks, key=lambda item: (item["bbox"][1], item["bbox"][0])):
        if side(block) == "full":
            bands.extend([[block], []])
        else:
            bands[-1].append(block)
    split = [len(band) > 1 and columns_of_text(band) for band in bands]
    if not any(split):
        return blocks  # one column: the PDF's own order is the best reading order
    ordered: list[dict[str, Any]] = []
    for band, columns in zip(bands, split, strict=True):
        if columns:
            ordered.extend(block for block in band if side(block) == "left")
            ordered.extend(block for block in band if side(block) == "right")
        else:
            ordered.extend(band)
    return ordered


def _split_at_gutter(block: dict[str, Any], width: float) -> list[dict[str, Any]]:
    """Split a block that holds two text columns (written row by row) into a left and a right block.

    MuPDF may join the two columns' pieces of a row into one line. The columns must be separated by a
    gutter in the middle of the page that no span crosses, and each side must hold running text (at
    least three lines, typically a fifth of the page wide or more), so that a row of figures beside its
    label is never taken for two columns.
    """
    lines = block.get("lines", [])
    if len(lines) < 3:
        return [block]
    # A span across the middle of the page (from left of its 30% to right of its 70%) leaves no gutter.
    low, high = width * 0.3, width * 0.7
    spans = []
    for line in lines:
        for span in line["spans"]:
            text = span["text"]
            if text and not text.isspace():
                x0, _, x1, _ = span["bbox"]
                if x0 < low and x1 > high:
                    return [block]
                spans.append((x0, x1))
    if not spans:
        return [block]
    spans.sort()
    gutter = None
    reach = spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= 8 and low <= (x0 + reach) / 2 <= high:
            gutter = (x0 + reach) / 2
            break
        reach = max(reach, x1)
    if gutter is None:
        return [block]
    sides: dict[str, list[tuple[dict[str, Any], list[dict[str, Any]]]]] = {"left": [], "right": []}
    for line in lines:
        left = [span for span in line["spans"] if span["bbox"][2] <= gutter]
        right = [span for span in line["spans"] if span["bbox"][0] >= gutter]
        for side, part in (("left", left), ("right", right)):
            if any(span["text"].strip() for span in part):
                sides[side].append((line, part))
    for side_parts in sides.values():
        # Each side holds running text: its lines' median width is a column's (the widths are measured
        # before any line is built).
        widths = sorted(
            max(span["bbox"][2] for span in part) - min(span["bbox"][0] for span in part)
            for _, part in side_parts
        )
        if len(side_parts) < 3 or widths[len(widths) // 2] < width * COLUMN_MIN_WIDTH:
            return [block]
    result = []
    for side_parts in sides.values():
        side_lines = [
            {**line, "spans": part, "bbox": union_rect(span["bbox"] for span in part)}
            for line, part in side_parts
        ]
        result.append({**block, "bbox": union_rect(line["bbox"] for line in side_lines), "lines": side_lines})
    return result


def _runs_on(previous: Line, line: Line) -> bool:
    """Whether ``line``, in a block of its own, goes on with the paragraph of ``previous``: same style and
    left edge, just below it, and ``previous`` fills the measure, ragged right allowed (widely spaced text
    that MuPDF cut into one block per line)."""
    gap = line.bbox[1] - previous.bbox[3]
    return (
        _same_style(previous, line)
        and abs(previous.bbox[0] - line.bbox[0]) <= 2
        and -1 <= gap <= 0.8 * line.size
        and previous.bbox[2] >= line.bbox[2] - 0.15 * (previous.bbox[2] - previous.bbox[0])
        and previous.pieces == line.pieces == 1
    )


def _same_style(a: Line, b: Line) -> bool:
    return a.size == b.size and a.bold == b.bold and a.italic == b.italic


def _restyled(previous: Line, line: Line) -> bool:
    """Whether ``line`` is set otherwise than the line before it: in another size, weight or slant."""
    return abs(line.size - previous.size) >= 1 or line.bold != previous.bold or line.italic != previous.italic


def _split_units(lines: list[Line]) -> list[Line]:
    """Renumber blocks so that each holds one unit: a paragraph, a title, a list item.

    MuPDF may put a whole page in one block. Inside a block, a unit ends where the space between two
    lines is clearly wider than the block's usual line spacing (a paragraph break), or where the size,
    weight or slant changes after a line that ends a sentence or has no words. Across blocks, a paragraph that
    MuPDF cut into one block per line is made one unit again (see :func:`_runs_on`).
    """
    gaps: dict[int, list[float]] = {}
    for previous, line in itertools.pairwise(lines):
        if previous.block == line.block:
            gaps.setdefault(line.block, []).append(line.bbox[1] - previous.bbox[3])
    usual = {block: sorted(values)[len(values) // 2] for block, values in gaps.items()}
    blocks = [line.block for line in lines]
    number = -1
    result: list[Line] = []
    for position, line in enumerate(lines):
        if position == 0:
            number += 1
        elif blocks[position - 1] != blocks[position]:
            if not _runs_on(lines[position - 1], line):
                number += 1
        else:
            previous = lines[position - 1]
            gap = line.bbox[1] - previous.bbox[3]
            restyled = _restyled(previous, line) and (
                previous.text.endswith((".", ":", "?", "!"))
                or not any(char.isalpha() for char in previous.text)
            )
            if gap > usual[blocks[position]] + max(2.0, 0.4 * min(line.size, previous.size)) or restyled:
                number += 1
        line.block = number
        result.append(line)
    return result


def _rules(drawings: list[dict[str, Any]]) -> list[tuple[float, float, float, float]]:
    """The page's thin horizontal rules (drawn lines and flat rectangles), as boxes."""
    found = []
    for path in drawings:
        x0, y0, x1, y1 = path["rect"]
        if y1 - y0 <= THIN_POINTS and x1 - x0 >= 4:
            found.append((x0, y0, x1, y1))
    return found


def _may_be_title(line: Line, lines: list[Line], position: int, units: Counter[int], body: float) -> bool:
    """A line worth checking for an underline: a unit of its own (up to three wrapped lines) in the page's
    body type, shaped like a title (short, mostly letters, opening with a capital or a figure, not ending
    like running text) and followed by a paragraph: what only an underline could make a heading."""
    text = line.text
    opens = position == 0 or lines[position - 1].block != line.block
    if not opens or units[line.block] > 3 or line.bold or line.pieces > 2 or len(text.split()) > 18:
        return False
    if line.size >= body * 1.15 or line.size >= body + 1 or line.caps:
        return False  # a cue of its own already
    if not (text[0].isupper() or text[0].isdigit()) or text.endswith((",", ";", ":")):
        return False
    after = position + units[line.block]
    if after >= len(lines) or not (
        units[lines[after].block] >= 2 or lines[after].bbox[2] - lines[after].bbox[0] > 200
    ):
        return False  # nothing like a paragraph follows
    letters = sum(map(str.isalpha, text))
    return letters >= 2 and letters >= 0.5 * len(text.replace(" ", ""))


def _mark_underlines(
    page: Any,
    lines: list[Line],
    drawings: Callable[[], list[dict[str, Any]]],
    turn: Sequence[float] | None = None,
) -> None:
    """Mark the lines a drawn rule underlines: the rule lies along the bottom of the text and covers most
    of its width without running far past it (a table's border or a page-wide divider is no underline).
    An underlined link is a link, not a title: lines inside a link's area are left alone. The page's
    drawings are read only when it has a line that could be an underlined title."""
    units = Counter(line.block for line in lines)
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += line.chars
    body = weights.most_common(1)[0][0] if weights else 10.0
    wanted = [
        line for position, line in enumerate(lines) if _may_be_title(line, lines, position, units, body)
    ]
    if not wanted:
        return
    rules = _rules(drawings())
    if not rules:
        return
    links: list[tuple[float, ...]] | None = None  # read once, when a line has an underline
    for line in wanted:
        x0, y0, x1, y1 = line.bbox
        width, height = x1 - x0, y1 - y0
        for rx0, ry0, rx1, ry1 in rules:
            middle = (ry0 + ry1) / 2
            if not y1 - 0.35 * height <= middle <= y1 + 0.3 * line.size:
                continue
            covered = min(x1, rx1) - max(x0, rx0)
            if covered >= 0.6 * width and rx1 - rx0 <= 1.3 * width + 12:
                if links is None:
                    links = _link_areas(page, turn)
                mx, my = (x0 + x1) / 2, (y0 + y1) / 2
                line.underlined = not any(a <= mx <= c and b <= my <= d for a, b, c, d in links)
                break


def _link_areas(page: Any, turn: Sequence[float] | None = None) -> list[tuple[float, ...]]:
    """The areas of a page's links, read from its link chain (``get_links`` would also resolve every named
    destination, reading the document's whole name tree for each page), where its lines are: in the
    page's own coordinates (PyMuPDF gives links in the page as shown), turned by ``turn`` when given."""
    unturn = tuple(page.derotation_matrix) if page.rotation else None
    areas = []
    link = page.first_link
    while link is not None:
        area: tuple[float, ...] = tuple(link.rect)
        if unturn is not None:
            area = turned_box(area, unturn)
        if turn is not None:
            area = turned_box(area, turn)
        areas.append(area)
        link = link.next
    return areas


def read_page_lines(
    page: Any,
    index: int,
    flags: int,
    *,
    textpage: Any = None,
    data: dict[str, Any] | None = None,
    drawings: Callable[[], list[dict[str, Any]]] | None = None,
) -> PageLines:
    """The text lines of a PyMuPDF page in reading order (call while holding ``PYMUPDF_LOCK``); from
    ``textpage`` or its ``dict`` text ``data`` (given with its ``textpage``: the page's size is read from
    it) when the caller has read the page's text already, and the page's drawings from ``drawings`` when
    the caller reads them for something else too (they are read only when needed: from the text's vector
    blocks when ``flags`` collect them, see :func:`~extract_thinker_pageindex.tables.drawings.page_paths`)."""
    if data is None:
        if textpage is None:
            textpage = page.get_textpage(flags=flags)
        data = page.get_text("dict", flags=flags, textpage=textpage)
    if drawings is None:
        drawings = (
            functools.partial(page_paths, page, data["blocks"], hidden=False)
            if (flags & VECTOR_FLAGS) == VECTOR_FLAGS
            else page.get_cdrawings
        )
    # PyMuPDF's dict gives a page of a /UserUnit (2 units a point, say) at its size in units, but every box
    # in points, as MuPDF scales the page: the text page's own size is in the boxes' points.
    own = textpage.rect if textpage is not None else None
    width, height = (own.width, own.height) if own is not None else (data["width"], data["height"])
    width, height = float(width), float(height)
    turn = reading_matrix(page, blocks=data["blocks"])
    if turn is None:
        result = lines_from_blocks(data["blocks"], index, width, height)
    else:
        result = turned_lines(data["blocks"], index, turn, width, height)
        drawings = functools.partial(_turned, drawings, turn)
    _mark_underlines(page, result.lines, drawings, turn)
    return result


def _turned(drawings: Callable[[], list[dict[str, Any]]], turn: Sequence[float]) -> list[dict[str, Any]]:
    return turned_drawings(drawings(), turn)


def turned_lines(
    blocks: list[dict[str, Any]], index: int, turn: Sequence[float], width: float, height: float
) -> PageLines:
    """:func:`lines_from_blocks` of a page read turned by ``turn`` (see :class:`PageLines`): ``blocks`` in
    the page's own coordinates, which are ``width`` x ``height`` points."""
    x0, y0, x1, y1 = turned_box((0.0, 0.0, width, height), turn)
    result = lines_from_blocks(turned_blocks(blocks, turn), index, x1 - x0, y1 - y0)
    result.turn, result.own_width, result.own_height = tuple(turn), width, height
    return result


def lines_from_blocks(blocks: list[dict[str, Any]], index: int, width: float, height: float) -> PageLines:
    """The lines of a page's ``dict`` blocks (a text layer's, or what OCR read) in reading order."""
    blocks = [part for block in text_blocks(blocks) for part in _split_at_gutter(block, width)]
    result = PageLines(index=index, width=width, height=height)
    lines: list[Line] = []
    for number, block in enumerate(_column_order(blocks, result.width)):
        for raw in block.get("lines", []):
            line = _line_from_spans(raw["spans"], number)
            if line is None:
                continue
            previous = lines[-1] if lines else None
            if previous is not None and previous.block == number and _same_band(previous, line):
                lines[-1] = _join_side_by_side(previous, line)
            else:
                lines.append(line)
    result.lines = _split_units(lines)
    return result
