"""Reading a born-digital PDF page's text layer into styled lines, in reading order (PyMuPDF ``dict`` output).

This module knows PyMuPDF; the heading, header/footer and list logic in ``pdf_text`` works on the plain
``Line`` records it produces, so it can be tested on any page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Line", "PageLines", "read_page_lines"]

# A text column is at least a fifth of the page wide; a column of figures beside its labels is narrower.
COLUMN_MIN_WIDTH = 0.2

_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demibold", re.IGNORECASE)
_ITALIC_FONT = re.compile(r"italic|oblique", re.IGNORECASE)


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
    lead: str = ""  # the text of the first piece

    @property
    def caps(self) -> bool:
        letters = [char for char in self.text if char.isalpha()]
        return len(letters) >= 2 and all(char.isupper() for char in letters)


@dataclass
class PageLines:
    """A page's lines in reading order, with the page size."""

    index: int
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)

    @property
    def text_chars(self) -> int:
        return sum(line.chars for line in self.lines)


def _line_from_spans(spans: list[dict[str, Any]], block: int) -> Line | None:
    text = "".join(span["text"] for span in spans)
    clean = " ".join(text.split())
    if not clean:
        return None
    weights: dict[float, int] = {}
    bold = italic = True
    x0 = y0 = float("inf")
    x1 = y1 = float("-inf")
    max_gap, right = 0.0, None
    for span in spans:
        visible = len(span["text"].strip())
        if not visible:
            continue
        if right is not None:
            max_gap = max(max_gap, span["bbox"][0] - right)
        right = span["bbox"][2]
        size = round(span["size"] * 2) / 2
        weights[size] = weights.get(size, 0) + visible
        flags = span["flags"]
        bold = bold and bool(flags & 16 or _BOLD_FONT.search(span["font"]))
        italic = italic and bool(flags & 2 or _ITALIC_FONT.search(span["font"]))
        bx0, by0, bx1, by1 = span["bbox"]
        x0, y0, x1, y1 = min(x0, bx0), min(y0, by0), max(x1, bx1), max(y1, by1)
    size = max(weights, key=lambda item: weights[item])
    return Line(clean, (x0, y0, x1, y1), size, bold, italic, block, sum(weights.values()), max_gap, 1, clean)


def _join_side_by_side(left: Line, right: Line) -> Line:
    """One line from two pieces on the same baseline band ("ITEM 1." and "Business", or table cells)."""
    weights = {left.size: left.chars}
    weights[right.size] = weights.get(right.size, 0) + right.chars
    return Line(
        text=f"{left.text} {right.text}",
        bbox=(
            min(left.bbox[0], right.bbox[0]),
            min(left.bbox[1], right.bbox[1]),
            max(left.bbox[2], right.bbox[2]),
            max(left.bbox[3], right.bbox[3]),
        ),
        size=max(weights, key=lambda item: weights[item]),
        bold=left.bold and right.bold,
        italic=left.italic and right.italic,
        block=left.block,
        chars=left.chars + right.chars,
        max_gap=max(left.max_gap, right.max_gap, right.bbox[0] - left.bbox[2]),
        pieces=left.pieces + right.pieces,
        lead=left.lead,
    )


def _same_band(a: Line, b: Line) -> bool:
    overlap = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    return overlap > 0.5 * min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1]) and b.bbox[0] >= a.bbox[2] - 1


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
    spans = sorted(
        (span["bbox"][0], span["bbox"][2]) for line in lines for span in line["spans"] if span["text"].strip()
    )
    if not spans:
        return [block]
    gutter = None
    reach = spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= 8 and width * 0.3 <= (x0 + reach) / 2 <= width * 0.7:
            gutter = (x0 + reach) / 2
            break
        reach = max(reach, x1)
    if gutter is None:
        return [block]
    sides: dict[str, list[dict[str, Any]]] = {"left": [], "right": []}
    for line in lines:
        for side, keep in (
            ("left", lambda span: span["bbox"][2] <= gutter),
            ("right", lambda span: span["bbox"][0] >= gutter),
        ):
            part = [span for span in line["spans"] if keep(span)]
            if any(span["text"].strip() for span in part):
                box = (
                    min(span["bbox"][0] for span in part),
                    min(span["bbox"][1] for span in part),
                    max(span["bbox"][2] for span in part),
                    max(span["bbox"][3] for span in part),
                )
                sides[side].append({**line, "spans": part, "bbox": box})
    for side_lines in sides.values():
        widths = sorted(line["bbox"][2] - line["bbox"][0] for line in side_lines)
        if len(side_lines) < 3 or widths[len(widths) // 2] < width * COLUMN_MIN_WIDTH:
            return [block]
    result = []
    for side_lines in sides.values():
        box = (
            min(line["bbox"][0] for line in side_lines),
            min(line["bbox"][1] for line in side_lines),
            max(line["bbox"][2] for line in side_lines),
            max(line["bbox"][3] for line in side_lines),
        )
        result.append({**block, "bbox": box, "lines": side_lines})
    return result


def read_page_lines(page: Any, index: int, flags: int) -> PageLines:
    """The text lines of a PyMuPDF page in reading order (call while holding ``PYMUPDF_LOCK``)."""
    data = page.get_text("dict", flags=flags)
    width = float(data["width"])
    blocks = [
        part
        for block in data["blocks"]
        if block.get("type", 0) == 0
        for part in _split_at_gutter(block, width)
    ]
    result = PageLines(index=index, width=width, height=float(data["height"]))
    for number, block in enumerate(_column_order(blocks, result.width)):
        for raw in block.get("lines", []):
            line = _line_from_spans(raw["spans"], number)
            if line is None:
                continue
            previous = result.lines[-1] if result.lines else None
            if previous is not None and previous.block == number and _same_band(previous, line):
                result.lines[-1] = _join_side_by_side(previous, line)
            else:
                result.lines.append(line)
    return result
