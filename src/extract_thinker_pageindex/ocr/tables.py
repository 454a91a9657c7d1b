"""Ruled tables on a scanned page: the grid of printed rules, found in the page's pixels, and the OCR'd
words of each cell.

A rule is a run of dark pixels at least 0.3 inch long and at most 2.5 pt thick, across (horizontal) or
down (vertical) the page: text and light shading make no such run, and a dark picture is too thick. The
rules form grids as a PDF's drawn rules do (:mod:`..tables.grid`).
Tables ruled only across (no column rules) are not found.

The rules are also painted out of the image before the engine reads it: Tesseract takes a boxed region for
a picture and leaves the words inside a ruled table unread, and reads them once the rules are gone.
"""

from __future__ import annotations

from typing import Any

from ..tables.grid import Grid, Rule, close_open_sides, group_rules, merge_positions

__all__ = ["erase_rules", "find_grids", "grid_on_page"]

#: Pixels darker than this (of 255) are ink.
INK = 160
#: A rule is at least this long (the column rule of a table of one row of 11 pt text is about as long).
MIN_RULE_INCHES = 0.3
#: A rule is at most this thick, in points (a heavy rule is 2 pt; a picture is far thicker).
MAX_RULE_POINTS = 2.5
#: Rules this close (in points) at their ends still meet: rules drawn by hand or scanned stop short.
MEET_POINTS = 4.0


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
    return group_rules(across, down, slack)


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


def grid_on_page(grid: Grid, matrix: Any) -> Grid:
    """A grid found in a page image, in points: its rules' ends mapped through ``matrix`` (pixels to the
    points of the page as shown, where its rows are rows: the OCR engines match words to cells there)."""
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
    rows = merge_positions([rule.at for rule in mapped if rule.horizontal], MEET_POINTS)
    columns = merge_positions([rule.at for rule in mapped if not rule.horizontal], MEET_POINTS)
    rows, columns = close_open_sides(rows, columns, mapped, MEET_POINTS)
    return Grid(box, rows, columns, mapped)
