"""A page's drawn lines and rectangles, read with its text.

Reading a page's drawings (``page.get_cdrawings()``) runs its content again and costs about as much as
reading its text. A text page made with :data:`VECTOR_FLAGS` holds a box for each drawn shape beside the
text, for almost nothing more; :func:`page_paths` turns those boxes into the paths the rule finders read
(shaped as ``get_cdrawings()`` gives them), and reads the drawings only on a page where a box hides its
shape's geometry (a thick stroked rectangle), for the paths that meet it. :func:`text_blocks` gives such
a text page's blocks as they are without the shapes.
"""

from __future__ import annotations

from typing import Any

from .grid import bin_of

__all__ = [
    "THIN_POINTS",
    "VECTOR_FLAGS",
    "page_paths",
    "shape_paths",
    "stroked_paths",
    "text_blocks",
    "textpage_paths",
]

#: PyMuPDF's ``TEXT_COLLECT_VECTORS | TEXT_LAZY_VECTORS``: the text page holds a box for each drawn shape,
#: and a shape drawn amid a line of text never splits it (its text and words are those of a text page
#: made without them; its blocks split after a shape, which :func:`text_blocks` undoes).
VECTOR_FLAGS = 1024 | 1048576
# Stroked paths are compared with the boxes of the bands of this many points they reach (see
# :func:`stroked_paths`).
_BAND = 32.0
#: A drawn shape at most this thick (points) is a line.
THIN_POINTS = 2.5
# MuPDF's own paragraph rule (stext-device.c), which :func:`text_blocks` replays: a line whose baseline
# lies more than PARAGRAPH_DIST font sizes off the previous text's starts a paragraph; one more than
# BASE_MAX_DIST off and indented past the previous line's start does too, unless that line opens with
# a figure or a bullet.
_PARAGRAPH_DIST = 1.5
_BASE_MAX_DIST = 0.8
_INDENT_POINTS = 0.5
_BULLET_RANGES = (
    (0x2A, 0x2A), (0x30, 0x39), (0xB7, 0xB7), (0x2022, 0x2023), (0x2043, 0x2043), (0x204C, 0x204D),
    (0x2219, 0x2219), (0x25C9, 0x25C9), (0x25CB, 0x25CB), (0x25CF, 0x25CF), (0x25D8, 0x25D8),
    (0x25E6, 0x25E6), (0x2619, 0x261F), (0x2660, 0x2667), (0x2765, 0x2765), (0x2767, 0x2767),
    (0x29BE, 0x29BF), (0xFFFD, 0xFFFD), (0x1F446, 0x1F449), (0x1F597, 0x1F5A3), (0x1FBC1, 0x1FBC3),
)  # fmt: skip


def page_paths(page: Any, blocks: list[dict[str, Any]], *, hidden: bool = True) -> list[dict[str, Any]]:
    """The page's drawn lines, as ``page.get_cdrawings()`` gives them, from the vector blocks of a text page
    read with ``TEXT_COLLECT_VECTORS`` (see :func:`shape_paths`), with the drawn stroked paths that meet a
    thick stroked rectangle (``hidden=False``: without them)."""
    paths, boxes = shape_paths(blocks)
    return paths + stroked_paths(page, boxes) if hidden and boxes else paths


def shape_paths(
    blocks: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[tuple[float, float, float, float]]]:
    """The drawn lines of a text page read with ``TEXT_COLLECT_VECTORS``, as ``page.get_cdrawings()`` gives
    them (each a path with its ``rect`` and its ``items``), from its vector blocks, which cost almost
    nothing beside the text where reading the drawings costs as much as the text itself; and the boxes of
    its thick stroked rectangles, whose shapes their boxes hide.

    A vector block holds one shape's box and colour. A filled shape at most :data:`THIN_POINTS` thick is
    a bar; a thicker filled rectangle is shading, given only in the colour of a bar (what tells a sliver
    of shading from a rule, see :func:`~.ruled.page_rules`). A stroked shape that thin is a line along its
    length: its box runs half its thickness past the line's ends, so the line is drawn back by that much.
    A thicker shape that is no rectangle (a curve, a polygon: a chart's, a map's) is no rule, and an
    invisible shape is left out. A thicker stroked rectangle may be a cell's border or a thick line (its
    box is widened by its stroke and mitre): its box is given apart, for :func:`stroked_paths`.
    """
    paths: list[dict[str, Any]] = []
    shading: list[tuple[int, tuple[float, float, float, float]]] = []
    boxes: list[tuple[float, float, float, float]] = []  # stroked rectangles that hide their shape
    fills: dict[int, tuple[float, ...]] = {}  # the colours of bars, as get_cdrawings() gives them: 0-1 RGB
    for block in blocks:
        if block.get("type") != 3:
            continue
        x0, y0, x1, y1 = box = block["bbox"]
        stroked = block["stroked"]
        thickness = min(x1 - x0, y1 - y0)
        if not block["alpha"]:
            continue
        if thickness > THIN_POINTS:
            if not block["isrect"]:
                continue  # a curve, a polygon: a chart's, a map's, a picture's, no rule
            if stroked:
                boxes.append(box)
            else:
                shading.append((block["color"], box))
            continue
        if not stroked:
            colour = block["color"]
            fill = fills.get(colour)
            if fill is None:
                fill = fills[colour] = (
                    (colour >> 16 & 255) / 255,
                    (colour >> 8 & 255) / 255,
                    (colour & 255) / 255,
                )
            paths.append({"type": "f", "rect": box, "fill": fill, "items": [("re", box, 1)]})
            continue
        inset = thickness / 2
        x0, y0, x1, y1 = x0 + inset, y0 + inset, x1 - inset, y1 - inset
        if x1 - x0 >= y1 - y0:
            middle = (y0 + y1) / 2
            item = ("l", (x0, middle), (x1, middle))
        else:
            middle = (x0 + x1) / 2
            item = ("l", (middle, y0), (middle, y1))
        paths.append({"type": "s", "rect": (x0, y0, x1, y1), "items": [item]})
    paths.extend(
        {"type": "f", "rect": box, "fill": fills[colour], "items": [("re", box, 1)]}
        for colour, box in shading
        if colour in fills
    )
    return paths, boxes


def stroked_paths(page: Any, boxes: list[tuple[float, float, float, float]]) -> list[dict[str, Any]]:
    """The page's drawn stroked paths (``get_cdrawings()``) that meet one of ``boxes``, visible ones."""
    # The boxes are filed by the bands of _BAND points they reach down the page: a path is compared with
    # the boxes of its own bands only (a page of tens of thousands of strokes meets few of them).
    bands: dict[int, list[tuple[float, float, float, float]]] = {}
    for box in boxes:
        for band in range(bin_of(box[1], _BAND), bin_of(box[3], _BAND) + 1):
            bands.setdefault(band, []).append(box)
    found = []
    for path in page.get_cdrawings():
        if "s" not in (path.get("type") or "") or path.get("stroke_opacity", 1) == 0:
            continue
        x0, y0, x1, y1 = path["rect"]
        if any(
            x0 <= b2 and b0 <= x1 and y0 <= b3 and b1 <= y1
            for band in range(bin_of(y0, _BAND), bin_of(y1, _BAND) + 1)
            for b0, b1, b2, b3 in bands.get(band, ())
        ):
            found.append(path)
    return found


def textpage_paths(page: Any, textpage: Any) -> list[dict[str, Any]]:
    """:func:`page_paths` of a text page made with :data:`VECTOR_FLAGS`."""
    return page_paths(page, page.get_text("dict", textpage=textpage)["blocks"])


def _bullet(char: str) -> bool:
    code = ord(char) if char else 0
    return any(low <= code <= high for low, high in _BULLET_RANGES)


def _new_paragraph(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """Whether MuPDF starts a new block for ``after``'s first line when ``before``'s last line is the
    text just read (see :data:`_PARAGRAPH_DIST`)."""
    last, first = before["lines"][-1], after["lines"][0]
    (dx, dy), (ex, ey) = last["dir"], first["dir"]
    if last.get("wmode", 0) != first.get("wmode", 0) or dx * ex + dy * ey < 0.999:
        return True
    if not last["spans"] or not first["spans"]:
        return True
    ox, oy = last["spans"][-1]["origin"]
    px, py = first["spans"][0]["origin"]
    size = first["spans"][0]["size"] or 1.0
    offset = abs(ex * (py - oy) - ey * (px - ox)) / size
    if offset < _BASE_MAX_DIST:
        return False
    if offset > _PARAGRAPH_DIST:
        return True
    if first.get("wmode", 0):
        return False  # MuPDF tests the indent of horizontal writing only
    start = last["spans"][0]
    if abs(ey) < 0.001:
        # Horizontal either way: MuPDF compares the x of the first glyph drawn on each line, its edge
        # against the writing direction (whatever order right-to-left text is given in).
        px, sx = (first["bbox"][0], last["bbox"][0]) if ex > 0 else (first["bbox"][2], last["bbox"][2])
    else:
        sx = start["origin"][0]
    return px - sx > _INDENT_POINTS and not _bullet(start["text"][:1])


def text_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text blocks of a page's ``dict``, as MuPDF makes them without collecting drawn shapes.

    Collecting shapes (``TEXT_COLLECT_VECTORS`` with ``TEXT_LAZY_VECTORS``: lines are never split) closes
    the text block at the next line after a shape was drawn; without them that line goes on in the same
    block unless it starts a paragraph by MuPDF's rule, which is replayed here. A page's blocks are its
    paragraphs for the heading and list rules, so they must not depend on whether shapes were read."""
    joined: list[dict[str, Any]] = []
    after_shape = False
    for block in blocks:
        kind = block.get("type", 0)
        if kind == 3:
            after_shape = True
            continue
        if kind != 0:
            after_shape = False
            continue
        if after_shape and joined and block.get("lines") and not _new_paragraph(joined[-1], block):
            last = joined[-1]
            (a0, b0, a1, b1), (c0, d0, c1, d1) = last["bbox"], block["bbox"]
            box = (min(a0, c0), min(b0, d0), max(a1, c1), max(b1, d1))
            joined[-1] = {**last, "bbox": box, "lines": [*last["lines"], *block["lines"]]}
        elif block.get("lines"):
            joined.append(block)
        after_shape = False
    return joined
