"""Heading and TOC quality against PDF outlines: the metric of ../shared/eval/structure/README.md.

For each PDF with an outline, the reference is every outline entry of level 1 or 2 whose title is printed on
its target page (as one line or two joined lines, fuzzy ratio >= 85 after lower-casing and folding
whitespace). An entry is recovered when a detected heading on the same page matches its title (fuzzy ratio
>= 85):

- strict: the whole title, letters and digits only, lower case;
- numbering-tolerant: the same with leading numbering ("1.2", "Item 7.", "PART II", "Note 4", "A-1 -")
  removed from both sides; an entry that is a label alone ("Exhibit 21", "PART II") is recovered by a
  heading that is, or opens with, that label ("Exhibit 21 Subsidiaries of the Registrant").

Also measured: headings detected per outline entry of any level (over-segmentation), level order (a
recovered level-1 entry's heading is shallower than the headings of its recovered level-2 children), and for
a TOC built without the outline: precision (entries whose title matches an outline entry), right page (among
those), and right nesting (where the outline nests an entry under another that the TOC also has, the TOC
does too).

Parsers are functions ``path -> Parsed`` (headings per page index, and optionally a TOC); ``evaluate`` scores
one. Used by ``benchmarks/pdf_text.py``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf
from rapidfuzz import fuzz

MATCH = 85
_NOT_WORD = re.compile(r"[\W_]+")
# Leading numbering, on normalised text (lower case, punctuation folded to spaces): "item 7a", "part ii",
# "note 4", "1 2", "iv", "a 1", "§ 3" (folded away), "chapter 3", "schedule a".
_NUMBERING = re.compile(
    r"^(?:(?:part|item|items|section|article|chapter|note|notes|schedule|appendix|exhibit|kapitel|abschnitt)"
    r"\s+(?:[0-9]+[a-z]?|[ivxlc]+|[a-z])(?:\s+[0-9]+[a-z]?)*"
    r"|[0-9]{1,2}(?:\s+[0-9]{1,2})*[a-z]?|[ivxlc]+|[a-z](?:\s+[0-9]+)+|[a-z])\s+(?=\S)"
)


# A label of words and a number ("exhibit 21", "part ii"), not a bare number or letter.
_WORD_LABEL = re.compile(
    r"^(?:part|item|items|section|article|chapter|note|notes|schedule|appendix|exhibit|annex)\s"
)


def normalise(text: str) -> str:
    """Lower case, letters and digits only, single spaces."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def strip_numbering(text: str) -> str:
    """A normalised title without its leading numbering (applied twice: "part ii item 7 ...")."""
    for _ in range(2):
        stripped = _NUMBERING.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    return text


@dataclass
class TocItem:
    title: str
    page: int | None  # 0-based target page
    parent: int | None  # position of the parent item in the list


@dataclass
class Parsed:
    headings: dict[int, list[tuple[int, str]]]  # page index -> [(level, text)]
    toc: list[TocItem] | None = None


@dataclass
class Reference:
    level: int
    title: str
    page: int
    parent: int | None  # position of the outline parent entry (any level) in ``entries``


@dataclass
class Score:
    name: str
    entries: int = 0  # reference entries (level 1-2, printed on their page)
    outline_entries: int = 0  # every outline entry, any level
    strict: int = 0
    tolerant: int = 0
    headings: int = 0
    order_pairs: int = 0
    order_right: int = 0
    toc_entries: int = 0
    toc_matched: int = 0
    toc_page_right: int = 0
    toc_nest_pairs: int = 0
    toc_nest_right: int = 0
    misses: list[tuple[int, str]] = field(default_factory=list)  # (page index, title) not recovered

    def share(self, part: int, whole: int) -> float | None:
        return part / whole if whole else None

    @property
    def strict_recall(self) -> float | None:
        return self.share(self.strict, self.entries)

    @property
    def tolerant_recall(self) -> float | None:
        return self.share(self.tolerant, self.entries)

    @property
    def per_entry(self) -> float | None:
        return self.share(self.headings, self.outline_entries)

    @property
    def level_order(self) -> float | None:
        return self.share(self.order_right, self.order_pairs)

    @property
    def toc_precision(self) -> float | None:
        return self.share(self.toc_matched, self.toc_entries)

    @property
    def toc_page(self) -> float | None:
        return self.share(self.toc_page_right, self.toc_matched)

    @property
    def toc_nesting(self) -> float | None:
        return self.share(self.toc_nest_right, self.toc_nest_pairs)


def outline(path: Path) -> list[Reference]:
    """Every outline entry (any level), with its parent; empty when the PDF has none."""
    with pymupdf.open(path) as document:
        toc = document.get_toc(simple=True)
    entries: list[Reference] = []
    stack: list[int] = []
    for level, title, page in toc:
        while stack and entries[stack[-1]].level >= level:
            stack.pop()
        entries.append(Reference(int(level), str(title), int(page) - 1, stack[-1] if stack else None))
        stack.append(len(entries) - 1)
    return entries


def printed_lines(path: Path) -> dict[int, list[str]]:
    """Each page's lines (and pairs of consecutive lines), lower case with whitespace folded."""
    found: dict[int, list[str]] = {}
    with pymupdf.open(path) as document:
        for page in document:
            lines = [" ".join(line.lower().split()) for line in page.get_text().splitlines()]
            lines = [line for line in lines if line]
            found[page.number] = lines + [f"{a} {b}" for a, b in itertools.pairwise(lines)]
    return found


def reference(path: Path) -> tuple[list[Reference], list[int]]:
    """The outline and the positions of its reference entries (level 1-2, printed on their page)."""
    entries = outline(path)
    if not entries:
        return entries, []
    printed = printed_lines(path)
    chosen = []
    for position, entry in enumerate(entries):
        if entry.level > 2:
            continue
        wanted = " ".join(entry.title.lower().split())
        if wanted and any(fuzz.ratio(wanted, line) >= MATCH for line in printed.get(entry.page, [])):
            chosen.append(position)
    return entries, chosen


def _matches(title: str, text: str, tolerant: bool) -> bool:
    a, b = normalise(title), normalise(text)
    if tolerant:
        if _WORD_LABEL.match(a) and strip_numbering(f"{a} x") == "x":
            # An entry that is a label alone ("Exhibit 21") names the heading that opens with it
            # ("Exhibit 21 Subsidiaries of the Registrant": the label line and the title below it).
            return b == a or b.startswith(f"{a} ")
        a, b = strip_numbering(a), strip_numbering(b)
    return bool(a) and fuzz.ratio(a, b) >= MATCH


def evaluate(name: str, path: Path, parsed: Parsed) -> Score:
    entries, chosen = reference(path)
    score = Score(name=name, entries=len(chosen), outline_entries=len(entries))
    score.headings = sum(len(items) for items in parsed.headings.values())
    found_level: dict[int, int] = {}
    for position in chosen:
        entry = entries[position]
        on_page = parsed.headings.get(entry.page, [])
        if any(_matches(entry.title, text, False) for _level, text in on_page):
            score.strict += 1
        levels = [level for level, text in on_page if _matches(entry.title, text, True)]
        if levels:
            score.tolerant += 1
            found_level[position] = min(levels)
        else:
            score.misses.append((entry.page, entry.title))
    for position, level in found_level.items():
        entry = entries[position]
        if entry.level == 2 and entry.parent is not None and entries[entry.parent].level == 1:
            parent_level = found_level.get(entry.parent)
            if parent_level is not None:
                score.order_pairs += 1
                score.order_right += parent_level < level
    if parsed.toc is not None and entries:
        matched: list[int | None] = []
        for item in parsed.toc:
            candidates = [i for i, entry in enumerate(entries) if _matches(entry.title, item.title, True)]
            # Prefer the outline entry on the same page when titles repeat ("Overview").
            same_page = [i for i in candidates if entries[i].page == item.page]
            match = (same_page or candidates or [None])[0]
            matched.append(match)
            score.toc_entries += 1
            if match is not None:
                score.toc_matched += 1
                score.toc_page_right += entries[match].page == item.page
        # Nesting is judged where the outline itself nests: an entry whose outline match has a parent that
        # some TOC entry also matched must sit under that entry (at any depth).
        entry_of = {match: position for position, match in enumerate(matched) if match is not None}
        for position, match in enumerate(matched):
            if match is None:
                continue
            outline_parent = entries[match].parent
            while outline_parent is not None and outline_parent not in entry_of:
                outline_parent = entries[outline_parent].parent
            if outline_parent is None:
                continue
            score.toc_nest_pairs += 1
            wanted, ancestor = entry_of[outline_parent], parsed.toc[position].parent
            while ancestor is not None and ancestor != wanted:
                ancestor = parsed.toc[ancestor].parent
            score.toc_nest_right += ancestor is not None
    return score
