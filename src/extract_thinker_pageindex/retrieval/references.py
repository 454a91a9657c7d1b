"""Pages a question names: "the figure on page 17", "slide 5", "Table 3".

A reader who names a page means the number printed on it, which is seldom its position in the file: a
report's cover and contents come before its page 1, a journal article starts at page 488, a brochure prints
two numbered pages on each sheet of the PDF. So each page's *printed* numbers are read from its first and
last lines (a line that is only a number, "Page 5", "5 of 20", "- 5 -", or a number set apart from a running
title: "4  Graduate Studies", "Annual Report | 17") and kept only where they run in sequence with a
neighbouring page's (the next page prints a number one or two higher: two for a spread of two printed
pages), so an amount or a year at the foot of one page is not taken for its number. "Page N" then names the
pages that print N; when no page prints it (a file without printed numbers, or an article whose printed
numbers are its journal's), the Nth page of the file.

"Table 3" and "Figure 2" name the page whose caption starts with that label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "EDGE_CHARS",
    "Reference",
    "caption_pages",
    "find_references",
    "pages_printed",
    "printed_numbers",
]

#: How much of each end of a page is read for its printed number.
EDGE_CHARS = 240
#: How many lines at each end of a page may hold its printed number.
EDGE_LINES = 3
#: The largest printed page number believed (a journal's page 1,234 is; an amount or year of 2,024 is not).
MAX_PRINTED = 1999

_PAGE_WORDS = r"(?:page|pages|pg\.?|p\.|slide|slides)"
# In a question: "page 17", "Page 5", "p. 12", "slide 3", "pages 4 and 5", "pages 4-6".
_QUESTION_PAGE = re.compile(
    rf"\b{_PAGE_WORDS}\s*(\d{{1,4}})(?:\s*(?:-|–|to|and|&|,)\s*(\d{{1,4}}))?(?![\w.,]\d)", re.IGNORECASE
)
# In a question: "Table 3", "figure 2", "Fig. 4", "Exhibit 10".
_QUESTION_LABEL = re.compile(
    r"\b(table|tab\.|figure|fig\.|exhibit|chart|diagram)\s*(\d{1,3}(?:\.\d{1,2})?[a-z]?)\b", re.IGNORECASE
)
_LABEL_NAMES = {"tab.": "table", "fig.": "figure"}
_LABEL_PATTERNS = {
    "table": r"(?:table|tab\.)",
    "figure": r"(?:figure|fig\.)",
    "exhibit": r"exhibit",
    "chart": r"chart",
    "diagram": r"diagram",
}

# A line at the top or bottom of a page that prints its number.
_ALONE = re.compile(
    rf"^(?:{_PAGE_WORDS}\s*)?[-–—(\[]?\s*(\d{{1,4}})\s*[-–—)\]]?(?:\s*(?:of|/)\s*\d{{1,4}})?$", re.IGNORECASE
)
# A number set apart from a running title by a wide gap or a separator, at either end of a short line.
_LEADING = re.compile(r"^(\d{1,4})(?:\s{2,}|\s*[|•·]\s*|\u2002|\u2003)(?=\S)(?!\d)")
_TRAILING = re.compile(r"(?<=\S)(?<!\d)(?:\s{2,}|\s*[|•·]\s*|\u2002|\u2003)(\d{1,4})$")
_SHORT_LINE = 90


@dataclass(frozen=True)
class Reference:
    """A page or a labelled table or figure a question names.

    Attributes:
        pages: Page numbers named ("page 17" gives ``(17,)``; "pages 4-6" gives ``(4, 5, 6)``).
        labels: Labels named, normalised (``("table", "3")``, ``("figure", "2")``).
    """

    pages: tuple[int, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.pages or self.labels)


def find_references(question: str) -> Reference:
    """The pages and labelled tables or figures a question names."""
    pages: list[int] = []
    for match in _QUESTION_PAGE.finditer(question):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if match.group(2) and re.search(r"-|–|to", match.group(0)[match.end(1) - match.start(0) :]):
            numbers: Iterable[int] = range(first, last + 1) if 0 < last - first <= 10 else (first, last)
        else:
            numbers = (first, last)
        for number in numbers:
            if number > 0 and number not in pages:
                pages.append(number)
    labels: list[tuple[str, str]] = []
    for match in _QUESTION_LABEL.finditer(question):
        name = match.group(1).lower()
        label = (_LABEL_NAMES.get(name, name), match.group(2).lower())
        if label not in labels:
            labels.append(label)
    return Reference(tuple(pages), tuple(labels))


def _edge_lines(head: str, tail: str) -> list[str]:
    first = [line.strip() for line in head.splitlines() if line.strip()][:EDGE_LINES]
    last = [line.strip() for line in tail.splitlines() if line.strip()][-EDGE_LINES:]
    return first + last


def _line_numbers(line: str) -> list[int]:
    if len(line) > _SHORT_LINE:
        return []
    match = _ALONE.match(line)
    if match:
        return [int(match.group(1))]
    found = []
    for pattern in (_LEADING, _TRAILING):
        match = pattern.search(line)
        if match:
            found.append(int(match.group(1)))
    return found


def printed_numbers(edges: Sequence[tuple[int, str, str]]) -> dict[int, set[int]]:
    """The page numbers each page prints, where they run in sequence with a neighbour's.

    Args:
        edges: ``(page_number, head, tail)`` of every page: the first and last characters of its text.

    Returns:
        ``{page_number: printed numbers}`` of the pages that print a number in sequence.
    """
    candidates: dict[int, set[int]] = {}
    for page, head, tail in edges:
        numbers = {
            number
            for line in _edge_lines(head, tail)
            for number in _line_numbers(line)
            if 0 < number <= MAX_PRINTED
        }
        if numbers:
            candidates[page] = numbers
    accepted: dict[int, set[int]] = {}
    for page, numbers in candidates.items():
        for number in numbers:
            # A neighbour d pages on prints a number d to 2d higher (2d for spreads of two printed pages).
            if any(
                step * (value - number) > 0 and abs(step) <= abs(value - number) <= 2 * abs(step)
                for step in (-2, -1, 1, 2)
                for value in candidates.get(page + step, ())
            ):
                accepted.setdefault(page, set()).add(number)
    return accepted


def pages_printed(reference: Reference, edges: Sequence[tuple[int, str, str]], page_count: int) -> set[int]:
    """The pages a question's page numbers name: those that print the number, else the file's Nth page."""
    if not reference.pages:
        return set()
    printed = printed_numbers(edges)
    found: set[int] = set()
    for number in reference.pages:
        printing = {page for page, numbers in printed.items() if number in numbers}
        if printing:
            found |= printing
        elif number <= page_count:
            found.add(number)
    return found


def caption_pages(labels: Sequence[tuple[str, str]], bodies: Mapping[int, str]) -> set[int]:
    """The pages with a line that starts with one of the labels ("Table 3:", "Figure 2.", "Fig. 2 ")."""
    if not labels:
        return set()
    patterns = [
        re.compile(
            rf"(?m)^\W{{0,3}}{_LABEL_PATTERNS[name]}\s*{re.escape(number)}(?![\w.]\w)(?:\s*[:.|—–-]|\s+[A-Z(]|\s*$)",
            re.IGNORECASE,
        )
        for name, number in labels
    ]
    return {page for page, body in bodies.items() if any(pattern.search(body) for pattern in patterns)}
