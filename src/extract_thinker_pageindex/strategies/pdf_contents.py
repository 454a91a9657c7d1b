"""Printed contents pages in a PDF's text layer: telling them apart, and reading their entries.

A page is a contents page when enough of its lines are entries, a title followed by a page number, and the
numbers behave like page numbers: they increase down the page and fall within the document. A number is
not taken for a page number when it is a year ("July 20, 2023"), a day after a month, an amount ("$ 125")
or a note reference ("Note 12"); a line with two or more figures is a table row, and a page with more
table rows than entries is a table, not contents. The number may be written apart from its title, as a
separate column of the page; it is paired with the title on the same baseline.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .pdf_layout import Line, PageLines

__all__ = ["ContentsEntry", "contents_entries", "is_toc_page", "leaders_to_page", "printed_toc_entries"]

_LEADERS = re.compile(r"(?:\.\s?){3,}\.|…{2,}|·{3,}|_{4,}")
# A page label at the end of a line: "12", "F-3", "A-1", "xii".
_PAGE = r"(?:[A-Z]{1,2}-)?[0-9]{1,4}|[ivxlc]{1,6}"
_TRAILING = re.compile(rf"^(?P<title>.*?\S)[\s.…·_]*\s(?P<page>{_PAGE})$", re.IGNORECASE)
# Leaders running to a page label at the end of a line, touching it or not ("...........97").
_LEADERED_PAGE = re.compile(rf"(?:{_LEADERS.pattern})[\s.…·_]*(?:{_PAGE})$", re.IGNORECASE)
_ALONE = re.compile(rf"^(?:page\s+)?(?P<page>{_PAGE})$", re.IGNORECASE)
_MONTH = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?$|\b(?:january|february|march|april"
    r"|june|july|august|september|october|november|december)$",
    re.IGNORECASE,
)
_NOT_PAGE_BEFORE = re.compile(
    r"(?:[$€£¥%#]|\bnotes?|\bno\.?|\bitem|\bsection|\bpart|\brule|\bform)$", re.IGNORECASE
)
_FIGURE = re.compile(r"^\(?[$€£]?\d[\d,.]*%?\)?$")
_CONTENTS_TITLE = re.compile(
    r"\b(?:contents|index|inhalt(?:sverzeichnis)?|sommaire|table des matières|índice|indice)\b"
    r"|目次|目录|목차",
    re.IGNORECASE,
)
_PAGE_HEADER = re.compile(r"\s+page(?:\s+no\.?|s)?$", re.IGNORECASE)
_NUMBERED_PART = re.compile(r"^(part|article|chapter|book|title)\s+([0-9]+|[ivxlc]+)\b", re.IGNORECASE)


@dataclass
class ContentsEntry:
    """One entry of a contents page: where its title line is, the title, the printed page, the indent."""

    position: int
    title: str
    page: str | None
    x: float


def _figures(text: str) -> int:
    return sum(1 for token in text.split() if _FIGURE.match(token) and any(char.isdigit() for char in token))


def _page_number(title: str, page: str, leaders: bool) -> bool:
    """Whether ``page`` after ``title`` reads as a page number (not a year, a date, an amount, a note)."""
    before = title.rstrip(" .…·_")
    if not any(char.isalpha() for char in before):
        return False
    if page.isalpha():
        return leaders  # roman numerals only after dot leaders ("PART II" is no entry of page 2)
    digits = page.rsplit("-", 1)[-1]
    value = int(digits)
    if value == 0 or (page.isdigit() and 1900 <= value <= 2100):
        return False  # a year
    if _MONTH.search(before) or _NOT_PAGE_BEFORE.search(before):
        return False  # "July 20", "$ 125", "Note 12", "Item 7"
    last = before.split()[-1]
    return not (_FIGURE.match(last) and any(char.isdigit() for char in last))  # "Revenue 1,234 56": a row


def _may_have_leaders(text: str) -> bool:
    """What :data:`_LEADERS` needs, found at C speed: four dots, or a run of ellipses, dots or rules."""
    return text.count(".") >= 4 or "……" in text or "···" in text or "____" in text


def leaders_to_page(text: str) -> bool:
    """Whether a line ends in leaders running to a page label ("2.1 PRINCIPES ....... 16", "Preface ····
    vii", "Annex ..... A-1"): a contents entry, wherever it stands."""
    return _may_have_leaders(text) and _LEADERED_PAGE.search(text) is not None


def contents_entries(page: PageLines) -> list[ContentsEntry]:
    """Lines that read as contents entries: title, leaders or a gap, page number (on the line, or a separate
    number on the same baseline to the right)."""
    lines = page.lines
    entries: list[ContentsEntry] = []
    paired: set[int] = set()
    alone = [position for position, line in enumerate(lines) if _ALONE.match(line.text)]
    numbers_alone = set(alone)
    for position, line in enumerate(lines):
        if position in paired or position in numbers_alone:
            continue
        text = line.text
        leaders = _may_have_leaders(text) and _LEADERS.search(text) is not None
        match = _TRAILING.match(text) if leaders or line.max_gap > 2 * line.size else None
        if match is not None and _page_number(match.group("title"), match.group("page"), leaders):
            title = _LEADERS.sub(" ", match.group("title")).strip(" .…·_")
            entries.append(
                ContentsEntry(position, " ".join(title.split()), match.group("page"), line.bbox[0])
            )
            continue
        # A page number written as a column of its own, on this line's baseline.
        height = line.bbox[3] - line.bbox[1]
        for other in alone:
            number = lines[other]
            overlap = min(line.bbox[3], number.bbox[3]) - max(line.bbox[1], number.bbox[1])
            if other in paired or overlap <= 0.5 * height or number.bbox[0] <= line.bbox[2]:
                continue
            found = _ALONE.match(number.text)
            assert found is not None
            if _page_number(line.text, found.group("page"), leaders):
                title = _LEADERS.sub(" ", line.text).strip(" .…·_")
                entries.append(
                    ContentsEntry(position, " ".join(title.split()), found.group("page"), line.bbox[0])
                )
                paired.add(other)
            break
    return entries


def _increasing(entries: list[ContentsEntry]) -> bool:
    """Page numbers go up down the page (per prefix: "F-1", "F-2" after "88"), allowing a few slips."""
    by_prefix: dict[str, list[int]] = {}
    for entry in entries:
        if entry.page is None or entry.page.isalpha():
            continue
        prefix, _, digits = entry.page.rpartition("-")
        by_prefix.setdefault(prefix.upper(), []).append(int(digits))
    pairs = ordered = 0
    for numbers in by_prefix.values():
        for a, b in itertools.pairwise(numbers):
            pairs += 1
            ordered += b >= a
    return pairs == 0 or ordered >= 0.8 * pairs


def is_toc_page(page: PageLines, page_count: int | None = None) -> bool:
    """Whether a page is a printed table of contents (see the module's description)."""
    entries = contents_entries(page)
    if len(entries) < 3:
        return False
    titled = any(_CONTENTS_TITLE.search(line.text) and len(line.text.split()) <= 6 for line in page.lines)
    if not titled and (len(entries) < 5 or len(entries) < 0.3 * len(page.lines)):
        return False
    if not _increasing(entries):
        return False
    if page_count is not None:
        limit = page_count + 10
        numbers = [int(e.page.rsplit("-", 1)[-1]) for e in entries if e.page and not e.page.isalpha()]
        if numbers and sum(1 for number in numbers if number <= limit) < 0.8 * len(numbers):
            return False
    used = {entry.position for entry in entries}
    rows = sum(
        1 for position, line in enumerate(page.lines) if position not in used and _figures(line.text) >= 2
    )
    return rows < len(entries) / 2


def first_entry_line(page: PageLines) -> int:
    """The position of the first entry line of a contents page (headings above it are the page's own)."""
    entries = contents_entries(page)
    return entries[0].position if entries else len(page.lines)


def printed_toc_entries(pages: Sequence[PageLines], page_count: int | None = None) -> list[tuple[int, Any]]:
    """Entries read from the printed contents pages of a text layer: ``(page index, TocEntryNode)``.

    An entry has a title and a printed page; a "PART II" line without a number groups the entries under
    it. Levels come from numbering first (PART lines above the rest), then from indentation.
    """
    from ..document.model import TocEntryNode

    found: list[tuple[int, str, str | None, float]] = []  # (page index, title, printed page, x)
    # The document's contents are its first contents page and the pages right after it that continue it;
    # later contents pages belong to a part (an index of the notes, an exhibit's own contents).
    run: list[PageLines] = []
    for page in pages:
        if is_toc_page(page, page_count):
            if run and page.index != run[-1].index + 1:
                break
            run.append(page)
        elif run:
            break
    for page in run:
        entries = {entry.position: entry for entry in contents_entries(page)}
        for position, line in enumerate(page.lines):
            entry = entries.get(position)
            if entry is not None:
                title, x = entry.title, entry.x
                above = _wrapped_from(page.lines, position, entries)
                if above is not None:  # a long title wraps: its page number is on its last line
                    title, x = f"{' '.join(above.text.split())} {title}", above.bbox[0]
                if sum(char.isalpha() for char in title) >= 2:
                    found.append((page.index, title, entry.page, x))
            elif _NUMBERED_PART.match(line.text) and len(line.text.split()) <= 12:
                title = _PAGE_HEADER.sub("", line.text).strip()  # "PART I Page": the column's header
                found.append((page.index, title, None, line.bbox[0]))
    indents = sorted({round(x / 6) for *_, x in found})
    grouped = any(_NUMBERED_PART.match(item[1]) for item in found)
    result = []
    for number, (page_index, title, printed, x) in enumerate(found, start=1):
        depth = 1 if _NUMBERED_PART.match(title) else min(indents.index(round(x / 6)) + 1, 6)
        if grouped and not _NUMBERED_PART.match(title):
            depth = min(max(depth, 1) + 1, 6)  # entries sit under the PART lines that group them
        result.append(
            (
                page_index,
                TocEntryNode(id=f"printed-{number}", title=title, printed_page=printed, level=f"l{depth}"),
            )
        )
    return result


def _wrapped_from(lines: Sequence[Line], position: int, entries: dict[int, ContentsEntry]) -> Line | None:
    """The line an entry's title starts on when the title wraps: the line right above it, not an entry
    itself (it has no page number), not a PART line or the contents title, with the entry's line
    indented under it, no gap between them, and the entry's line starting where no other entry does.

    A wrapped title's second line hangs at an indent of its own ("Item 5. Market for ... Stockholder" /
    "    Securities 16"); a group title without a page number ("Essentials") has its entries below it at
    the indent every entry of the group starts at, and they are entries of their own."""
    if position == 0 or position - 1 in entries:
        return None
    above, line = lines[position - 1], lines[position]
    if _NUMBERED_PART.match(above.text) or is_contents_line(above) or _ALONE.match(above.text):
        return None
    height = line.bbox[3] - line.bbox[1]
    gap = line.bbox[1] - above.bbox[3]
    indented = line.bbox[0] > above.bbox[0] + 2
    shared = any(abs(entry.x - line.bbox[0]) <= 2 for other, entry in entries.items() if other != position)
    return above if indented and not shared and -0.5 * height <= gap <= 0.5 * height else None


def is_contents_line(line: Line) -> bool:
    """Whether a line names a contents page ("Table of Contents", "Inhaltsverzeichnis")."""
    return bool(_CONTENTS_TITLE.search(line.text)) and len(line.text.split()) <= 6
