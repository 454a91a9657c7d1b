"""The table of contents: generated from the heading structure, or read from printed contents pages."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..document.model import HeadingNode, Page, SectionNode, TocEntry, TocEntryNode

__all__ = ["comparable_title", "place_entries", "toc_from_entries", "toc_from_sections"]


def toc_from_sections(pages: Sequence[Page], *, cover: bool = False) -> list[TocEntry]:
    """One TOC entry per titled section, nested as the sections nest.

    Each entry targets its section and the page the section opens on; its level is its depth in the tree
    (``l1`` for top-level entries, capped at ``l6``), whatever heading levels the document uses.

    Args:
        pages: Pages whose section and heading nodes already carry document-unique ids.
        cover: The first page may be a cover (a PDF): headings there that would stand at the top level
            after the first one (the title) are put under the title, so that the form's name, the address
            and the other cover lines do not stand beside the parts of the document.

    Returns:
        The entries in document order, with ``parent_id`` pointing at the enclosing section's entry.
    """
    titles: dict[str, str] = {}
    for page in pages:
        for node in page.nodes:
            if isinstance(node, HeadingNode) and node.parent_id is not None:
                titles.setdefault(node.parent_id, node.content)
    entries: list[TocEntry] = []
    entry_of_section: dict[str, TocEntry] = {}
    section_parent: dict[str, str | None] = {}
    for page in pages:
        for node in page.nodes:
            if not isinstance(node, SectionNode):
                continue
            section_parent[node.id] = node.parent_id
            title = titles.get(node.id)
            if not title:
                continue
            # The nearest enclosing section that has an entry (untitled sections are skipped over).
            ancestor = node.parent_id
            walked: set[str] = set()
            while ancestor is not None and ancestor not in entry_of_section and ancestor not in walked:
                walked.add(ancestor)  # a cycle of parents must not hang the walk
                ancestor = section_parent.get(ancestor)
            parent = entry_of_section.get(ancestor) if ancestor is not None else None
            if parent is None and cover and page.index == 0 and entries and entries[0].target_page == 0:
                parent = entries[0]  # a cover line, under the document's title
            depth = 1 if parent is None else min(int(parent.level[1:]) + 1, 6)
            entry = TocEntry(
                id=f"toc-{len(entries) + 1}",
                parent_id=parent.id if parent is not None else None,
                title=title,
                description=node.description,
                target_page=page.index,
                target_section_id=node.id,
                level=f"l{depth}",
            )
            entries.append(entry)
            entry_of_section[node.id] = entry
    return entries


# Numbering before a title: "Item 7.", "Section 3:", "2.1", "1.", "4)", "IV." -- but not a bare year or word
# ("2023 Highlights", "Civil Liability" keep their first word).
_NUMBERING = re.compile(
    r"^\s*(?:(?:part|item|section|article|chapter|note)\s+[0-9ivxlc]+[a-z]?(?:\([a-z]\))?[.):]?"
    r"|[0-9]+(?:\.[0-9]+)+\.?|[0-9]+[a-z]?[.)]|[ivxlc]+[.)])\s+",
    re.IGNORECASE,
)
_LEADERS = re.compile(r"(?:(?:\s*[.·_]){3,}|(?:\s*…){2,})\s*\S*\s*$")


def comparable_title(text: str) -> str:
    """A title reduced for matching: numbering ("2.1", "Item 7.", "IV."), dot leaders with their page
    number, case, punctuation and extra spaces removed, letters spaced apart joined (see
    :func:`letters_joined`)."""
    text = _LEADERS.sub("", text)
    text = _NUMBERING.sub("", text)
    return letters_joined(" ".join(re.sub(r"[\W_]+", " ", text.lower()).split()))


#: A title of at least this many letters each set apart by a space is a letter-spaced word.
SPACED_LETTERS = 4


def letters_joined(title: str) -> str:
    """A letter-spaced title as its word: "r e f e r e n c e s" (a title set in spaced small capitals,
    whose text layer has a space after every letter) is "references"; any other title as it is. (The
    spaces between letter-spaced words are often no wider in the text than those between letters: call it
    on a title whose text holds no run of spaces.)"""
    letters = title.split()
    if len(letters) >= SPACED_LETTERS and all(len(letter) == 1 and letter.isalpha() for letter in letters):
        return "".join(letters)
    return title


#: How far (in pages) a matching section may lie from the page an entry's printed number maps to.
MAX_PAGE_DRIFT = 3


def _printed_number(entry: TocEntryNode) -> int | None:
    printed = (entry.printed_page or "").strip()
    return int(printed) if printed.isdecimal() else None


def toc_from_entries(entries: Sequence[tuple[int, TocEntryNode]], pages: Sequence[Page]) -> list[TocEntry]:
    """The TOC read from printed contents pages, as a tree linked to sections and physical pages.

    Printed page numbers are mapped to physical page indices by the offset that most entries' best title
    matches agree on (rapidfuzz ratio >= 85 on :func:`comparable_title`). Each entry is then linked to the
    matching section nearest the page its printed number maps to, and left unlinked when every match is
    more than ``MAX_PAGE_DRIFT`` pages away from it (a section of the same name elsewhere); an entry
    without a printed number takes its best match. Unlinked entries are placed by the offset.

    Args:
        entries: ``(page index where printed, entry)`` in reading order.
        pages: The document's pages (sections and headings with document-unique ids).
    """
    from rapidfuzz import fuzz, process

    sections: list[tuple[str, str, int]] = []  # (comparable title, section id, page index)
    titles: dict[str, str] = {}
    for page in pages:
        for node in page.nodes:
            if isinstance(node, HeadingNode) and node.parent_id is not None:
                titles.setdefault(node.parent_id, node.content)
    for page in pages:
        for node in page.nodes:
            if isinstance(node, SectionNode) and node.id in titles:
                sections.append((comparable_title(titles[node.id]), node.id, page.index))
    choices = [item[0] for item in sections]

    # Every section whose title matches each entry (best first); the offset from printed to physical pages
    # is the one most entries' best matches agree on.
    candidates: list[list[tuple[float, int]]] = []  # per entry: (score, position in sections)
    offsets: Counter[int] = Counter()
    for _, entry in entries:
        found = process.extract(
            comparable_title(entry.title), choices, scorer=fuzz.ratio, score_cutoff=85, limit=None
        )
        ranked = sorted(
            ((score, position) for _, score, position in found), key=lambda item: (-item[0], item[1])
        )
        candidates.append(ranked)
        number = _printed_number(entry)
        if ranked and number is not None:
            offsets[sections[ranked[0][1]][2] - number] += 1
    offset = offsets.most_common(1)[0][0] if offsets else None
    page_indices = {page.index for page in pages}

    # An entry is linked to the matching section nearest the page its printed number maps to: "Other
    # Information" is a heading of the business section as well as Item 9B's title, 115 pages later. A
    # match far from that page (over MAX_PAGE_DRIFT) is another section of the same name: not linked.
    linked: list[tuple[str | None, int | None]] = []
    for (_, entry), ranked in zip(entries, candidates, strict=True):
        number = _printed_number(entry)
        if ranked and offset is not None and number is not None:
            expected = number + offset
            _, position = min(ranked, key=lambda item: (abs(sections[item[1]][2] - expected), -item[0]))
            if abs(sections[position][2] - expected) > MAX_PAGE_DRIFT:
                linked.append((None, None))
                continue
        elif ranked:
            position = ranked[0][1]
        else:
            linked.append((None, None))
            continue
        linked.append((sections[position][1], sections[position][2]))

    result: list[TocEntry] = []
    stack: list[tuple[int, str]] = []
    for (_, entry), (linked_section, linked_page) in zip(entries, linked, strict=True):
        level = int(entry.level[1:])
        while stack and stack[-1][0] >= level:
            stack.pop()
        target = linked_page
        if (
            target is None
            and offset is not None
            and entry.printed_page
            and entry.printed_page.strip().isdecimal()
        ):
            candidate = int(entry.printed_page) + offset
            target = candidate if candidate in page_indices else None
        item = TocEntry(
            id=f"toc-{len(result) + 1}",
            parent_id=stack[-1][1] if stack else None,
            title=entry.title.strip(),
            target_page=target,
            printed_page=entry.printed_page,
            target_section_id=linked_section,
            level=f"l{min(len(stack) + 1, 6)}",
        )
        result.append(item)
        stack.append((level, item.id))
    return result


def place_entries(toc: list[TocEntry], pages: Sequence[Page]) -> None:
    """Give each TOC entry the ``bbox`` of the heading of the section it targets, when that heading has a
    box and stands on the entry's ``target_page`` (the box is on that page); in place.

    Only headings read from a PDF's text layer have boxes, so entries of other documents keep ``None``.
    """
    headings: dict[str, tuple[int, HeadingNode]] = {}
    for page in pages:
        for node in page.nodes:
            if isinstance(node, HeadingNode) and node.parent_id is not None:
                headings.setdefault(node.parent_id, (page.index, node))
    for position, entry in enumerate(toc):
        found = headings.get(entry.target_section_id) if entry.target_section_id is not None else None
        if found is not None and found[0] == entry.target_page and found[1].bbox is not None:
            toc[position] = entry.model_copy(update={"bbox": found[1].bbox})
