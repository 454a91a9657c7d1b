"""The structure of a PDF's text layer: running headers and footers, printed contents pages, and headings
from font statistics or from the PDF's outline. Works on the ``Line`` records of ``pdf_layout``."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from .pdf_layout import Line, PageLines

__all__ = [
    "body_size",
    "detect_headings",
    "find_running_lines",
    "is_toc_page",
    "normalise_title",
    "outline_headings",
    "printed_toc_entries",
]

HEADER_BAND = 0.09  # top and bottom share of the page where running headers and footers live

# A bullet or enumerator opening a list item: "•", "-", "1.", "(a)", "(iv)".
BULLET = re.compile(r"^(?:[•●▪■◦○‣∙·\-–—*]|\(?[0-9]{1,2}[.)]|\(?[a-z][.)]|\([ivx]{1,4}\))\s+(?=\S)")
_NUMBERED_PART = re.compile(r"^(part|article|chapter|book|title)\s+([0-9]+|[ivxlc]+)\b", re.IGNORECASE)
_NUMBERED_ITEM = re.compile(r"^(item|section|§)\s*[0-9]+[a-z]?\b", re.IGNORECASE)
# A numbering label that may stand apart from its title: "ITEM 1A.", "PART II", "Note 4", "3.2", "IV."
_LABEL = re.compile(
    r"^(?:(?:part|item|article|section|chapter|note|schedule|exhibit|appendix)\s*[0-9ivxlc]+[a-z]?(?:\([a-z]\))?"
    r"|[0-9]+(?:\.[0-9]+)*|[ivxlc]+|[a-z])\.?$",
    re.IGNORECASE,
)
# A line of a printed table of contents: a title, then dot leaders or a wide gap, then a page number.
_TOC_LINE = re.compile(r"(?:\.{4,}|…{2,}|\s)\s*(?:[0-9]{1,4}|[ivxlc]{1,6})$", re.IGNORECASE)
_CONTENTS = re.compile(r"\b(contents|index)\b", re.IGNORECASE)
_PAGE_NUMBER = re.compile(r"^\W*(?:page\s*)?#+(?:\s*(?:of|/)\s*#+)?\W*$")
_NOT_WORD = re.compile(r"[\W_]+")
FILENAME_TITLE = re.compile(
    r"\.(docx?|pdf|xlsx?|pptx?|indd|qxd)$|^microsoft (word|powerpoint)", re.IGNORECASE
)


def normalise_title(text: str) -> str:
    """Lower case, letters and digits only, single spaces: for comparing titles."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


# -- running headers and footers -----------------------------------------------------------------------


def _band_key(line: Line) -> str:
    return re.sub(r"\d+", "#", " ".join(line.text.lower().split()))


def find_running_lines(pages: Sequence[PageLines]) -> dict[tuple[int, int], str]:
    """Lines that are running headers or footers: ``(page position, line position) -> "header" | "footer"``.

    A line in the top (bottom) band is a header (footer) when the same text, digits ignored, stands in
    that band on at least a quarter of the pages (and on two at least). A lone page number is a footer
    or header wherever the document has two pages or more.
    """
    if len(pages) < 2:
        return {}
    seen: dict[tuple[str, str], set[int]] = {}
    candidates: list[tuple[int, int, str, str]] = []
    for page_position, page in enumerate(pages):
        top, bottom = page.height * HEADER_BAND, page.height * (1 - HEADER_BAND)
        for line_position, line in enumerate(page.lines):
            if line.bbox[3] <= top:
                band = "header"
            elif line.bbox[1] >= bottom:
                band = "footer"
            else:
                continue
            key = _band_key(line)
            seen.setdefault((band, key), set()).add(page_position)
            candidates.append((page_position, line_position, band, key))
    threshold = max(2, math.ceil(len(pages) * 0.25))
    found = {}
    for page_position, line_position, band, key in candidates:
        if len(seen[(band, key)]) >= threshold or _PAGE_NUMBER.match(key):
            found[(page_position, line_position)] = band
    return found


# -- headings from font statistics -------------------------------------------------------------------


def body_size(pages: Iterable[PageLines]) -> float:
    """The font size that most characters are set in."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            weights[line.size] += line.chars
    return weights.most_common(1)[0][0] if weights else 10.0


def _is_table_row(line: Line, page: PageLines) -> bool:
    """Other text beside the line on the same band: a row of a table or statement, not a heading."""
    height = line.bbox[3] - line.bbox[1]
    for other in page.lines:
        if other is line:
            continue
        overlap = min(line.bbox[3], other.bbox[3]) - max(line.bbox[1], other.bbox[1])
        if overlap > 0.5 * height:
            return True
    return False


def _heading_like(line: Line, body: float) -> bool:
    text = line.text
    letters = sum(char.isalpha() for char in text)
    if letters < 2 or len(text) > 150 or len(text.split()) > 18:
        return False
    if letters < 0.5 * len(text.replace(" ", "")):
        return False  # mostly figures: a statement line
    if text.endswith((":", ",", ";")) or (text.endswith(".") and not _LABEL.match(text)):
        return False  # running text, not a title ("ITEM 1." and "IV." are labels, not sentences)
    first_letter = next((char for char in text if char.isalpha()), "")
    if first_letter.islower() and not BULLET.match(text):
        return False  # a sentence going on from the line before
    if text.startswith("(") and not BULLET.match(text):
        return False  # "(in millions)", "(continued)"
    if line.max_gap > 2 * line.size and not (line.pieces == 2 and _LABEL.match(line.lead)):
        return False  # cells of a table row set apart by wide gaps (but "ITEM 1.<tab>Business" is a title)
    return line.size >= body * 1.15 or (line.bold and line.size >= body * 0.85)


def _style_key(line: Line) -> tuple[float, bool, bool, bool]:
    return (line.size, line.bold, line.caps, line.italic)


def _drop_heading_lists(
    groups: list[tuple[int, list[int]]], pages: Sequence[PageLines], running: dict[tuple[int, int], str]
) -> list[tuple[int, list[int]]]:
    """Drop runs of three or more short same-style "headings" with no text between them.

    A heading introduces content. Names in a signature block, entries of a printed contents page or a
    column of labels look like headings one by one, but they are short and follow each other with
    nothing in between. Stacked titles stay: longer ones (company / statement / note) and numbered ones
    (PART I / ITEM 1. BUSINESS / OVERVIEW).
    """
    in_heading = {(where, member) for where, members in groups for member in members}
    kept: list[tuple[int, list[int]]] = []
    run: list[tuple[int, list[int]]] = []

    def close_run() -> None:
        texts = [" ".join(pages[where].lines[member].text for member in members) for where, members in run]
        short = all(len(text.split()) <= 4 for text in texts)
        numbered = any(_NUMBERED_PART.match(text) or _NUMBERED_ITEM.match(text) for text in texts)
        if len(run) < 3 or not short or numbered:
            kept.extend(run)
        run.clear()

    previous_end: tuple[int, int] | None = None
    for where, members in groups:
        style = _style_key(pages[where].lines[members[0]])
        if run and previous_end is not None:
            between = _has_text_between(previous_end, (where, members[0]), pages, running, in_heading)
            same = _style_key(pages[run[-1][0]].lines[run[-1][1][0]]) == style
            if between or not same:
                close_run()
        run.append((where, members))
        previous_end = (where, members[-1])
    close_run()
    return kept


def _has_text_between(
    start: tuple[int, int],
    end: tuple[int, int],
    pages: Sequence[PageLines],
    running: dict[tuple[int, int], str],
    in_heading: set[tuple[int, int]],
) -> bool:
    """Whether body text stands between two lines (exclusive), in reading order across pages."""
    where, position = start[0], start[1] + 1
    while (where, position) < end:
        if position >= len(pages[where].lines):
            where, position = where + 1, 0
            continue
        if (where, position) not in running and (where, position) not in in_heading:
            return True
        position += 1
    return False


def _toc_line(line: Line) -> bool:
    return bool(_TOC_LINE.search(line.text)) and (
        ".." in line.text or "…" in line.text or line.max_gap > 2 * line.size
    )


def is_toc_page(page: PageLines) -> bool:
    """Whether a page is a printed table of contents: many lines end in a page number after leaders."""
    entries = sum(1 for line in page.lines if _toc_line(line))
    return entries >= 5 and entries >= 0.3 * len(page.lines)


_ENTRY = re.compile(r"^(?P<title>.*?[^\s.…·])[\s.…·]*\s(?P<page>[0-9]{1,4}|[ivxlc]{1,6})$", re.IGNORECASE)


def printed_toc_entries(pages: Sequence[PageLines]) -> list[tuple[int, Any]]:
    """Entries read from the printed contents pages of a text layer: ``(page index, TocEntryNode)``.

    A line ending in a page number after dot leaders or a wide gap is an entry (its title, its printed
    page); a "PART II" line without a number groups the entries under it. Levels follow indentation.
    """
    from ..model import TocEntryNode

    found: list[tuple[int, str, str | None, float]] = []  # (page index, title, printed page, x)
    for page in pages:
        if not is_toc_page(page):
            continue
        for line in page.lines:
            match = _ENTRY.match(line.text) if _toc_line(line) else None
            if match is not None and sum(char.isalpha() for char in match.group("title")) >= 2:
                found.append((page.index, match.group("title").strip(), match.group("page"), line.bbox[0]))
            elif _NUMBERED_PART.match(line.text) and len(line.text.split()) <= 12:
                found.append((page.index, line.text.strip(), None, line.bbox[0]))
    indents = sorted({round(x / 6) for *_, x in found})
    entries = []
    for number, (page_index, title, printed, x) in enumerate(found, start=1):
        depth = 1 if _NUMBERED_PART.match(title) else min(indents.index(round(x / 6)) + 1, 6)
        if any(_NUMBERED_PART.match(item[1]) for item in found) and not _NUMBERED_PART.match(title):
            depth = min(depth + 1, 6)  # entries sit under the PART lines that group them
        entries.append(
            (
                page_index,
                TocEntryNode(id=f"printed-{number}", title=title, printed_page=printed, level=f"l{depth}"),
            )
        )
    return entries


def _page_heading_groups(
    page_position: int, page: PageLines, running: dict[tuple[int, int], str], body: float
) -> list[list[int]]:
    """The line positions of each heading found on one page (see :func:`detect_headings`)."""
    found: list[list[int]] = []
    if is_toc_page(page):
        # The entries of a printed contents page are not this page's headings; only its title is.
        for position, line in enumerate(page.lines):
            if (
                _CONTENTS.search(line.text)
                and (page_position, position) not in running
                and _heading_like(line, body)
            ):
                return [[position]]
        return []
    lines = page.lines
    extent: dict[int, tuple[float, float]] = {}
    for line in lines:
        left, right = extent.get(line.block, (line.bbox[0], line.bbox[2]))
        extent[line.block] = (min(left, line.bbox[0]), max(right, line.bbox[2]))

    def wraps(line: Line, following: Line) -> bool:
        # A wrapped title fills its block and goes on at the same left edge; centred title lines
        # stacked in one block ("Company" / "Balance Sheets") are separate headings.
        left, right = extent[line.block]
        return line.bbox[2] >= right - 0.15 * (right - left) and abs(following.bbox[0] - line.bbox[0]) <= 2

    def candidate(position: int) -> bool:
        return (page_position, position) not in running and _heading_like(lines[position], body)

    position = 0
    heading_end = -1  # the line after the last heading found on this page
    while position < len(lines):
        line = lines[position]
        starts = position == 0 or lines[position - 1].block != line.block or position == heading_end
        if not starts or not candidate(position):
            position += 1
            continue
        members = [position]
        while (
            len(members) < 3
            and position + len(members) < len(lines)
            and lines[position + len(members)].block == line.block
            and _style_key(lines[position + len(members)]) == _style_key(line)
            and wraps(lines[members[-1]], lines[position + len(members)])
            and candidate(position + len(members))
        ):
            members.append(position + len(members))
        after = position + len(members)
        follows = after < len(lines) and lines[after].block == line.block
        # The first line of a bold paragraph is no heading: the same style goes on as running text.
        bold_paragraph = follows and _style_key(lines[after]) == _style_key(line) and not candidate(after)
        if not bold_paragraph and not any(_is_table_row(lines[member], page) for member in members):
            found.append(members)
            heading_end = after
        position = after
    return found


def detect_headings(
    pages: Sequence[PageLines], running: dict[tuple[int, int], str]
) -> dict[tuple[int, int], tuple[int, str, int]]:
    """Headings by font statistics: ``(page position, first line position) -> (level, text, line count)``.

    A heading starts a block (or follows another heading in it: stacked title lines) and may wrap over up
    to three lines of the same style; wrapped lines, which reach across the block, are merged.
    """
    body = body_size(pages)
    groups = [
        (page_position, members)
        for page_position, page in enumerate(pages)
        for members in _page_heading_groups(page_position, page, running, body)
    ]
    groups = _drop_heading_lists(groups, pages, running)
    texts = {
        (where, members[0]): " ".join(pages[where].lines[m].text for m in members)
        for where, members in groups
    }
    # A "heading" repeated on many pages is page furniture ("Table of Contents" links, "(in millions)").
    repeats = Counter(normalise_title(text) for text in texts.values())
    limit = max(4, len(pages) * 0.1)
    groups = [
        (where, members)
        for where, members in groups
        if repeats[normalise_title(texts[(where, members[0])])] < limit
    ]

    def numbered(text: str) -> int:
        return 1 if _NUMBERED_PART.match(text) else 2 if _NUMBERED_ITEM.match(text) else 0

    def prominence(style: tuple[float, bool, bool, bool]) -> tuple[float, bool, bool, bool]:
        return (-style[0], not style[1], not style[2], not style[3])  # larger, bold, capitals, italics first

    kinds = {(where, members[0]): numbered(texts[(where, members[0])]) for where, members in groups}
    style_of = {(where, members[0]): _style_key(pages[where].lines[members[0]]) for where, members in groups}
    # Unnumbered headings set larger than the numbered ones (a cover's title) rank with the parts; the
    # others rank below the numbered levels, by style.
    numbered_sizes = Counter(style_of[key][0] for key, kind in kinds.items() if kind)
    reference = numbered_sizes.most_common(1)[0][0] if numbered_sizes else None
    below = {
        style_of[key]
        for key, kind in kinds.items()
        if not kind and (reference is None or style_of[key][0] <= reference)
    }
    rank = {style: number for number, style in enumerate(sorted(below, key=prominence))}
    raw: dict[tuple[int, int], int] = {}
    for key in kinds:
        if kinds[key]:
            raw[key] = kinds[key]  # PART-like 1, ITEM-like 2
        elif style_of[key] in rank:
            raw[key] = 3 + rank[style_of[key]]
        else:
            raw[key] = 1
    # Levels are made dense (1, 2, 3...) in the same order, so no level is skipped.
    dense = {level: number for number, level in enumerate(sorted(set(raw.values())), start=1)}
    return {
        (where, members[0]): (
            min(dense[raw[(where, members[0])]], 6),
            texts[(where, members[0])],
            len(members),
        )
        for where, members in groups
    }


# -- headings from the outline ------------------------------------------------------------------------


def _find_title(
    title: str, page: PageLines, running: dict[tuple[int, int], str], page_position: int
) -> tuple[int, int] | None:
    """Where ``title`` stands on the page: ``(first line position, line count)``, up to three lines."""
    from rapidfuzz import fuzz

    wanted = normalise_title(title)
    if not wanted:
        return None
    lines = page.lines
    best, best_score = None, 0.0
    for position in range(len(lines)):
        if (page_position, position) in running:
            continue
        text = ""
        for extra in range(3):
            if position + extra >= len(lines):
                break
            text = f"{text} {normalise_title(lines[position + extra].text)}".strip()
            score = fuzz.ratio(wanted, text)
            if score > best_score:
                best, best_score = (position, extra + 1), score
            if len(text) > len(wanted) + 10:
                break
    return best if best_score >= 85 else None


def outline_headings(
    outline: list[list[Any]],
    pages: Sequence[PageLines],
    positions: dict[int, int],
    page_count: int,
    running: dict[tuple[int, int], str],
) -> tuple[list[tuple[int, str, int, tuple[int, int] | None]], str | None]:
    """Validate the outline and locate its titles: ``([(level, title, page_index, (line, count))], reason)``.

    Returns an empty list and the reason when the outline is unusable (targets out of range, out of
    order, or titles mostly not on their pages).
    """
    if not outline:
        return [], "the PDF has no outline"
    entries = [(int(item[0]), str(item[1]).strip(), int(item[2]) - 1) for item in outline if len(item) >= 3]
    # Bookmarks named after files ("Ex 31.1 Q4 2022.pdf") are left by PDF assembly tools, not headings.
    entries = [entry for entry in entries if not FILENAME_TITLE.search(entry[1])]
    if not entries:
        return [], "the outline names only files, not headings"
    in_range = [entry for entry in entries if 0 <= entry[2] < page_count]
    if len(in_range) < 0.9 * len(entries):
        return (
            [],
            f"{len(entries) - len(in_range)} of {len(entries)} outline entries point outside the document",
        )
    ordered = sum(1 for a, b in itertools.pairwise(in_range) if b[2] >= a[2])
    if len(in_range) > 1 and ordered < 0.9 * (len(in_range) - 1):
        return [], "the outline's page targets are out of order"
    located: list[tuple[int, str, int, tuple[int, int] | None]] = []
    checked = found = 0
    for level, title, page_index in in_range:
        where = None
        if page_index in positions:
            checked += 1
            page_position = positions[page_index]
            where = _find_title(title, pages[page_position], running, page_position)
            found += where is not None
        located.append((level, title, page_index, where))
    if checked and found < 0.5 * checked:
        return [], f"only {found} of {checked} outline titles appear on their pages"
    return located, None
