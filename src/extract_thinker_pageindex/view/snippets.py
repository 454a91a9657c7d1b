"""A match's snippet as plain text: the retriever's extract of a page without the page's Markdown marks, and
without a heading that the text after it repeats.

The retriever indexes each page as Markdown (``render.page_markdown``: ``#`` headings, ``-`` list items,
``>`` quotes, ``|`` table rows, and whatever marks a Markdown source kept), and SQLite's ``snippet()``
returns a stretch of that text as it stands, newlines and all. Flattened to one line, as ``search`` prints
it, a snippet reads ``###### Note 6 – Income Taxes Note 6 – Income Taxes are computed...``: the marks show,
and a heading runs into the paragraph that opens by repeating it. The marks can only be told from the
document's own punctuation while the lines are still there (a ``-`` opening a line is a bullet, one inside
a line is a dash), so the extract is cleaned line by line, before it is flattened. A page found by its
section titles alone gives an extract of those titles, one a line: each is kept apart too.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ..retrieval.base import fold_leaders
from ..retrieval.page_text import WORD

__all__ = ["SNIPPET_WORDS", "plain_snippet"]

#: How many words a snippet holds (as ``search`` prints them).
SNIPPET_WORDS = 24

# The marks that open a line of the page's Markdown: headings, list bullets (any depth), quotes.
_HEADING = re.compile(r"#{1,6}(?=\s|$)\s*")
_LINE_MARK = re.compile(r"(?:[-*+](?=\s)|>)\s*")
_FENCE = re.compile(r"(?:`{3,}|~{3,})")
_TABLE_RULE = re.compile(r"\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?")
_PIPE = re.compile(r"(?<!\\)\|")
# Emphasis and code marks of a Markdown source. A lone "*" is taken only as a pair around words, so a
# footnote's "Revenue*" keeps its star.
_STRONG = re.compile(r"\*\*|__|~~|`")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])")
# What is left of an emphasis the extract cut in two: its opening star, before a word.
_OPENING_STAR = re.compile(r"(?<![^\s(])\*(?=\w)")
# A link's target, after its text: "[the table](#rates)" shows "the table". The text may hold the
# retriever's "[word]" marks.
_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^()\s]*\)")
_SUP = re.compile(r"<sup>[^<]*</sup>|</?sup>")
# After a part that ends a sentence, a space is separation enough.
_ENDS_SENTENCE = (".", ":", ";", "!", "?", "…")


def plain_snippet(fragment: str, *, titles: Collection[str] = ()) -> str:
    """A page's extract as the view shows it: one line of plain text.

    Line by line, the Markdown marks go: heading ``#``, list ``-``/``*``/``+`` bullets, quote ``>``,
    table pipes and rule rows, code fences, emphasis and code marks, link targets and the ``<sup>note</sup>``
    of footnotes. The blocks of the page (a heading, a paragraph, a list item, a table row) are kept apart
    by `` · `` (a space after a sentence's end); a block whose words the next block opens with (a heading
    repeated by its paragraph, a line printed twice) is left out. The retriever's ``[word]`` marks and the
    ``…`` of a cut extract are kept.

    Args:
        fragment: The retriever's raw extract, newlines kept (``retriever.snippet(..., lines=True)``).
        titles: The titles of the page's sections, as the retriever indexed them: a line that is one (or,
            cut by the extract, its start or end) is a block of its own.

    Returns:
        The snippet, on one line.
    """
    parts: list[str] = []
    current: list[str] = []
    bare_titles = [_unmarked(title) for title in titles]

    def close() -> None:
        if current:
            parts.append(" ".join(current))
            current.clear()

    for raw in fragment.splitlines():
        line = raw.strip()
        if not line or _FENCE.match(line) or _TABLE_RULE.fullmatch(line):
            close()
            continue
        heading = _HEADING.match(line)
        if heading:
            close()
            parts.append(_inline(line[heading.end() :]))
            continue
        marked = False
        while mark := _LINE_MARK.match(line):  # "> - item": a list inside a quote
            line, marked = line[mark.end() :], True
        row = _table_row(line)
        core = _unmarked(line).strip(" …")
        title = bool(core) and any(whole.startswith(core) or whole.endswith(core) for whole in bare_titles)
        alone = row or title
        if marked or alone:
            close()  # a list item, a quote, a table row or a section title is a block of its own
        if row:
            line = " ".join(cell.strip() for cell in _PIPE.split(line) if cell.strip())
            line = line.replace("\\|", "|")
        current.append(_inline(line))
        if alone:
            close()
    close()
    kept = _without_repeats([part for part in parts if part.strip(" …")])
    text = ""
    for part in kept:
        if text:
            text += " " if text.endswith(_ENDS_SENTENCE) else " · "
        text += part
    return fold_leaders(text)  # as the retriever's own one-line snippet does


def _table_row(line: str) -> bool:
    """A row of a Markdown table: it opens with a pipe, or (an extract cut inside a row) holds two."""
    return line.startswith("|") or len(_PIPE.findall(line)) >= 2


def _unmarked(text: str) -> str:
    """``text`` without the retriever's ``[`` ``]`` marks (and any other brackets), spaces collapsed."""
    return " ".join(text.replace("[", "").replace("]", "").split())


def _inline(text: str) -> str:
    text = _LINK.sub(r"\1", text)
    text = _SUP.sub("", text)
    text = _OPENING_STAR.sub("", _EMPHASIS.sub(r"\1", text))
    return " ".join(_STRONG.sub("", text).split())


def _words(part: str) -> list[str]:
    return [word.casefold() for word in WORD.findall(part)]


def _without_repeats(parts: list[str]) -> list[str]:
    """``parts`` without those whose words the next part opens with: ``Note 6 – Income Taxes`` before
    ``Note 6 – Income Taxes are computed on...``, or the same line twice."""
    kept = []
    for position, part in enumerate(parts):
        words = _words(part)
        following = _words(parts[position + 1]) if position + 1 < len(parts) else []
        if not words or following[: len(words)] != words:
            kept.append(part)
    return kept
