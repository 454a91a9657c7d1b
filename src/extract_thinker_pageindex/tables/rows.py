"""A page's words as printed rows and the pieces of each row that stand apart (a table's cells).

A row is the words whose middles stand at one height, across the whole page; a gap wider than about an
em between two words starts a new segment. A segment is what a table's cell holds on one line: "Cash and
cash equivalents", "$ 7,637", "(1,234)", "2018". Whether a segment is a figure is read from its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Row", "Segment", "Word", "is_figure", "is_year", "page_rows", "text_columns"]

#: ``(x0, y0, x1, y1, text)`` of one word, in the page's points.
Word = tuple[float, float, float, float, str]

#: A gap wider than this many times the row's text height parts two segments (a space is about a third).
SEGMENT_GAP = 1.0
#: A segment of this many words or more is a line of running text, not a cell.
PROSE_WORDS = 7
#: Rows with running text on each side of the page's middle, at least this many, make a two-column page.
COLUMN_ROWS = 3

# A printed figure: a currency sign, a sign or an opening parenthesis, digits with thousands separators and
# decimals, a closing parenthesis, a percent sign, a unit suffix, or a dash standing for nothing.
_FIGURE = re.compile(
    r"""^(
        [-+−–]?[$€£¥]?\s?[-+−–]?\(?[$€£¥]?\s?\d[\d,.\u202f\u00a0 ]*\d?\)?\s?(%|pts?|bps|x|[kmb]n?)?\)?
        (\*{1,3}|[†‡]+|\([a-z]\))?
      | [-—–‒―]+ | n/?a | nm | —\s?% | \*+
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
_CURRENCIES = frozenset("$€£¥")
# The characters a figure's text may open with (see _FIGURE).
_FIGURE_OPENERS = frozenset("0123456789-+−–—‒―$€£¥(*nN")
_YEAR = re.compile(r"^(19|20)\d\d$")
# A footnote mark standing alone after a cell's text: (1), (a), *, †, or a superscript digit.
FOOTNOTE = re.compile(r"^(\(\w{1,2}\)|\*{1,3}|[†‡§]+|[¹²³⁴⁵⁶⁷⁸⁹⁰]+)$")


def is_figure(text: str) -> bool:
    """Whether a cell's text is a figure (or a currency sign, or a dash that stands for none)."""
    text = text.strip()
    return bool(text) and (text in _CURRENCIES or _FIGURE.match(text) is not None)


def is_year(text: str) -> bool:
    """Whether a cell's text is a year (a column header, not a value)."""
    return _YEAR.match(text.strip()) is not None


class Segment:
    """Words of one row that stand together, left to right (read once built: its box, text and kind are
    computed on first use and kept)."""

    __slots__ = ("_figure", "_text", "words", "x0", "x1")

    def __init__(self, words: list[Word], x1: float | None = None) -> None:
        self.words = words
        self.x0 = words[0][0]
        self.x1 = max([word[2] for word in words]) if x1 is None else x1  # the caller may know it
        self._text: str | None = None
        self._figure: bool | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = " ".join(word[4] for word in self.words)
        return self._text

    @property
    def figure(self) -> bool:
        """A figure, with or without a footnote mark after it."""
        if self._figure is None:
            # A figure opens with a digit, a sign, a currency, a parenthesis, a dash, "n/a" or "nm", or an
            # asterisk: the first word that is no footnote mark settles running text without the pattern.
            opening = next((word[4] for word in self.words if FOOTNOTE.match(word[4]) is None), None)
            if opening is not None and opening[:1] not in _FIGURE_OPENERS:
                self._figure = False
            else:
                kept = [word[4] for word in self.words if FOOTNOTE.match(word[4]) is None]
                self._figure = is_figure(" ".join(kept or [self.words[0][4]]))
        return self._figure

    def __repr__(self) -> str:
        return f"Segment({self.text!r}, {self.x0:.1f}-{self.x1:.1f})"


@dataclass
class Row:
    """Words printed on one line of the page, as segments left to right."""

    y0: float
    y1: float
    segments: list[Segment] = field(default_factory=list)

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def x0(self) -> float:
        return self.segments[0].x0

    @property
    def x1(self) -> float:
        return self.segments[-1].x1

    @property
    def text(self) -> str:
        return " ".join(segment.text for segment in self.segments)


def page_rows(words: list[Word]) -> list[Row]:
    """The page's rows, top to bottom, each cut into segments at wide gaps.

    Words join the row whose middle band holds their middle; a row's band is where its words overlap, so a
    superscript mark stays on its line and the next line, a line pitch below, does not join.
    """
    rows: list[list[Word]] = []
    low = high = 0.0
    keyed = [((word[1] + word[3]) / 2, word[0], word) for word in words]
    keyed.sort()
    for middle, _x0, word in keyed:
        if rows and low <= middle <= high:
            rows[-1].append(word)
        else:
            rows.append([word])
            low, high = word[1], word[3]
    result = []
    for members in rows:
        if len(members) == 1:
            word = members[0]
            result.append(Row(word[1], word[3], [Segment(members, word[2])]))
            continue
        members.sort()
        heights = sorted([word[3] - word[1] for word in members])
        gap = SEGMENT_GAP * heights[len(heights) // 2]
        first = members[0]
        pieces: list[list[Word]] = [[first]]
        ends = [first[2]]  # each piece's right edge
        right = first[2]
        top, bottom = first[1], first[3]
        currency = first[4] in _CURRENCIES
        for word in members[1:]:
            x0, y0, x1, y1, text = word
            # A currency sign opens its column's cell, however close it stands to the figure before it.
            if x0 - right <= gap and text not in _CURRENCIES:
                pieces[-1].append(word)
                if x1 > ends[-1]:
                    ends[-1] = x1
            else:
                pieces.append([word])
                ends.append(x1)
                currency = currency or text in _CURRENCIES
            right = x1
            if y0 < top:
                top = y0
            if y1 > bottom:
                bottom = y1
        segments = [Segment(piece, end) for piece, end in zip(pieces, ends, strict=True)]
        if len(segments) > 1 and currency:
            segments = _currency_joined(segments)
        result.append(Row(top, bottom, segments))
    return result


def _currency_joined(segments: list[Segment]) -> list[Segment]:
    """A currency sign printed apart from its figure ("$" at the column's left edge, "7,637" at its right)
    is one cell with it."""
    joined: list[Segment] = []
    for segment in segments:
        if joined and joined[-1].text in _CURRENCIES and is_figure(segment.text):
            joined[-1] = Segment(joined[-1].words + segment.words)
        else:
            joined.append(segment)
    return joined


def text_columns(rows: list[Row], width: float) -> list[list[Row]]:
    """The page's rows as the detector should see them: on a page of two text columns, a row that holds
    a line of running text on one side of the middle is cut there, so that a table in one column is not
    read together with the prose beside it. Returns the rows of the left column (with the rows not cut)
    and those of the right one; on any other page, the rows as they are."""
    middle = width / 2

    def prose(segment: Segment) -> bool:
        return len(segment.words) >= PROSE_WORDS and not segment.figure

    left = sum(1 for row in rows if any(prose(item) and item.x1 <= middle for item in row.segments))
    right = sum(1 for row in rows if any(prose(item) and item.x0 >= middle for item in row.segments))
    if left < COLUMN_ROWS or right < COLUMN_ROWS:
        return [rows]
    first: list[Row] = []
    second: list[Row] = []
    for row in rows:
        if not any(prose(item) and (item.x1 <= middle or item.x0 >= middle) for item in row.segments):
            first.append(row)
            continue
        for side, keep in ((first, lambda item: item.x1 <= middle), (second, lambda item: item.x0 >= middle)):
            segments = [item for item in row.segments if keep(item)]
            if segments:
                side.append(Row(row.y0, row.y1, segments))
    return [first, second]
