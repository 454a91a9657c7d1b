"""Tables ruled into cells, from the page's vector drawings.

A drawn line, or a filled or stroked rectangle at most :data:`MAX_RULE_POINTS` thick, is a rule across or
down; the border of a stroked rectangle (a cell drawn as a box) gives four. Shading (a filled rectangle
thicker than a rule) is no rule, so a shaded row is not a table. The rules form grids as in
:mod:`.grid`, and each cell holds the words whose middles fall in it. Grids drawn right under one another
with the same columns are one table, and a cell spans the columns whose rule between them is not drawn
across its row where its text runs across that rule's place.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Any

from .grid import Grid, Rule, cell_rows, group_rules
from .rows import Word, is_figure, is_year, page_rows
from .table import PageTable

__all__ = ["grid_tables", "may_hold_grid", "page_rules"]

#: A rule is at most this thick (points); shading is thicker.
MAX_RULE_POINTS = 2.5
#: A rule is at least this long (points).
MIN_RULE_POINTS = 6.0
#: Rules this close (points) at their ends still meet.
MEET_POINTS = 2.0
#: A row ruled round this many lines of text or more across its columns is cut between them...
TEXT_ROWS = 3
#: ...when this share of its lines hold a value.
VALUE_SHARE = 2 / 3
#: Grids with the same columns this close (points) one under the other are one table.
STACK_POINTS = 4.0


def _add_line(across: list[Rule], down: list[Rule], x0: float, y0: float, x1: float, y1: float) -> None:
    if abs(y1 - y0) <= MAX_RULE_POINTS and abs(x1 - x0) >= MIN_RULE_POINTS:
        low, high = sorted((x0, x1))
        across.append(Rule(True, (y0 + y1) / 2, round(low), round(high)))
    elif abs(x1 - x0) <= MAX_RULE_POINTS and abs(y1 - y0) >= MIN_RULE_POINTS:
        low, high = sorted((y0, y1))
        down.append(Rule(False, (x0 + x1) / 2, round(low), round(high)))


def _box(item: Sequence[Any]) -> tuple[float, float, float, float]:
    # A rectangle may be stored from its right or bottom edge: its width is then negative.
    (x0, x1), (y0, y1) = sorted(item[1][0:3:2]), sorted(item[1][1:4:2])
    return x0, y0, x1, y1


def _add_bar(across: list[Rule], down: list[Rule], x0: float, y0: float, x1: float, y1: float) -> None:
    """A thin bar: a rule along its length."""
    if x1 - x0 > y1 - y0:
        _add_line(across, down, x0, (y0 + y1) / 2, x1, (y0 + y1) / 2)
    else:
        _add_line(across, down, (x0 + x1) / 2, y0, (x0 + x1) / 2, y1)


#: A thin bar is a sliver of shading when shading of its colour lines this share of its length on each side.
SLIVER_COVER = 0.9


def _covered(spans: list[tuple[float, float]], low: float, high: float) -> float:
    """The share of ``low``..``high`` that ``spans`` cover."""
    covered, reach = 0.0, low
    for start, end in sorted(spans):
        start, end = max(start, reach), min(end, high)
        if end > start:
            covered += end - start
            reach = end
    return covered / (high - low) if high > low else 0.0


def page_rules(drawings: list[dict[str, Any]]) -> tuple[list[Rule], list[Rule]]:
    """The horizontal and vertical rules among a page's drawings (``page.get_cdrawings()``).

    Invisible paths give none. A filled outline that is no rectangle gives a bar when it is thin, and no
    rule otherwise (a chart's or a map's shapes; the text page's boxes of shapes say as much, see
    :func:`~.drawings.page_paths`). A thin bar filled between two stretches of shading of its own colour
    (filled rectangles thicker than a rule, lining :data:`SLIVER_COVER` of its length on both its long
    sides) is a sliver of that shading, the gap between a shaded row's cells, and no rule."""
    across: list[Rule] = []
    down: list[Rule] = []
    bars: list[tuple[Any, float, float, float, float]] = []  # filled thin bars: (fill, box)
    # Each side of the shading, (fill, side, place), with the stretches it runs along that side.
    shading: dict[tuple[Any, str, float], list[tuple[float, float]]] = {}
    for path in drawings:
        kind = path.get("type") or ""
        fill = path.get("fill") if kind == "f" else None
        if (kind == "f" and path.get("fill_opacity", 1) == 0) or (
            kind == "s" and path.get("stroke_opacity", 1) == 0
        ):
            continue
        outline = False  # a filled outline's edges are read once, from its box
        for item in path.get("items", ()):
            if item[0] == "l":
                if kind == "f":
                    outline = True
                    continue
                (ax, ay), (bx, by) = item[1][:2], item[2][:2]
                _add_line(across, down, ax, ay, bx, by)
            elif item[0] == "re":
                x0, y0, x1, y1 = _box(item)
                if min(x1 - x0, y1 - y0) <= MAX_RULE_POINTS:
                    if fill is None:
                        _add_bar(across, down, x0, y0, x1, y1)
                    else:
                        bars.append((fill, x0, y0, x1, y1))
                elif fill is not None:
                    for side, place, span in (
                        ("x0", x0, (y0, y1)),
                        ("x1", x1, (y0, y1)),
                        ("y0", y0, (x0, x1)),
                        ("y1", y1, (x0, x1)),
                    ):
                        shading.setdefault((fill, side, round(place, 1)), []).append(span)
                elif "s" in kind:  # a stroked box: its four sides
                    for line in ((x0, y0, x1, y0), (x0, y1, x1, y1), (x0, y0, x0, y1), (x1, y0, x1, y1)):
                        _add_line(across, down, *line)
        if outline:
            x0, y0, x1, y1 = path["rect"]
            if min(x1 - x0, y1 - y0) <= MAX_RULE_POINTS:
                bars.append((fill, x0, y0, x1, y1))
    for fill, x0, y0, x1, y1 in bars:
        if shading and fill is not None:
            if x1 - x0 > y1 - y0:  # across: shading ends on its top and starts under it
                before, after, low, high = (fill, "y1", round(y0, 1)), (fill, "y0", round(y1, 1)), x0, x1
            else:
                before, after, low, high = (fill, "x1", round(x0, 1)), (fill, "x0", round(x1, 1)), y0, y1
            if (
                _covered(shading.get(before, []), low, high) >= SLIVER_COVER
                and _covered(shading.get(after, []), low, high) >= SLIVER_COVER
            ):
                continue
        _add_bar(across, down, x0, y0, x1, y1)
    return across, down


def _may_run_down(path: dict[str, Any]) -> bool:
    """Whether a path may hold a rule down: it is tall enough, and not one shaded rectangle."""
    x0, y0, x1, y1 = path["rect"]
    if abs(y1 - y0) < MIN_RULE_POINTS:
        return False
    items = path.get("items", ())
    return not (
        len(items) == 1 and items[0][0] == "re" and path.get("type") == "f" and abs(x1 - x0) > MAX_RULE_POINTS
    )


def may_hold_grid(drawings: list[dict[str, Any]]) -> bool:
    """Whether a page's drawings hold two shapes that could be rules down, as a grid needs."""
    found = 0
    for path in drawings:
        if _may_run_down(path):
            found += 1
            if found == 2:
                return True
    return False


def grid_tables(drawings: list[dict[str, Any]], words: list[Word]) -> list[PageTable]:
    """The tables ruled into a grid of at least two rows of cells' rules and two columns, with words in
    more than one of their cells. A page with fewer than two shapes that could be rules down (a grid
    needs two) has no grid, and its rules are not read."""
    if not may_hold_grid(drawings):
        return []
    across, down = page_rules(drawings)
    tables = []
    for grid in _stacked(group_rules(across, down, MEET_POINTS)):
        table = _grid_table(grid, words)
        if table is not None:
            tables.append(table)
    return tables


def _stacked(grids: list[Grid]) -> list[Grid]:
    """Grids drawn one right under the other with the same columns are one table (a header boxed apart
    from the body by a double rule, a total row boxed under it)."""
    joined: list[Grid] = []
    for grid in grids:
        last = joined[-1] if joined else None
        if last is not None and 0 <= grid.box[1] - last.box[3] <= STACK_POINTS:
            few, many = sorted((last.columns, grid.columns), key=len)
            # The same columns, or fewer where a header's cell spans several of the body's.
            if all(any(abs(a - b) <= STACK_POINTS for b in many) for a in few) and (
                abs(few[0] - many[0]) <= STACK_POINTS and abs(few[-1] - many[-1]) <= STACK_POINTS
            ):
                box = (
                    min(last.box[0], grid.box[0]),
                    last.box[1],
                    max(last.box[2], grid.box[2]),
                    max(last.box[3], grid.box[3]),
                )
                joined[-1] = Grid(box, last.rows + grid.rows, many, last.rules + grid.rules)
                continue
        joined.append(grid)
    return joined


def _spanned(grid: Grid, words: list[Word]) -> set[tuple[int, int]]:
    """Where a cell spans columns: ``(row, rule)`` for each inner column rule not drawn across a row whose
    text runs across its place (a word over it, or two words a space apart on its two sides). A rule
    missing where the text keeps to its columns changes nothing."""
    spanned = set()
    # The rules down drawn at each inner column's place (read once: a grid may have thousands of rules).
    at_column = {
        index: [
            rule
            for rule in grid.rules
            if not rule.horizontal and abs(rule.at - grid.columns[index]) <= MEET_POINTS
        ]
        for index in range(1, len(grid.columns) - 1)
    }
    for row, (top, bottom) in enumerate(itertools.pairwise(grid.rows)):
        middle = (top + bottom) / 2
        line = sorted(word for word in words if top <= (word[1] + word[3]) / 2 <= bottom)
        if not line:
            continue
        for index in range(1, len(grid.columns) - 1):
            x = grid.columns[index]
            if any(rule.start - MEET_POINTS <= middle <= rule.end + MEET_POINTS for rule in at_column[index]):
                continue
            across = any(word[0] < x < word[2] for word in line)
            near = any(
                left[2] <= x <= right[0]
                # Within a word's height: "$" left of the place and its figure right of it are one cell.
                and right[0] - left[2] <= left[3] - left[1]
                and abs(left[1] - right[1]) < 2
                for left, right in itertools.pairwise(line)
            )
            if across or near:
                spanned.add((row, index))
    return spanned


def _text_rows(grid: Grid, words: list[Word]) -> list[float]:
    """The grid's row positions, a row ruled round several rows of text (a table ruled into columns only)
    cut between its lines of text: where :data:`TEXT_ROWS` of its lines or more stand across two columns
    or more, two of them hold two values each (figures, not years) and :data:`VALUE_SHARE` of its lines
    hold one. The lines of a cell of several lines beside cells of one, a label wrapped over more lines
    than its figures and a header's cells printed on several lines are left together."""
    rows = grid.rows[:1]
    for top, bottom in itertools.pairwise(grid.rows):
        band = [word for word in words if top <= (word[1] + word[3]) / 2 <= bottom]
        lines = page_rows(band) if len(band) >= 2 * TEXT_ROWS else []
        across = [
            line
            for line in lines
            if len(
                {
                    bisect.bisect_right(grid.columns, (word[0] + word[2]) / 2)
                    for s in line.segments
                    for word in s.words
                }
            )
            >= 2
        ]
        valued = [line for line in across if sum(_value(segment.text) for segment in line.segments) >= 1]
        values = sum(1 for line in valued if sum(_value(segment.text) for segment in line.segments) >= 2)
        # Most lines are rows of values: a label wrapped over more lines than its figures is left whole.
        if len(across) >= TEXT_ROWS and values >= 2 and len(valued) >= VALUE_SHARE * len(lines):
            rows.extend((upper.y1 + lower.y0) / 2 for upper, lower in itertools.pairwise(lines))
        rows.append(bottom)
    return rows


def _grid_table(grid: Grid, words: list[Word]) -> PageTable | None:
    x0, y0, x1, y1 = grid.box
    inside = [
        word for word in words if x0 <= (word[0] + word[2]) / 2 <= x1 and y0 <= (word[1] + word[3]) / 2 <= y1
    ]
    rows_at = _text_rows(grid, inside)
    if rows_at != grid.rows:
        grid = Grid(grid.box, rows_at, grid.columns, grid.rules)
    rows = cell_rows(inside, grid.rows, grid.columns, _spanned(grid, inside))
    filled = sum(1 for row in rows for cell in row if cell)
    if len(rows) < 1 or filled < 2:
        return None
    # Columns no row fills are a rule drawn twice, not a column.
    used = [column for column in range(len(grid.columns) - 1) if any(row[column] for row in rows)]
    rows = [[row[column] for column in used] for row in rows]
    if len(used) < 2:
        return None
    # A first row of text in every cell is the header (a row of figures is data).
    first = rows[0]
    header = first if len(rows) > 1 and all(first) and not any(_value(cell) for cell in first) else []
    return PageTable(
        bbox=grid.box,
        rows=rows,
        header_rows=1 if header else 0,
        header=list(header),
        levels=[0] * len(rows),
        ruling="grid",
    )


def _value(text: str) -> bool:
    return is_figure(text) and not is_year(text)
