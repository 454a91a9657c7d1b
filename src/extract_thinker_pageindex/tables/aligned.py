"""Tables aligned by whitespace: columns of figures read from where the figures of consecutive rows stand.

Most financial statements have no ruled cells: a label at the left, then figures in columns, right-aligned
under years. Such a table is found from the page's rows (:mod:`.rows`) alone:

- A **body row** holds a figure after its first segment (or figures only): "Inventories  62,567  61,388".
  Rows of one label between body rows ("Current assets:") belong to the table; a line that runs on into
  the columns (a paragraph) ends it, and so does a gap of more than :data:`MAX_GAP` line heights.
- At least :data:`MIN_BODY_ROWS` body rows, and a column holding figures in at least two of them: a
  shaded or underlined line, a date in a sentence or a page number is no table.
- **Columns** are where the segments after the labels overlap from row to row (a figure column's
  right-aligned numbers overlap whatever their widths); the labels are the first column. A segment or
  two running across the gap between two columns (up to :data:`BRIDGE_SHARE` of the rows) do not join
  them. A short line alone between groups of rows ("Females") keeps the groups one table. A body row at
  the top or the bottom whose figures stand in no column is left out, with the lines between it and the
  rest, when more than two lines stand between them or a blank line sets it apart (a running header's
  page number); a total in an outer column of its own, right under its rows, stays.
- **Header rows** are the rows at the top whose figures are years, and the rows above them whose
  segments stand over the figure columns, close together ("Year ended December 31,"): a segment over
  several columns (or in the gap between two) spans them. A title centred left of the columns, centred
  over the whole table and no run of its columns ("[In thousands]"), a caption's next line, or a line
  standing a blank line apart, is none; a lone short label over one column right above the body
  ("Males") is a group's label. Header rows that are the lines of one row's cells (side by side, none
  spanning, each over a cell of the row below; or single-spaced, each over a cell of words) are one
  row.
- A label printed on two lines is one label: its first line not ending with a colon, and the second
  starting in lower case, or the first full (the second's first word would not fit after it in the label
  column) and the second indented under it alone; the figures stand on either line, or between the two
  lines, overlapping both. Each label's indentation gives its level.
- An **index page** holds none: where at least half of the numbers printed are lists of page numbers
  ("1455,", "8, 757"), most of them running on to the next line or after a dot leader
  (:func:`index_page`), its columns of entries and their locators line up like a table's, row after
  row, but they are the entries of a back-of-book index.
"""

from __future__ import annotations

import itertools
import re

from .rows import FOOTNOTE, Row, Segment, is_figure, is_year
from .table import PageTable

__all__ = ["INDEX_LOCATORS", "INDEX_SHARE", "MAX_GAP", "MIN_BODY_ROWS", "aligned_tables", "index_page"]

#: The most a table's rows stand apart, in line heights (a statement's blank line between sections fits).
MAX_GAP = 2.5
#: The fewest body rows of a table.
MIN_BODY_ROWS = 2
#: The most label rows between two body rows of a table's end (a section's label, a label's first line).
MAX_LABEL_ROWS = 2
#: A row at a table's end whose distance to the row next to it is this many times the table's usual row
#: pitch stands apart (a blank line or more).
APART_PITCH = 1.5
#: The share of body rows that may print across the gap between two columns without joining them.
BRIDGE_SHARE = 0.15
#: The most header rows above a table's body (column headers set on up to five staggered lines, and a
#: group's label over them).
MAX_HEADER_ROWS = 6
#: The most a header row stands apart from the header row under it, in line heights (no blank line).
HEADER_GAP = 0.8
#: Lines of one cell stand at most this many line heights apart (single spacing).
LINE_GAP = 0.35
#: A column's header is at most this many words on a line ("Three Months Ended March 31,").
HEADER_WORDS = 6
#: A line's middle within this share of the table's width of another middle is centred on it.
CENTRE_SLACK = 0.01
#: Positions closer than this (points) are the same indentation.
INDENT_SLACK = 3.0

#: An index page prints at least this many lists of page numbers, and they are at least this share of
#: the numbers it prints (see :func:`index_page`).
INDEX_LOCATORS = 10
INDEX_SHARE = 0.5

_LEADER = re.compile(r"\s*(?:\.\s?){3,}$|\s*…+$")
_FIGURE_WITH_MARK = re.compile(r"^(.*\d\)?)(\(\w{1,2}\)|\*{1,3}|[†‡]+)$")


# Page numbers an index gives after an entry (after its dot leader, if any): a list of them ("8, 757",
# "12-14, 20") or one that runs on to the next line ("1455,"). (``is_figure`` takes a list for one figure:
# lists are looked for first.)
_LOCATOR_OPENERS = frozenset("0123456789.…")
_LOCATORS = re.compile(
    r"^[.\s…]*\d+(?:[-–]\d+)?(?:,\s+\d+(?:[-–]\d+)?)*,$|^[.\s…]*\d+(?:[-–]\d+)?(?:,\s+\d+(?:[-–]\d+)?)+$"
)


def index_page(rows: list[Row]) -> bool:
    """Whether the rows are a page of a back-of-book index: at least :data:`INDEX_LOCATORS` of their
    segments are lists of page numbers, those are at least :data:`INDEX_SHARE` of the segments read as
    numbers (the lists and the figures), and at least half of them are marked as only an index marks its
    page numbers: the list runs on to the next line (it ends with a comma) or a dot leader stands before
    it. A table whose cells hold lists ("16, 32, 64" in a table of hyperparameters, "3, 7, 12" in a
    column of references, "0, 0" sampling factors) prints them whole and without leaders, whatever their
    share; a page of an index, with its three columns of entries, mostly prints marked lists."""

    def locator(segment: Segment) -> bool:
        # Only a segment opening with a digit or a leader may be one: the rest are passed over unread.
        return segment.words[0][4][:1] in _LOCATOR_OPENERS and _LOCATORS.match(segment.text) is not None

    locators = marked = 0
    for row in rows:
        previous: Segment | None = None
        for segment in row.segments:
            if locator(segment):
                locators += 1
                text = segment.text
                if text.endswith(",") or text[:1] in ".…" or (previous and _LEADER.search(previous.text)):
                    marked += 1
            previous = segment
    if locators < INDEX_LOCATORS or 2 * marked < locators:
        return False
    figures = sum(1 for row in rows for segment in row.segments if segment.figure and not locator(segment))
    return locators >= INDEX_SHARE * (locators + figures)


def _body(row: Row) -> bool:
    """Whether a row is a body row: a figure after its label, or figures only."""
    if len(row.segments) < 2:
        return False
    return any(segment.figure and not is_year(segment.text) for segment in row.segments[1:]) or all(
        segment.figure for segment in row.segments
    )


def _years_only(row: Row) -> bool:
    """A header row of years: every segment after an optional label is a year."""
    values = row.segments[1:] if not row.segments[0].figure else row.segments
    return bool(values) and all(is_year(segment.text) for segment in values)


def _columns(rows: list[Row]) -> list[tuple[float, float]]:
    """The value columns: the spans where the segments after each row's label overlap, left to right,
    each held by at least two segments. A span is cut in two where few rows print across it between two
    stretches that many rows fill: a segment or two running across the gap between two columns (a
    spanning subtotal, a long note) do not join them, as long as :data:`BRIDGE_SHARE` of the rows or
    fewer do."""
    spans = []
    for row in rows:
        first = 0 if row.segments[0].figure else 1
        spans += [(segment.x0, segment.x1) for segment in row.segments[first:]]
    spans.sort()
    merged: list[list[float]] = []
    for x0, x1 in spans:
        if merged and x0 < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], x1)
        else:
            merged.append([x0, x1])
    allowed = int(BRIDGE_SHARE * len(rows))  # rows that may print across a gap between two columns
    columns = []
    for x0, x1 in merged:
        inside = [span for span in spans if span[0] < x1 and span[1] > x0]
        for part in _split_at_dips(inside, allowed) if allowed else [(x0, x1)]:
            if sum(1 for a, b in inside if a < part[1] and b > part[0]) >= 2:
                columns.append(part)
    return columns


def _split_at_dips(spans: list[tuple[float, float]], allowed: int) -> list[tuple[float, float]]:
    """One overlapping group of spans as columns: cut where at most ``allowed`` spans cover x between two
    stretches covered by more."""
    edges = sorted({x for span in spans for x in span})
    stretches = []
    for left, right in itertools.pairwise(edges):
        middle = (left + right) / 2
        stretches.append((left, right, sum(1 for x0, x1 in spans if x0 < middle < x1) > allowed))
    dense = [index for index, stretch in enumerate(stretches) if stretch[2]]
    if not dense:
        return [(edges[0], edges[-1])]
    cuts = []
    for before, after in itertools.pairwise(dense):
        if after > before + 1:  # a dip between two dense stretches
            cuts.append((stretches[before][1] + stretches[after][0]) / 2)
    bounds = [edges[0], *cuts, edges[-1]]
    return list(itertools.pairwise(bounds))


def _figure_columns(body: list[Row], columns: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The columns most of whose cells in the body are figures."""
    kept = []
    for x0, x1 in columns:
        cells = [segment for row in body for segment in row.segments if segment.x0 < x1 and segment.x1 > x0]
        if cells and 2 * sum(1 for segment in cells if segment.figure) >= len(cells):
            kept.append((x0, x1))
    return kept


def _column_of(
    segment: Segment, columns: list[tuple[float, float]], *, header: bool = False
) -> tuple[int, int]:
    """The first and last value column a segment stands over (the nearest one when it overlaps none; in
    a header row, both columns when its words stand in the gap between two, centred over the pair:
    "Total" over "All" and "Boys")."""
    over = [index for index, (x0, x1) in enumerate(columns) if segment.x0 < x1 and segment.x1 > x0]
    if over:
        return over[0], over[-1]
    if header and not segment.figure:
        middle = (segment.x0 + segment.x1) / 2
        for index in range(len(columns) - 1):
            left, right = columns[index][0], columns[index + 1][1]
            if (
                columns[index][1] <= segment.x0
                and segment.x1 <= columns[index + 1][0]
                and abs(middle - (left + right) / 2) <= CENTRE_SLACK * (right - left) + INDENT_SLACK
            ):
                return index, index + 1
    middle = (segment.x0 + segment.x1) / 2
    nearest = min(
        range(len(columns)), key=lambda index: abs((columns[index][0] + columns[index][1]) / 2 - middle)
    )
    return nearest, nearest


def _cell_text(segments: list[Segment]) -> str:
    """A cell's text: its words as printed, a footnote mark glued to a figure set apart ("7,637 (1)"),
    dot leaders that run to the next column dropped ("Business......" in a contents table)."""
    words = []
    for segment in segments:
        for word in segment.words:
            text = word[4]
            found = _FIGURE_WITH_MARK.match(text)
            if found is not None and FOOTNOTE.match(text) is None:
                words += [found.group(1), found.group(2)]
            else:
                words.append(text)
    return _LEADER.sub("", " ".join(words)).strip()


def _short_line(row: Row) -> bool:
    """One short piece of text, not a figure: a label that may stand anywhere over a table."""
    return len(row.segments) == 1 and not row.segments[0].figure and len(row.text.split()) <= HEADER_WORDS


def _regions(rows: list[Row]) -> list[list[Row]]:
    """Runs of rows that may be a table: body rows, with the one-label rows between them."""
    regions: list[list[Row]] = []
    current: list[Row] = []
    pending: list[Row] = []
    figures_from = float("inf")  # where the current run's figure columns start
    for row in rows:
        last = (pending or current)[-1] if current else None
        near = last is not None and row.y0 - last.y1 <= MAX_GAP * max(last.height, row.height)
        if _body(row):
            if current and near:
                current += pending
            else:
                if len(current) >= MIN_BODY_ROWS:
                    regions.append(current)
                current = []
                figures_from = float("inf")
            pending = []
            current.append(row)
            first = 0 if row.segments[0].figure else 1
            figures_from = min([figures_from, *(segment.x0 for segment in row.segments[first:])])
        elif current and near and (row.x1 < figures_from or _short_line(row)):
            # A section's label ("Current assets:", or "Females" centred over the columns), or a label's
            # first line.
            pending.append(row)
        else:
            if current:
                regions.append(current)
            current, pending, figures_from = [], [], float("inf")
    if current:
        regions.append(current)
    return [region for region in regions if sum(1 for row in region if _body(row)) >= MIN_BODY_ROWS]


def _without_strays(region: list[Row], columns: list[tuple[float, float]]) -> list[Row]:
    """A region without the body rows at its top or bottom that stand apart from the rest: their segments
    after the label in none of its columns (a column is held by two rows at least), and more than
    :data:`MAX_LABEL_ROWS` rows of text between them and the next body row, or a gap to the row next to
    them of more than :data:`APART_PITCH` times the region's usual row pitch. A running header's page
    number ("3 CITATIONS  2") that a page of text joins to a small table far below it, through the
    lines between that all end left of that number, or that stands a blank line over the table. A total
    or an opening balance in an outer column of its own, right under or over the rows it sums (a section
    label or a label's second line between at most), stays; so does a row of years, the header's
    wherever its years stand."""
    tops = [row.y0 for row in region]
    pitches = sorted(after - before for before, after in itertools.pairwise(tops) if after > before)
    pitch = pitches[len(pitches) // 2] if pitches else 0.0

    def stray(position: int, neighbour: int) -> bool:
        index = bodies[position]
        row = region[index]
        if _years_only(row):
            return False  # a header's years, set over the figures or beside them
        first = 0 if row.segments[0].figure else 1
        if any(segment.x0 < x1 and segment.x1 > x0 for segment in row.segments[first:] for x0, x1 in columns):
            return False
        inward = 1 if bodies[neighbour] > index else -1
        between = abs(bodies[neighbour] - index) - 1
        distance = abs(region[index + inward].y0 - row.y0)
        return between > MAX_LABEL_ROWS or (pitch > 0 and distance > APART_PITCH * pitch)

    bodies = [index for index, row in enumerate(region) if _body(row)]
    start, end = 0, len(bodies)
    while end - start >= MIN_BODY_ROWS and stray(start, start + 1):
        start += 1
    while end - start >= MIN_BODY_ROWS and stray(end - 1, end - 2):
        end -= 1
    return region[bodies[start] : bodies[end - 1] + 1]


def _title(segment: Segment, left_edge: float, columns: list[tuple[float, float]]) -> bool:
    """A line centred over the whole table (its labels and columns) and over no run of its columns: a
    title or a unit line ("[In thousands]"), not a header spanning columns."""
    slack = CENTRE_SLACK * (columns[-1][1] - left_edge)
    middle = (segment.x0 + segment.x1) / 2
    if abs(middle - (left_edge + columns[-1][1]) / 2) > slack:
        return False
    return not any(
        abs(middle - (columns[first][0] + columns[last][1]) / 2) <= slack
        for first in range(len(columns))
        for last in range(first, len(columns))
        if columns[first][0] > left_edge + INDENT_SLACK or last < len(columns) - 1
    )


def _runs_on(above: Row, row: Row) -> bool:
    """Whether ``row`` is the next line of a line of running text in ``above`` (a caption's or a
    paragraph's, after a label at most: "Table 2.  Actual and projected ..."): one piece of text,
    starting where that text does, a line pitch below it. A header row whose label cell is long is no
    running text: its line holds other cells after it."""
    last = above.segments[-1]
    return (
        len(row.segments) == 1
        and len(above.segments) <= 2
        and len(last.text.split()) > HEADER_WORDS
        and abs(last.x0 - row.x0) <= INDENT_SLACK
        and row.y0 - above.y1 <= HEADER_GAP * above.height
    )


def _header_above(
    rows: list[Row],
    top: int,
    columns: list[tuple[float, float]],
    label_right: float,
    figure_columns: list[tuple[float, float]],
    left_edge: float,
    *,
    over_years: bool = False,
) -> tuple[int, int]:
    """The rows just above ``rows[top]`` that belong to the table: how many are header rows (each near
    the next, with a segment over the columns and nothing but a label at the left, no figure but a year),
    and how many one-label rows between them and the body are the body's first section labels
    ("Assets", or "Males" alone over one column). Above a row of years (``over_years``) every short line
    taken is a header."""
    count = labels = 0
    lead = 0  # one-label rows passed since the last header row
    aligned = 0  # of them, the rows right above the body whose text stands over the columns
    below = rows[top]
    for index in range(top - 1, -1, -1):
        row = rows[index]
        if below.y0 - row.y1 > MAX_GAP * max(row.height, below.height) or count >= MAX_HEADER_ROWS:
            break
        if (
            not (over_years and below is rows[top])
            and len(row.segments) == 1
            and _title(row.segments[0], left_edge, columns)
        ):
            # Centred over the whole table and over no run of its columns: "[In thousands]" (a line right
            # over a row of years heads them wherever it stands).
            break
        if index and _runs_on(rows[index - 1], row):
            break  # the last line of a caption or a paragraph over the table
        over = [segment for segment in row.segments if segment.x1 > columns[0][0] - 2]
        left = [segment for segment in row.segments if segment.x1 <= columns[0][0] - 2]
        # Text over the columns, clear of the labels' place (a paragraph's line starts where labels do).
        wordy = (
            bool(over)
            and all(segment.x0 >= label_right - 1 for segment in over)
            and any(len(segment.text.split()) > HEADER_WORDS for segment in over)
        )
        figures = any(segment.figure for segment in row.segments)
        # A lone short label over one column of several, right above the body ("Males"): a group's label.
        span = _column_of(over[0], columns) if len(over) == 1 and not left else None
        group = not over_years and len(columns) > 1 and span is not None and span[0] == span[1]
        label = (not over and left) or wordy or group
        if count == 0 and lead < 2 and not figures and len(left) <= 1 and label:
            # A section's label above the first body row ("Assets"), or the first line of a row of text
            # cells whose figures stand on its next line: the body's, when a header stands above them.
            lead += 1
            if wordy and aligned == lead - 1:
                aligned += 1  # text cells over the columns belong to the body, header or not
            below = row
            continue
        if not over or len(left) > 1 or any(segment.x0 < label_right - 1 for segment in over):
            break
        if any(
            (segment.x0 + segment.x1) / 2 < columns[0][0] and abs(segment.x1 - columns[0][1]) > INDENT_SLACK
            for segment in over
        ):
            break  # centred left of the columns: a title over the page ("Company and Subsidiaries")
        if count and below.y0 - row.y1 > HEADER_GAP * max(row.height, below.height):
            break  # header lines stand close; a title or a company's name stands apart above them
        if any(segment.figure and not is_year(segment.text) for segment in over):
            break
        if any(len(segment.text.split()) > HEADER_WORDS for segment in over):
            break  # a title or a sentence over the columns, not a column's header
        if not figure_columns or not any(
            segment.x0 < figure_columns[-1][1] and segment.x1 > figure_columns[0][0] for segment in over
        ):
            # A title over a column of text ("TABLE OF CONTENTS"): headers stand over the figure columns
            # (over one, or in a gap between two, as a group's label over a pair does).
            break
        if count == 0:
            labels = lead
        count += 1
        below = row
    return count, labels if count else aligned


def aligned_tables(rows: list[Row]) -> list[PageTable]:
    """The whitespace-aligned tables among a page's rows, top to bottom."""
    tables = []
    for region in _regions(rows):
        body = [row for row in region if _body(row)]
        columns = _columns(body)
        if not columns:
            continue
        kept = _without_strays(region, columns)
        if len(kept) < len(region):
            region = kept
            body = [row for row in region if _body(row)]
            columns = _columns(body) if len(body) >= MIN_BODY_ROWS else []
            if not columns:
                continue
        # Leading rows of years are the header, not the body.
        head = 0
        while head < len(region) and _body(region[head]) and _years_only(region[head]):
            head += 1
        if len([row for row in region[head:] if _body(row)]) < MIN_BODY_ROWS:
            continue
        label_right = min(
            [columns[0][0], *(row.segments[0].x1 for row in region if not row.segments[0].figure)]
        )
        top = rows.index(region[0])
        left_edge = min(row.x0 for row in region)
        above, sections = _header_above(
            rows, top, columns, label_right, _figure_columns(body, columns), left_edge, over_years=head > 0
        )
        if head:
            above, sections = above + sections, 0  # above a row of years, every row taken is the header's
        header_rows = rows[top - sections - above : top - sections] + region[:head]
        table_rows = header_rows + rows[top - sections : top] + region[head:]
        table = _table(table_rows, len(header_rows), columns)
        if table is not None:
            tables.append(table)
    return tables


def _table(rows: list[Row], header_count: int, columns: list[tuple[float, float]]) -> PageTable | None:
    width = len(columns) + 1
    cells: list[list[str]] = []
    spans: list[list[tuple[int, int, str]]] = []  # header rows: (first, last column, text)
    label_x: list[float | None] = []
    # Each row's label: where its first line ends, and how wide its first word is (for the wrap test).
    label_ends: list[tuple[float, float] | None] = []
    for number, row in enumerate(rows):
        placed: dict[int, list[Segment]] = {}
        row_spans = []
        for position, segment in enumerate(row.segments):
            if position == 0 and not segment.figure and segment.x1 <= columns[0][0] + 1:
                placed.setdefault(0, []).append(segment)
                continue
            first, last = _column_of(segment, columns, header=number < header_count)
            if number < header_count and last > first:
                row_spans.append((first + 1, last + 1, segment.text))
            placed.setdefault(first + 1, []).append(segment)
        cells.append([_cell_text(placed[column]) if column in placed else "" for column in range(width)])
        spans.append(row_spans)
        label_x.append(placed[0][0].x0 if 0 in placed else None)
        if 0 in placed:
            first_word = placed[0][0].words[0]
            label_ends.append((placed[0][-1].x1, first_word[2] - first_word[0]))
        else:
            label_ends.append(None)
    if not any(cell for row in cells[header_count:] for cell in row[1:]):
        return None
    printed = rows  # every row, for the table's box
    # The label column is as wide as its widest line, counted before two lines merge into one label.
    label_limit = max((end[0] for end in label_ends[header_count:] if end is not None), default=0.0)
    rows, cells, spans, label_x, label_ends = _centred_labels(
        rows, cells, spans, label_x, label_ends, header_count
    )
    # A label printed on two lines (see runs_on): the first not a section's label ending in a colon, and
    # the second running on in lower case, or the first full (see wraps) and the second indented under
    # it; the figures on either line.
    space = 0.3 * min((row.height for row in rows), default=0.0)

    def wraps(first: int, second: int) -> bool:
        """Whether row ``first``'s label runs on in row ``second``'s: the first word of the second would
        not have fitted after the first line within the label column (as wide as its widest line). A
        section's label ("Sex", "Current assets") is short: the row under it fits after it."""
        top, bottom = label_ends[first], label_ends[second]
        return top is not None and bottom is not None and top[0] + space + bottom[1] > label_limit

    def runs_on(first: int, second: int) -> bool:
        """Whether row ``second``'s label is the second line of row ``first``'s: one of the two holds
        figures at most, the first is no section's label ending in a colon, and the second runs on in
        lower case, or the first is full (:func:`wraps`) and the second stands indented under it as a
        single line (a row under it at its indentation or deeper makes it a section's first row: "Type
        of institution" over "Public", "Private")."""
        top, bottom = cells[first], cells[second]
        start, first_x = label_x[second], label_x[first]
        if not top[0] or not bottom[0] or top[0].endswith(":") or (any(top[1:]) and any(bottom[1:])):
            return False
        if start is None or first_x is None:
            return False
        if bottom[0][:1].islower():
            return True  # a phrase running on ("Total designated cash" over "flow hedges")
        if not wraps(first, second):
            return False
        after = [x for x in label_x[second + 1 :] if x is not None]
        return start > first_x + 1 and (not after or after[0] < start - INDENT_SLACK)

    order: list[int] = []
    for number, line in enumerate(cells):
        before = order[-1] if order else -1
        first_x = label_x[before] if before >= 0 else None
        if (
            number > header_count
            and before >= header_count
            and not line[0]
            and any(is_figure(cell) for cell in line[1:])
            and not any(is_figure(cell) for cell in cells[before][1:])
            and any(cells[before][1:])
            and not cells[before][0].endswith(":")
            and all(not text or line[column] for column, text in enumerate(cells[before]) if column)
            # A cell's second line is words, or a year under a header ("December 31," over "2021"): a
            # figure under a text cell in a row of values ("Actual" over "1996  3,051") makes two rows.
            and (
                all(is_year(cell) for cell in line[1:] if cell)
                or not any(
                    is_figure(line[index]) for index, text in enumerate(cells[before]) if index and text
                )
            )
        ):
            # A row of text cells whose next line carries the figures ("Market for ... Purchases of" over
            # "Equity Securities  33"): one row, each cell's lines joined.
            joined = zip(cells[before], line, strict=True)
            cells[number] = [f"{top} {bottom}".strip() for top, bottom in joined]
            label_x[number] = label_x[before]
            label_ends[number] = label_ends[before]
            order.pop()
        elif number > header_count and before >= header_count and runs_on(before, number):
            if any(cells[before][1:]):
                # The figures stand on the label's first line, its second line alone under it.
                cells[before][0] = f"{cells[before][0]} {line[0]}"
                label_ends[before] = label_ends[number]
                continue
            cells[number][0] = f"{cells[before][0]} {line[0]}"
            label_x[number] = first_x
            order.pop()
        order.append(number)
    cells = [cells[number] for number in order]
    label_x = [label_x[number] for number in order]
    spans = [spans[number] for number in order]
    header_count = sum(1 for number in order if number < header_count)
    # Header rows that are the lines of one row's cells are one row with the row below: a row of two
    # cells or more side by side, none spanning, each with a cell under it ("Asian/" over "Pacific"), or
    # a row set single-spaced over cells of words. Labels of groups of columns ("Total", "Public",
    # "Private" each over three) stand apart, and so does a lone line over a row of years ("Year ended
    # December 31,"). Header rows are never joined above, so they are still ``rows``' first ones.
    tight = [
        rows[index + 1].y0 - rows[index].y1 <= LINE_GAP * rows[index].height for index in range(header_count)
    ]
    number = 0
    while number < header_count - 1:
        upper, lower = cells[number], cells[number + 1]
        filled = [column for column, text in enumerate(upper) if text]
        if (
            not spans[number]
            and len(filled) > 1
            and filled == list(range(filled[0], filled[-1] + 1))
            and all(lower[column] for column in filled)
        ) or (
            not spans[number]
            and tight[number]
            and all(
                lower[column] and not is_figure(lower[column]) and not is_figure(upper[column])
                for column in filled
            )
        ):
            cells[number + 1] = [f"{top} {bottom}".strip() for top, bottom in zip(upper, lower, strict=True)]
            for items in (cells, label_x, spans, tight):
                del items[number]
            header_count -= 1
        else:
            number += 1
    # Each column's header, read down the header rows; a spanning one over every column it spans.
    header = [""] * width
    for number in range(header_count):
        spanned = {column: text for first, last, text in spans[number] for column in range(first, last + 1)}
        for column in range(width):
            text = cells[number][column] or spanned.get(column)
            if text:
                header[column] = f"{header[column]} {text}".strip()
    levels = _levels(label_x, header_count)
    boxes = [(row.segments[0].x0, row.y0, row.x1, row.y1) for row in printed]
    bbox = (
        min(box[0] for box in boxes),
        min(box[1] for box in boxes),
        max(box[2] for box in boxes),
        max(box[3] for box in boxes),
    )
    return PageTable(
        bbox=bbox,
        rows=cells,
        header_rows=header_count,
        header=header if any(header) else [],
        levels=levels,
        ruling="aligned",
    )


def _centred_labels(
    rows: list[Row],
    cells: list[list[str]],
    spans: list[list[tuple[int, int, str]]],
    label_x: list[float | None],
    label_ends: list[tuple[float, float] | None],
    header_count: int,
) -> tuple[
    list[Row],
    list[list[str]],
    list[list[tuple[int, int, str]]],
    list[float | None],
    list[tuple[float, float] | None],
]:
    """A label on two lines with the row's figures set between them, centred on the label: a row of
    figures alone that overlaps the label line above it and the one below it (rows of a table never
    overlap otherwise) takes both lines as its label ("Investigative Matters" / "426 365" / "Received by
    AUSAs")."""
    drop: set[int] = set()
    for number in range(header_count + 1, len(cells) - 1):
        above, below = number - 1, number + 1
        if (
            above not in drop
            and not cells[number][0]
            and any(cells[number][1:])
            and cells[above][0]
            and not any(cells[above][1:])
            and cells[below][0]
            and not any(cells[below][1:])
            and rows[number].y0 < rows[above].y1
            and rows[number].y1 > rows[below].y0
        ):
            cells[number][0] = f"{cells[above][0]} {cells[below][0]}"
            label_x[number], label_ends[number] = label_x[above], label_ends[below]
            drop |= {above, below}
    if not drop:
        return rows, cells, spans, label_x, label_ends
    kept = [number for number in range(len(cells)) if number not in drop]
    return (
        [rows[number] for number in kept],
        [cells[number] for number in kept],
        [spans[number] for number in kept],
        [label_x[number] for number in kept],
        [label_ends[number] for number in kept],
    )


def _levels(label_x: list[float | None], header_count: int) -> list[int]:
    """Each row's indentation level, from where its label starts (0 for the header rows and rows with no
    label)."""
    starts = sorted({round(x, 1) for x in label_x[header_count:] if x is not None})
    steps: list[float] = []
    for start in starts:
        if not steps or start - steps[-1] > INDENT_SLACK:
            steps.append(start)
    levels = []
    for number, x in enumerate(label_x):
        if number < header_count or x is None or not steps:
            levels.append(0)
            continue
        levels.append(max(index for index, step in enumerate(steps) if step <= x + INDENT_SLACK))
    return levels
