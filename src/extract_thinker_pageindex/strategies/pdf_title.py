"""A PDF's title without a model: its metadata title when it is one, else the largest text on its first
page.

PDF metadata titles are often not titles at all: an EDGAR accession number (``0000012927-19-000010``), a
file or job name (``ADBE 10K FY15``, ``Ex 99.1 Q1 2023``), a generic word (``Contents``). The metadata title
is kept only when

- it reads as words: at least 40% of its visible characters are letters (an identifier is mostly digits
  and punctuation), and fewer than half its words hold digits (``LMT Q4 2022 10K`` is a job name),
- it is not a generic heading ("Contents").

(A metadata title need not be printed in the document: "Annual Report 2023" may title a report whose
first heading is "Letter to Shareholders", so words are not required to be found on the pages.)

Otherwise the title is the largest text on the first page (a title page's title is its largest type):
the lines set in the largest size, when that size stands out from the page's body text (15% larger at
least), read together when they follow each other, leaving out lines that are identifiers themselves
(an arXiv stamp in the margin) or a generic heading ("Contents", "Abstract", "1 Introduction").
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

from .pdf_layout import Line, PageLines
from .pdf_structure import FILENAME_TITLE

__all__ = ["identifier_like", "pdf_title"]

#: The share of a title's visible characters that must be letters.
MIN_LETTER_SHARE = 0.4
#: How much larger than the page's body text the first page's largest text must be to be its title.
MIN_TITLE_RATIO = 1.15
#: The most lines read together as one title.
MAX_TITLE_LINES = 3

_GENERIC = re.compile(
    r"^(?:(?:[0-9ivx]+\.?|part [ivx0-9]+\.?)\s*)?(?:table of )?(?:contents|abstract|introduction|index|"
    r"summary|preface|foreword|overview)?$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)


def identifier_like(text: str) -> bool:
    """Whether a text is an identifier or a file name rather than words: a file name (``report.pdf``,
    ``Microsoft Word - ...``), under 40% letters (``0000012927-19-000010``, ``Ex 99.1 Q1 2023``), or half
    its words numbers and codes of letters and digits (``LMT Q4 2022 10K``)."""
    visible = [char for char in text if not char.isspace()]
    if not visible or FILENAME_TITLE.search(text.strip()):
        return True
    if sum(char.isalpha() for char in visible) < MIN_LETTER_SHARE * len(visible):
        return True
    tokens = text.split()
    coded = [token for token in tokens if any(char.isdigit() for char in token)]
    return len(tokens) > 1 and len(coded) >= 0.5 * len(tokens)


def _generic(text: str) -> bool:
    return bool(_GENERIC.match(" ".join(text.split()).strip(" .:")))


def _largest_text(page: PageLines) -> str | None:
    """The first page's largest lines, read together, when they stand out from its body text."""
    lines = [line for line in page.lines if len(_WORD.findall(line.text)) and not identifier_like(line.text)]
    if len(lines) < 2:
        return None
    body = statistics.median(line.size for line in lines)
    largest = max(line.size for line in lines)
    if largest < MIN_TITLE_RATIO * body:
        return None
    picked: list[Line] = []
    for line in lines:  # reading order
        if abs(line.size - largest) > 0.5:
            if picked:
                break  # the title's lines follow each other
            continue
        if _generic(line.text):
            if picked:
                break
            continue
        picked.append(line)
        if len(picked) == MAX_TITLE_LINES:
            break
    title = " ".join(" ".join(line.text.split()) for line in picked)
    return title or None


def pdf_title(metadata_title: str | None, pages: Sequence[PageLines]) -> str | None:
    """The title of a PDF whose (read) pages are ``pages``: the metadata title when it reads as words and
    is not a generic heading, else the largest text on the first page; ``None`` when neither gives one
    (the caller falls back to the first top-level heading)."""
    title = " ".join((metadata_title or "").split()) or None
    if title is not None and not identifier_like(title) and not _generic(title):
        return title
    return _largest_text(pages[0]) if pages else None
