"""Ruled tables on a scanned page: the grid of printed rules, found in the page's pixels, and the OCR'd
words of each cell.

A rule is a run of dark pixels at least 0.3 inch long and at most 2.5 pt thick, across (horizontal) or
down (vertical) the page: text and light shading make no such run, and a dark picture is too thick. Rules
that cross or touch form a grid; a grid of at least two horizontal and three vertical rules is a table,
its rows and columns the spaces between them. A frame of one column (round the page, a text box, a boxed
list) is not.
Tables ruled only across (no column rules) are not found.

The rules are also painted out of the image before the engine reads it: Tesseract takes a boxed region for
a picture and leaves the words inside a ruled table unread, and reads them once the rules are gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Grid", "Rule", "cell_rows", "erase_rules", "find_grids", "grid_on_page", "markdown_table"]

#: Pixels darker than this (of 255) are ink.
INK = 160
#: A rule is at least this long (the column rule of a table of one row of 11 pt text is about as long).
MIN_RULE_INCHES = 0.3
#: A rule is at most this thick, in points (a heavy rule is 2 pt; a picture is far thicker).
MAX_RULE_POINTS = 2.5
#: Rules this close (in points) at their ends still meet: rules drawn by hand or scanned stop short.
MEET_POINTS = 4.0
#: Words of one cell whose tops are this close (in points) are on one line.
LINE_POINTS = 3.0


@dataclass
class Rule:
    """A straight rule in pixels: ``at`` across its direction (its middle), from ``start`` to ``end``
    along it, and how many pixels thick it is."""

    horizontal: bool
    at: float
    start: int
    end: int
    first: int  # the first and last row (column for a vertical rule) of its pixels
    last: int

    @property
    def thickness(self) -> int:
        return self.last - self.first + 1


@dataclass
class Grid:
    """A ruled table in pixels: its box, and the positions of its row and column rules, in order."""

    box: tuple[float, float, float, float]
    rows: list[float] = field(default_factory=list)  # y of each horizontal rule
    columns: list[float] = field(default_factory=list)  # x of each vertical rule
    rules: list[Rule] = field(default_factory=list)


def _runs(ink: Any, min_length: int) -> list[tuple[int, int, int]]:
    """``(row, start, end)`` of every run of ink at least ``min_length`` pixels along each row (end
    exclusive)."""
    import numpy

    height = ink.shape[0]
    padded = numpy.zeros((height, ink.shape[1] + 2), dtype=numpy.int8)
    padded[:, 1:-1] = ink
    steps = numpy.diff(padded, axis=1)
    start_rows, starts = numpy.nonzero(steps == 1)
    _, ends = numpy.nonzero(steps == -1)  # row-major order pairs each start with its end
    keep = (ends - starts) >= min_length
    return list(zip(start_rows[keep].tolist(), starts[keep].tolist(), ends[keep].tolist(), strict=True))


def _rules(ink: Any, horizontal: bool, min_length: int, max_thickness: int) -> list[Rule]:
    """The rules of one direction: runs on neighbouring rows that overlap along most of their length are
    one rule; one thicker than ``max_thickness`` is a dark area, not a rule."""
    runs = _runs(ink if horizontal else ink.T, min_length)
    open_rules: list[Rule] = []
    done: list[Rule] = []
    for row, start, end in runs:  # row order
        home = None
        for rule in open_rules:
            overlap = min(end, rule.end) - max(start, rule.start)
            if rule.last >= row - 1 and overlap >= 0.5 * min(end - start, rule.end - rule.start):
                home = rule
                break
        if home is None:
            open_rules.append(Rule(horizontal, row, start, end, row, row))
        else:
            home.start, home.end = min(home.start, start), max(home.end, end)
            home.last = row
        still: list[Rule] = []
        for rule in open_rules:
            (still if rule.last >= row - 1 else done).append(rule)
        open_rules = still
    done.extend(open_rules)
    result = []
    for rule in done:
        if rule.thickness <= max_thickness:
            rule.at = (rule.first + rule.last) / 2
            result.append(rule)
    return result


def _meets(across: Rule, down: Rule, slack: float) -> bool:
    return (
        across.start - slack <= down.at <= across.end + slack
        and down.start - slack <= across.at <= down.end + slack
    )


def _positions(values: list[float], slack: float) -> list[float]:
    """Sorted positions with those within ``slack`` of each other merged (double rules, a rule's two
    halves)."""
    merged: list[list[float]] = []
    for value in sorted(values):
        if merged and value - merged[-1][-1] <= slack:
            merged[-1].append(value)
        else:
            merged.append([value])
    return [sum(group) / len(group) for group in merged]


def find_grids(gray: Any, dpi: float) -> list[Grid]:
    """The ruled tables of a page image.

    Args:
        gray: The page as a 2-D ``uint8`` array (0 black, 255 white).
        dpi: The image's resolution (pixels per inch).
    """
    import numpy

    ink = numpy.asarray(gray) < INK
    per_point = dpi / 72
    slack = MEET_POINTS * per_point
    thick = max(2, round(MAX_RULE_POINTS * per_point))

    shortest = max(8, round(MIN_RULE_INCHES * dpi))
    across = _rules(ink, True, shortest, thick)
    down = _rules(ink, False, shortest, thick)
    if len(across) < 2 or len(down) < 2:
        return []
    # Rules that meet are one grid: union-find over the crossings.
    rules = across + down
    parent = list(range(len(rules)))

    def root(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for a, rule_a in enumerate(across):
        for d, rule_d in enumerate(down, start=len(across)):
            if _meets(rule_a, rule_d, slack):
                parent[root(a)] = root(d)
    groups: dict[int, list[Rule]] = {}
    for number, rule in enumerate(rules):
        groups.setdefault(root(number), []).append(rule)
    grids = []
    for members in groups.values():
        rows = _positions([rule.at for rule in members if rule.horizontal], slack)
        columns = _positions([rule.at for rule in members if not rule.horizontal], slack)
        if len(rows) < 2 or len(columns) < 3:
            continue  # a lone rule, an underline touching one, a frame, a boxed list: one column at most
        x0 = min(min(rule.start for rule in members if rule.horizontal), columns[0])
        x1 = max(max(rule.end for rule in members if rule.horizontal), columns[-1])
        y0 = min(min(rule.start for rule in members if not rule.horizontal), rows[0])
        y1 = max(max(rule.end for rule in members if not rule.horizontal), rows[-1])
        grids.append(Grid((float(x0), float(y0), float(x1), float(y1)), rows, columns, members))
    grids.sort(key=lambda grid: (grid.box[1], grid.box[0]))
    return grids


def erase_rules(pixels: Any, grids: list[Grid]) -> None:
    """Paint the rules of ``grids`` white in a ``(height, width[, channels])`` ``uint8`` array, with a
    pixel of margin (a scanned rule's edge is grey)."""
    height, width = pixels.shape[:2]
    for grid in grids:
        for rule in grid.rules:
            low, high = max(0, rule.first - 1), rule.last + 2
            start, end = max(0, rule.start - 1), rule.end + 1
            if rule.horizontal:
                pixels[low : min(high, height), start : min(end, width)] = 255
            else:
                pixels[start : min(end, height), low : min(high, width)] = 255


def cell_rows(
    words: list[tuple[float, float, float, float, str]], rows: list[float], columns: list[float]
) -> list[list[str]]:
    """The text of each cell between the rules (in the words' coordinates): every word goes to the cell
    its middle is in, cells read top to bottom, then left to right."""
    from bisect import bisect_right

    table = [["" for _ in range(len(columns) - 1)] for _ in range(len(rows) - 1)]
    placed: dict[tuple[int, int], list[tuple[float, float, str]]] = {}
    for x0, y0, x1, y1, text in words:
        x, y = (x0 + x1) / 2, (y0 + y1) / 2
        row, column = bisect_right(rows, y) - 1, bisect_right(columns, x) - 1
        if 0 <= row < len(rows) - 1 and 0 <= column < len(columns) - 1:
            placed.setdefault((row, column), []).append((round(y0), x0, text))
    for (row, column), cell in placed.items():
        lines: list[list[tuple[float, float, str]]] = []
        for item in sorted(cell):
            if lines and item[0] - lines[-1][0][0] <= LINE_POINTS:
                lines[-1].append(item)
            else:
                lines.append([item])
        table[row][column] = " ".join(
            text for line in lines for _, _, text in sorted(line, key=lambda word: word[1])
        )
    return [row for row in table if any(row)]


def grid_on_page(grid: Grid, matrix: Any) -> Grid:
    """A grid found in a page image, in the page's own coordinates: its rules' ends mapped through
    ``matrix`` (pixels to points, and the page's rotation undone), so that rows and columns are those of
    the page as its text is (a page turned by ``/Rotate`` has the image's rows as its columns)."""
    import pymupdf

    mapped = []
    for rule in grid.rules:
        if rule.horizontal:
            ends = (pymupdf.Point(rule.start, rule.at), pymupdf.Point(rule.end, rule.at))
        else:
            ends = (pymupdf.Point(rule.at, rule.start), pymupdf.Point(rule.at, rule.end))
        a, b = (point * matrix for point in ends)
        horizontal = abs(b.x - a.x) >= abs(b.y - a.y)
        at = (a.y + b.y) / 2 if horizontal else (a.x + b.x) / 2
        low, high = sorted((a.x, b.x) if horizontal else (a.y, b.y))
        mapped.append(Rule(horizontal, at, int(low), int(high) + 1, 0, 0))
    corners = [pymupdf.Point(x, y) * matrix for x in grid.box[0::2] for y in grid.box[1::2]]
    box = (
        min(point.x for point in corners),
        min(point.y for point in corners),
        max(point.x for point in corners),
        max(point.y for point in corners),
    )
    rows = _positions([rule.at for rule in mapped if rule.horizontal], MEET_POINTS)
    columns = _positions([rule.at for rule in mapped if not rule.horizontal], MEET_POINTS)
    return Grid(box, rows, columns, mapped)


def markdown_table(rows: list[list[str]]) -> str:
    """Rows as a Markdown table, the first row its header (``|`` in a cell escaped)."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    cells = [[cell.replace("|", "\\|") for cell in row] + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    return "\n".join(lines)
