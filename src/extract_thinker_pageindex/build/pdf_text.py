"""The PDF text strategy: a page index from a born-digital PDF's own text layer, with no model.

- Headings come from the PDF's outline when it is valid (targets in range, in order, titles found on
  their pages), otherwise from font statistics: lines larger than the body text or bold, standing alone,
  not a table row, not a sentence. Levels follow numbering ("PART", "ARTICLE", "Item", "Section") first,
  then the rank of the heading's style (size, weight, capitals, italics).
- Running headers and footers are lines in the top or bottom band that repeat (digits ignored) across
  pages; they become header/footer nodes, never headings.
- Paragraphs and list items are read block by block in reading order (two text columns left to right).
- Tables (opt-in: PyMuPDF's table finder is slow) become table nodes; embedded raster images, image nodes.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..model import (
    FooterNode,
    HeaderNode,
    HeadingNode,
    ImageNode,
    ListItemNode,
    Node,
    Page,
    ParagraphNode,
    SectionNode,
    TableNode,
    TocEntry,
)
from ..pages import PageSpec, normalize_page_spec
from ..pdf import find_tables
from .pdf_layout import Line, PageLines, read_page_lines

__all__ = ["PdfTextResult", "parse_pdf_text", "pdf_date"]

log = logging.getLogger("extract_thinker_pageindex.pdf")

Progress = Callable[[int, int], None]

# A page with fewer visible characters than this has no usable text layer (a scan, a picture).
MIN_TEXT_CHARS = 16
HEADER_BAND = 0.09  # top and bottom share of the page where running headers and footers live
MIN_IMAGE_SIDE = 48.0  # points: smaller pictures are icons and rules, not content
MIN_IMAGE_AREA = 0.01  # share of the page area
CONTEXT_PAGES = 12  # unselected pages read to recognise running headers and footers in a selection

_BULLET = re.compile(r"^(?:[•●▪■◦○‣∙·\-–—*]|\(?[0-9]{1,2}[.)]|\(?[a-z][.)]|\([ivx]{1,4}\))\s+(?=\S)")
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
_FILENAME_TITLE = re.compile(
    r"\.(docx?|pdf|xlsx?|pptx?|indd|qxd)$|^microsoft (word|powerpoint)", re.IGNORECASE
)


@dataclass
class PdfTextResult:
    """What the text strategy read: pages, a TOC from the outline (or ``None``), metadata, blank pages."""

    pages: list[Page]
    toc: list[TocEntry] | None
    page_count: int
    title: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    pages_without_text: list[int] = field(default_factory=list)
    outline_note: str | None = None


def pdf_date(value: str | None) -> datetime | None:
    """A PDF date (``D:YYYYMMDDHHmmSS+HH'mm'``) as a datetime, or ``None`` when it cannot be read."""
    if not value:
        return None
    match = re.match(
        r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([+\-Z])(\d{2})?'?(\d{2})?'?)?",
        value.strip(),
    )
    if match is None:
        return None
    year, month, day, hour, minute, second, sign, tz_hours, tz_minutes = match.groups()
    try:
        moment = datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0)
        )
    except ValueError:
        return None
    if sign in ("+", "-"):
        hours, minutes = int(tz_hours or 0), int(tz_minutes or 0)
        if hours > 23 or minutes > 59:
            return None
        offset = timedelta(hours=hours, minutes=minutes)
        return moment.replace(tzinfo=timezone(offset if sign == "+" else -offset))
    if sign == "Z":
        return moment.replace(tzinfo=timezone.utc)
    return moment


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
    if first_letter.islower() and not _BULLET.match(text):
        return False  # a sentence going on from the line before
    if text.startswith("(") and not _BULLET.match(text):
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


def is_toc_page(page: PageLines) -> bool:
    """Whether a page is a printed table of contents: many lines end in a page number after leaders."""
    entries = 0
    for line in page.lines:
        if _TOC_LINE.search(line.text) and (
            ".." in line.text or "…" in line.text or line.max_gap > 2 * line.size
        ):
            entries += 1
    return entries >= 5 and entries >= 0.3 * len(page.lines)


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
    entries = [entry for entry in entries if not _FILENAME_TITLE.search(entry[1])]
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


# -- assembling the nodes -----------------------------------------------------------------------------


@dataclass
class PageExtras:
    """What a page holds besides text lines: tables and images, and the lines the tables cover."""

    nodes: list[tuple[float, Node]] = field(default_factory=list)  # (top y, node without id)
    covered: set[int] = field(default_factory=set)  # line positions inside a table


@dataclass
class Assembler:
    """Turns classified lines into nodes. The section stack lives across pages, so a section opened on
    one page holds the following pages' content until a heading of the same or a higher level."""

    sections: list[tuple[int, str]] = field(default_factory=list)
    section_at: dict[tuple[int, int], str] = field(default_factory=dict)  # heading line -> section id

    def page_nodes(
        self,
        page_position: int,
        page: PageLines,
        running: dict[tuple[int, int], str],
        headings: dict[tuple[int, int], tuple[int, str, int]],
        extras: PageExtras,
    ) -> list[Node]:
        """The nodes of one page; ``headings`` maps a heading's first line to (level, text, line count)."""
        nodes: list[Node] = []
        headers: list[Node] = []
        footers: list[Node] = []
        counter = 0
        current: dict[str, Any] | None = None  # the paragraph or list item being filled
        item_indents: list[float] = []

        def next_id() -> str:
            nonlocal counter
            counter += 1
            return f"p{page.index}-{counter}"

        def parent() -> str | None:
            return self.sections[-1][1] if self.sections else None

        def flush() -> None:
            nonlocal current
            if current is not None:
                kind = current.pop("type")
                nodes.append(ListItemNode(**current) if kind == "list_item" else ParagraphNode(**current))
                current = None

        # Each table or image goes before the first line (in reading order) that starts below its top.
        lines = page.lines
        pending = sorted(extras.nodes, key=lambda item: item[0])
        slots: dict[int, list[Node]] = {}
        for top, node in pending:
            slot = next(
                (
                    i
                    for i, line in enumerate(lines)
                    if line.bbox[1] >= top - 1 and (page_position, i) not in running
                ),
                len(lines),
            )
            slots.setdefault(slot, []).append(node)

        position = 0
        while position <= len(lines):
            for node in slots.get(position, []):
                flush()
                nodes.append(node.model_copy(update={"id": next_id(), "parent_id": parent()}))
            if position == len(lines):
                break
            line = lines[position]
            kind = running.get((page_position, position))
            heading = headings.get((page_position, position))
            if position in extras.covered:
                position += 1
            elif kind is not None:
                # Headers open the page and footers close it, wherever the PDF wrote them.
                flush()
                if kind == "header":
                    headers.append(HeaderNode(id=next_id(), content=line.text))
                else:
                    footers.append(FooterNode(id=next_id(), content=line.text))
                position += 1
            elif heading is not None:
                flush()
                level, text, count = heading
                while self.sections and self.sections[-1][0] >= level:
                    self.sections.pop()
                section = SectionNode(id=next_id(), parent_id=parent())
                nodes.append(section)
                self.sections.append((level, section.id))
                nodes.append(
                    HeadingNode(id=next_id(), parent_id=section.id, level=_heading_level(level), content=text)
                )
                self.section_at[(page_position, position)] = section.id
                position += count
            else:
                bullet = _BULLET.match(line.text)
                new_block = position == 0 or lines[position - 1].block != line.block
                if bullet is not None:
                    flush()
                    indent = line.bbox[0]
                    known = [value for value in item_indents if abs(value - indent) < 4]
                    if not known:
                        item_indents.append(indent)
                        item_indents.sort()
                    depth = min(item_indents.index(known[0] if known else indent) + 1, 6)
                    current = {
                        "type": "list_item",
                        "id": next_id(),
                        "parent_id": parent(),
                        "level": f"l{depth}",
                        "content": line.text[bullet.end() :],
                    }
                elif current is None or new_block:
                    flush()
                    current = {
                        "type": "paragraph",
                        "id": next_id(),
                        "parent_id": parent(),
                        "content": line.text,
                    }
                else:
                    text = current["content"]
                    if text.endswith("-") and line.text[:1].islower():
                        current["content"] = text[:-1] + line.text  # a word hyphenated across lines
                    else:
                        current["content"] = f"{text} {line.text}"
                position += 1
        flush()
        return headers + nodes + footers


def _heading_level(level: int) -> Any:
    return f"h{min(max(level, 1), 6)}"


# -- tables and images --------------------------------------------------------------------------------


def _bbox(rect: Any, page: PageLines) -> tuple[int, int, int, int] | None:
    x0 = max(0, math.floor(rect[0]))
    y0 = max(0, math.floor(rect[1]))
    x1 = min(math.ceil(page.width), math.ceil(rect[2]))
    y1 = min(math.ceil(page.height), math.ceil(rect[3]))
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _page_tables(pdf_page: Any, page: PageLines, extras: PageExtras) -> None:
    for table in find_tables(pdf_page):
        box = _bbox(table.bbox, page)
        if box is None:
            continue
        try:
            content = table.to_markdown(clean=False).strip()
        except Exception:  # PyMuPDF's header detection can fail on odd tables; the rows still are data
            rows = [
                " | ".join("" if cell is None else " ".join(str(cell).split()) for cell in row)
                for row in table.extract()
            ]
            content = "\n".join(f"| {row} |" for row in rows)
        extras.nodes.append((box[1], TableNode(id="t", kind="data", bbox=box, content=content)))
        for position, line in enumerate(page.lines):
            x = (line.bbox[0] + line.bbox[2]) / 2
            y = (line.bbox[1] + line.bbox[3]) / 2
            if box[0] <= x <= box[2] and box[1] <= y <= box[3]:
                extras.covered.add(position)


def _image_png(document: Any, xref: int) -> bytes | None:
    import pymupdf

    try:
        pixmap = pymupdf.Pixmap(document, xref)
        if pixmap.n - pixmap.alpha >= 4 or pixmap.colorspace is None or pixmap.colorspace.n not in (1, 3):
            pixmap = pymupdf.Pixmap(pymupdf.csRGB, pixmap)
        return bytes(pixmap.tobytes("png"))
    except (RuntimeError, ValueError) as exc:
        log.info("image xref %s could not be converted to PNG: %s", xref, exc)
        return None


def _page_images(
    pdf_page: Any, page: PageLines, decorative: set[int]
) -> list[tuple[int, tuple[int, int, int, int]]]:
    found: list[tuple[int, tuple[int, int, int, int]]] = []
    listed = pdf_page.get_images(full=True)  # the cheap look at the page's resources first
    if not listed:
        return found
    page_area = page.width * page.height
    # Placements come from one layout pass. Asking PyMuPDF for their xrefs makes it hash every image,
    # so each placement is matched to the page's images by pixel size, hashing only when that is ambiguous.
    by_size: dict[tuple[int, int], list[int]] = {}
    for item in listed:
        by_size.setdefault((item[2], item[3]), []).append(item[0])
    ambiguous = any(len(set(xrefs)) > 1 for xrefs in by_size.values())
    for info in pdf_page.get_image_info(xrefs=ambiguous):
        if ambiguous:
            xref = info.get("xref", 0)
        else:
            candidates = by_size.get((info.get("width"), info.get("height")), [])
            xref = candidates[0] if candidates else 0
        if xref <= 0 or xref in decorative:
            continue  # inline images have no xref to extract
        x0, y0, x1, y1 = info["bbox"]
        width, height = x1 - x0, y1 - y0
        if min(width, height) < MIN_IMAGE_SIDE or width * height < MIN_IMAGE_AREA * page_area:
            continue
        box = _bbox(info["bbox"], page)
        if box is not None:
            found.append((xref, box))
    return found


# -- the strategy ---------------------------------------------------------------------------------------


def _text_flags() -> int:
    import pymupdf

    return int(pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_LIGATURES & ~pymupdf.TEXT_PRESERVE_IMAGES)


def parse_pdf_text(
    data: bytes,
    *,
    name: str,
    pages: PageSpec | None = None,
    use_outline: bool = True,
    tables: bool = False,
    images: bool = True,
    password: str | None = None,
    progress: Progress | None = None,
) -> PdfTextResult:
    """Read a PDF's text layer into pages of nodes.

    Args:
        data: The PDF bytes.
        name: How messages name the document (its quoted file name).
        pages: A 1-based page selection, or ``None`` for all pages.
        use_outline: Take headings and the TOC from a valid outline.
        tables: Run PyMuPDF's table finder (slow) and make table nodes.
        images: Make image nodes (with PNG bytes) for embedded pictures that are not tiny or decorative.
        password: For encrypted PDFs.
        progress: Called as ``progress(done, total)`` after each page is read.

    Raises:
        DocumentLoadError, EmptyDocumentError: from opening the PDF.
        PageSpecError: ``pages`` does not fit the document.
    """
    from ..pdf import PYMUPDF_LOCK, open_pdf, pdf_errors

    with open_pdf(data, password=password, name=name) as document, PYMUPDF_LOCK, pdf_errors(name):
        page_count = document.page_count
        selected = normalize_page_spec(pages, page_count)
        indices = [index for index in range(page_count) if selected is None or index in selected]
        flags = _text_flags()
        read: list[PageLines] = []
        extras: list[PageExtras] = []
        image_places: list[list[tuple[int, tuple[int, int, int, int]]]] = []
        for done, index in enumerate(indices, start=1):
            pdf_page = document[index]
            page = read_page_lines(pdf_page, index, flags)
            read.append(page)
            page_extras = PageExtras()
            if tables and page.text_chars:
                _page_tables(pdf_page, page, page_extras)
            extras.append(page_extras)
            image_places.append(_page_images(pdf_page, page, set()) if images else [])
            if progress is not None:
                progress(done, len(indices))

        # The same picture on many pages is a logo or a rule: leave it out.
        usage = Counter(xref for places in image_places for xref in {xref for xref, _ in places})
        decorative = {xref for xref, count in usage.items() if count >= max(3, 0.25 * len(read))}
        cache: dict[int, bytes | None] = {}
        for places, page_extras in zip(image_places, extras, strict=True):
            for xref, box in places:
                if xref in decorative:
                    continue
                if xref not in cache:
                    cache[xref] = _image_png(document, xref)
                if cache[xref] is not None:
                    page_extras.nodes.append(
                        (box[1], ImageNode(id="i", kind="other", bbox=box, image_data=cache[xref]))
                    )
        outline = document.get_toc(simple=True) if use_outline else []
        metadata = dict(document.metadata or {})
        # Running headers and footers are told by repetition across the document, so a selection of a
        # few pages is judged next to a sample of the others: selecting a page never changes its nodes.
        unread = [index for index in range(page_count) if selected is not None and index not in selected]
        step = max(1, len(unread) // CONTEXT_PAGES)
        context = [read_page_lines(document[index], index, flags) for index in unread[::step][:CONTEXT_PAGES]]

    running = {key: kind for key, kind in find_running_lines([*read, *context]).items() if key[0] < len(read)}
    positions = {page.index: position for position, page in enumerate(read)}
    located: list[tuple[int, str, int, tuple[int, int] | None]] = []
    note = None
    if use_outline:
        located, note = outline_headings(outline, read, positions, page_count, running)
        if note is not None and outline:
            log.warning("%s: outline ignored: %s; headings come from font statistics.", name, note)

    headings: dict[tuple[int, int], tuple[int, str, int]] = {}
    if located:
        top = min(level for level, *_ in located)
        for level, _title, page_index, where in located:
            if where is not None and page_index in positions:
                key = (positions[page_index], where[0])
                if key not in headings:
                    lines = read[key[0]].lines[where[0] : where[0] + where[1]]
                    headings[key] = (level - top + 1, " ".join(line.text for line in lines), where[1])
    else:
        headings = detect_headings(read, running)

    assembler = Assembler()
    result_pages = []
    for position, (page, page_extras) in enumerate(zip(read, extras, strict=True)):
        result_pages.append(
            Page(index=page.index, nodes=assembler.page_nodes(position, page, running, headings, page_extras))
        )

    toc = _outline_toc(located, positions, assembler) if located else None
    title = (metadata.get("title") or "").strip() or None
    if title is not None and _FILENAME_TITLE.search(title):
        title = None
    return PdfTextResult(
        pages=result_pages,
        toc=toc,
        page_count=page_count,
        title=title,
        author=(metadata.get("author") or "").strip() or None,
        created_at=pdf_date(metadata.get("creationDate")),
        updated_at=pdf_date(metadata.get("modDate")),
        pages_without_text=[page.index for page in read if page.text_chars < MIN_TEXT_CHARS],
        outline_note=note,
    )


def _outline_toc(
    located: list[tuple[int, str, int, tuple[int, int] | None]],
    positions: dict[int, int],
    assembler: Assembler,
) -> list[TocEntry]:
    """The outline as a TOC tree, each entry linked to the section its title opened (when found)."""
    entries: list[TocEntry] = []
    stack: list[tuple[int, str]] = []  # (outline level, entry id)
    for level, title, page_index, where in located:
        while stack and stack[-1][0] >= level:
            stack.pop()
        section = None
        if where is not None and page_index in positions:
            section = assembler.section_at.get((positions[page_index], where[0]))
        entry = TocEntry(
            id=f"toc-{len(entries) + 1}",
            parent_id=stack[-1][1] if stack else None,
            title=title,
            target_page=page_index,
            target_section_id=section,
            level=f"l{min(len(stack) + 1, 6)}",
        )
        entries.append(entry)
        stack.append((level, entry.id))
    return entries
