"""Ruled grids: printed rules that cross into rows and columns, whether read from a page image's pixels
(OCR) or from a PDF's vector drawings, and the words of each cell between them.

Rules that cross or touch form a grid; a grid of at least two horizontal and three vertical rules is a
table, its rows and columns the spaces between them (and the space beyond the outermost rule down to where
two rules across or more end, for a table drawn without its outer borders). A frame of one column (round
the page, a text box, a boxed list) is not, and neither is a lone rule (an underline) or a shaded bar.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

__all__ = [
    "LINE_POINTS",
    "Grid",
    "Rule",
    "bin_of",
    "cell_rows",
    "close_open_sides",
    "group_rules",
    "markdown_table",
    "merge_positions",
]

#: Words of one cell whose tops are this close (in points) are on one line.
LINE_POINTS = 3.0
# Rules are filed in bins this many points (or pixels) on a side when they are grouped.
_BIN = 32.0
# Positions beyond this many points (or pixels) either way share the outermost bins (a broken drawing's
# coordinates of 1e30 are filed in one bin, not counted out to it).
_BIN_LIMIT = 100_000.0


@dataclass
class Rule:
    """A straight rule: ``at`` across its direction (its middle), from ``start`` to ``end`` along it, and
    the first and last row (column for a vertical rule) of its pixels (both 0 for a drawn vector rule)."""

    horizontal: bool
    at: float
    start: int
    end: int
    first: int = 0
    last: int = 0

    @property
    def thickness(self) -> int:
        return self.last - self.first + 1


@dataclass
class Grid:
    """A ruled table: its box, and the positions of its row and column rules, in order."""

    box: tuple[float, float, float, float]
    rows: list[float] = field(default_factory=list)  # y of each row's edge (a rule, or an open side's end)
    columns: list[float] = field(default_factory=list)  # x of each column's edge (likewise)
    rules: list[Rule] = field(default_factory=list)


def _meets(across: Rule, down: Rule, slack: float) -> bool:
    return (
        across.start - slack <= down.at <= across.end + slack
        and down.start - slack <= across.at <= down.end + slack
    )


def bin_of(value: float, size: float) -> int:
    """The bin of ``size`` that holds ``value``, positions beyond :data:`_BIN_LIMIT` (and NaN) filed in
    the outermost bins: a position's bin never comes before a smaller position's."""
    if not value > -_BIN_LIMIT:
        value = -_BIN_LIMIT
    elif not value < _BIN_LIMIT:
        value = _BIN_LIMIT
    return math.floor(value / size)


def merge_positions(values: list[float], slack: float) -> list[float]:
    """Sorted positions with those within ``slack`` of each other merged (double rules, a rule's two
    halves, a cell's border drawn twice by its two neighbours)."""
    merged: list[list[float]] = []
    for value in sorted(values):
        if merged and value - merged[-1][-1] <= slack:
            merged[-1].append(value)
        else:
            merged.append([value])
    return [sum(group) / len(group) for group in merged]


def group_rules(across: list[Rule], down: list[Rule], slack: float) -> list[Grid]:
    """The grids that horizontal rules ``across`` and vertical rules ``down`` form where they meet
    (within ``slack``), top to bottom: each with two row rules and three column rules at least."""
    if len(across) < 2 or len(down) < 2:
        return []
    rules = across + down
    parent = list(range(len(rules)))

    def root(item: int) -> int:
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    # The rules down are filed by where they stand (a bin of _BIN points along the page) and by each bin
    # of their length (their ends widened by the slack); a rule across looks only in the bins along its
    # length, at the bin of its height: a page of thousands of short rules (a form's boxes, graph paper)
    # is grouped in one sweep, not by testing every pair.
    bins: dict[tuple[int, int], list[int]] = {}
    for number, rule in enumerate(down):
        column = bin_of(rule.at, _BIN)
        for row in range(bin_of(rule.start - slack, _BIN), bin_of(rule.end + slack, _BIN) + 1):
            bins.setdefault((column, row), []).append(number)
    for a, rule_a in enumerate(across):
        row = bin_of(rule_a.at, _BIN)
        for column in range(bin_of(rule_a.start - slack, _BIN), bin_of(rule_a.end + slack, _BIN) + 1):
            for number in bins.get((column, row), ()):
                if _meets(rule_a, down[number], slack):
                    parent[root(a)] = root(len(across) + number)
    groups: dict[int, list[Rule]] = {}
    for number, rule in enumerate(rules):
        groups.setdefault(root(number), []).append(rule)
    grids = []
    for members in groups.values():
        rows = merge_positions([rule.at for rule in members if rule.horizontal], slack)
        columns = merge_positions([rule.at for rule in members if not rule.horizontal], slack)
        if len(rows) < 2 or len(columns) < 3:
            continue  # a lone rule, an underline touching one, a frame, a boxed list: one column at most
        x0 = min(min(rule.start for rule in members if rule.horizontal), columns[0])
        x1 = max(max(rule.end for rule in members if rule.horizontal), columns[-1])
        y0 = min(min(rule.start for rule in members if not rule.horizontal), rows[0])
        y1 = max(max(rule.end for rule in members if not rule.horizontal), rows[-1])
        rows, columns = close_open_sides(rows, columns, members, slack)
        grids.append(Grid((float(x0), float(y0), float(x1), float(y1)), rows, columns, members))
    grids.sort(key=lambda grid: (grid.box[1], grid.box[0]))
    return grids


def close_open_sides(
    rows: list[float], columns: list[float], rules: list[Rule], slack: float
) -> tuple[list[float], list[float]]:
    """A grid's row and column positions with the sides its outer rules leave open closed: where two
    rules across or more run past the outermost rule down, a column stands there out to where the
    farthest ends (a table drawn without its outer borders), and likewise a row where two rules down or
    more run past the outermost rule across. One long rule (a column divider, a rule across the page)
    touching a table adds nothing."""
    across = [rule for rule in rules if rule.horizontal]
    down = [rule for rule in rules if not rule.horizontal]

    def beyond(ends: list[float], low: bool) -> float | None:
        if len(ends) < 2:
            return None  # one rule past the side (a divider, a rule across the page) opens nothing
        return min(ends) if low else max(ends)

    left = beyond([rule.start for rule in across if rule.start < columns[0] - slack], True)
    right = beyond([rule.end for rule in across if rule.end > columns[-1] + slack], False)
    top = beyond([rule.start for rule in down if rule.start < rows[0] - slack], True)
    bottom = beyond([rule.end for rule in down if rule.end > rows[-1] + slack], False)
    columns = [*([left] if left is not None else []), *columns, *([right] if right is not None else [])]
    rows = [*([top] if top is not None else []), *rows, *([bottom] if bottom is not None else [])]
    return rows, columns


def cell_rows(
    words: list[tuple[float, float, float, float, str]],
    rows: list[float],
    columns: list[float],
    spanned: set[tuple[int, int]] | None = None,
) -> list[list[str]]:
    """The text of each cell between the rules (in the words' coordinates): every word goes to the cell
    its middle is in, cells read top to bottom, then left to right; rows left empty are dropped.
    ``spanned`` holds ``(row, rule)`` where the column rule of that index is not drawn across that row:
    the cells on its two sides are one, its text in the first."""
    table = [["" for _ in range(len(columns) - 1)] for _ in range(len(rows) - 1)]
    placed: dict[tuple[int, int], list[tuple[float, float, str]]] = {}
    for x0, y0, x1, y1, text in words:
        x, y = (x0 + x1) / 2, (y0 + y1) / 2
        row, column = bisect_right(rows, y) - 1, bisect_right(columns, x) - 1
        while spanned and column > 0 and (row, column) in spanned:
            column -= 1
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


def markdown_table(rows: list[list[str]], *, header: list[str] | None = None) -> str:
    """Rows as a Markdown table (``|`` in a cell escaped).

    Args:
        rows: The table's rows. Without ``header``, the first row is the header.
        header: The header cells, one a column; an empty list gives an empty header row (a table printed
            without one: none is invented).
    """
    if header is None:
        if not rows:
            return ""
        header, rows = rows[0], rows[1:]
    width = max([len(header), *(len(row) for row in rows)])
    if width == 0:
        return ""

    def line(cells: list[str]) -> str:
        padded = [cell.replace("|", "\\|") for cell in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(padded) + " |"

    return "\n".join([line(header), "|" + "---|" * width, *(line(row) for row in rows)])
