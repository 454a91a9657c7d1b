"""A table found on a page: its cells as printed, its header, and how it reads as Markdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .grid import markdown_table

__all__ = ["PageTable"]

#: What the Markdown puts before a row label for each level of indentation (kept by Markdown renderers,
#: unlike plain spaces at a cell's start).
INDENT = "\u00a0\u00a0"


@dataclass
class PageTable:
    """One table of a page.

    Attributes:
        bbox: Its box in the page's points, its header included (its caption not).
        rows: Every row as printed, the header rows first: a cell's text with its words' spaces, a cell
            left empty on the page is ``""`` (never filled from a neighbour); a header spanning several
            columns stands in the first of them.
        header_rows: How many of ``rows`` are the header.
        header: One header text a column, the header rows read down each column (a spanning header over
            each column it spans: "Year ended December 31, 2018"); empty when none is printed.
        levels: Each row's indentation level (0: flush left), as its label is printed.
        caption: The title printed just above or below the table ("Table 3 ...", a centred title), or
            ``None``.
        ruling: ``"grid"`` for a table ruled into cells, ``"aligned"`` for one whose columns are aligned
            by whitespace (with or without rules across).
    """

    bbox: tuple[float, float, float, float]
    rows: list[list[str]]
    header_rows: int = 0
    header: list[str] = field(default_factory=list)
    levels: list[int] = field(default_factory=list)
    caption: str | None = None
    ruling: Literal["grid", "aligned"] = "aligned"

    @property
    def body(self) -> list[list[str]]:
        """The rows below the header."""
        return self.rows[self.header_rows :]

    @property
    def columns(self) -> int:
        return max((len(row) for row in self.rows), default=0)

    def markdown(self) -> str:
        """The table as a Markdown table: its header (an empty header row where none is printed), then
        each body row, a label indented by its level."""
        body = []
        levels = self.levels[self.header_rows :] if self.levels else []
        for number, row in enumerate(self.body):
            level = levels[number] if number < len(levels) else 0
            if level and row and row[0]:
                row = [INDENT * level + row[0], *row[1:]]
            body.append(row)
        header = self.header or [""] * self.columns
        return markdown_table(body, header=header)
