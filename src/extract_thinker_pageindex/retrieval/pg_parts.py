"""Long pages for PostgreSQL's text search: a column of a page past what one ``tsvector`` holds is cut into
parts, each a row of ``pi_parts`` whose positions continue those of the parts before it."""

from __future__ import annotations

from bisect import bisect_left

from .page_text import WORD

__all__ = ["PART_CHARS", "PART_WORDS", "cut_into_parts"]

#: The most words, and characters, of one column of a page that go into one tsvector. PostgreSQL keeps
#: positions up to 16,383 in a tsvector (later ones all read 16,383) and a tsvector of at most 1 MB; a
#: column past either limit is cut into parts of this size, each a row of ``pi_parts``.
PART_WORDS = 8_000
PART_CHARS = 100_000


def cut_into_parts(text: str) -> list[str]:
    """``text`` cut into parts of at most ``PART_WORDS`` words and ``PART_CHARS`` characters, at a space
    where there is one (else before a word; a run of one word longer than a part, which PostgreSQL does
    not index, at the limit). Most texts are one part."""
    starts = [match.start() for match in WORD.finditer(text)]
    if len(text) <= PART_CHARS and len(starts) <= PART_WORDS:
        return [text]
    parts: list[str] = []
    begin = 0
    while len(text) - begin > PART_CHARS or len(starts) - bisect_left(starts, begin) > PART_WORDS:
        first = bisect_left(starts, begin)
        end = begin + PART_CHARS
        if first + PART_WORDS < len(starts):
            end = min(end, starts[first + PART_WORDS])
        space = max(text.rfind(" ", begin + 1, end), text.rfind("\n", begin + 1, end))
        last_word = starts[bisect_left(starts, end) - 1] if bisect_left(starts, end) > 0 else begin
        if space > begin:
            end = space
        elif last_word > begin:
            end = last_word
        parts.append(text[begin:end])
        begin = end
    parts.append(text[begin:])
    return parts
