"""Term statistics computed from token positions, for a backend whose index gives positions rather than a
BM25 score (PostgreSQL's tsvector keeps each lexeme's positions and a weight letter for its column).

It counts exactly what FTS5 counts for ``bm25()`` — the occurrences of a term (consecutive tokens, for a
word of several tokens) in each column, weighted by the column's weight, and for a pair of query words only
the occurrences within :data:`~.scoring.PAIR_DISTANCE` tokens of the other word — and turns the counts into
BM25's tf part with :func:`~.scoring.bm25_tf`. The length normalisation is relative to the average page of
the searched document (FTS5's is relative to its whole table; the SQLite backend brings it back to the
document's).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .scoring import DEFAULT_WEIGHTS, PAIR_DISTANCE, PageFacts, bm25_idf, bm25_tf

__all__ = ["Occurrence", "PositionStatistics"]

#: A token's position on the page and the column it is in (0 body, 1 headings, 2 descriptions).
Occurrence = tuple[int, int]


class PositionStatistics:
    """One document's term statistics from the positions of the query's tokens on its pages.

    Args:
        page_count: How many pages the document has.
        facts: ``(page_number, kind, numeric share)`` of each page.
        lengths: Each page's length in tokens, every column (pages missing count as empty).
        occurrences: For each page holding a query token, each token's occurrences on it.
    """

    def __init__(
        self,
        page_count: int,
        facts: Sequence[PageFacts],
        lengths: Mapping[int, int],
        occurrences: Mapping[int, Mapping[str, Sequence[Occurrence]]],
    ) -> None:
        self.page_count = page_count
        self.facts = facts
        self._lengths = lengths
        self._average = sum(lengths.values()) / page_count if page_count else 0.0
        self._occurrences = occurrences
        # Each term's starts on each page, and its IDF over the document, for the pairs.
        self._starts: dict[tuple[str, ...], dict[int, list[Occurrence]]] = {}
        self._idfs: dict[tuple[str, ...], float] = {}

    def _tf(self, page: int, starts: Sequence[Occurrence]) -> float:
        count = sum(DEFAULT_WEIGHTS[column] for _, column in starts)
        return bm25_tf(count, self._lengths.get(page, 0), self._average)

    def term_starts(self, tokens: tuple[str, ...]) -> dict[int, list[Occurrence]]:
        """Where the term starts on each page that holds it: its first token, followed by the others at
        the next positions of the same column."""
        if tokens in self._starts:
            return self._starts[tokens]
        found: dict[int, list[Occurrence]] = {}
        for page, tokens_on_page in self._occurrences.items():
            first = tokens_on_page.get(tokens[0], ())
            others = [set(tokens_on_page.get(token, ())) for token in tokens[1:]]
            starts = [
                (position, column)
                for position, column in first
                if all((position + step, column) in other for step, other in enumerate(others, start=1))
            ]
            if starts:
                found[page] = starts
        self._starts[tokens] = found
        self._idfs[tokens] = bm25_idf(self.page_count, len(found))
        return found

    def term_hits(self, word: str, tokens: tuple[str, ...]) -> list[tuple[int, float]]:
        """``(page_number, tf part)`` of each page holding the term."""
        return [(page, self._tf(page, starts)) for page, starts in sorted(self.term_starts(tokens).items())]

    def pair_hits(
        self, left: tuple[str, tuple[str, ...]], right: tuple[str, tuple[str, ...]]
    ) -> list[tuple[int, float]]:
        """``(page_number, tf part)`` of each page where the two terms stand near each other: the mean of
        the two terms' tf parts counting only their near occurrences, weighted by their IDF."""
        left_tokens, right_tokens = left[1], right[1]
        left_starts, right_starts = self.term_starts(left_tokens), self.term_starts(right_tokens)
        left_idf, right_idf = self._idfs[left_tokens], self._idfs[right_tokens]
        hits: list[tuple[int, float]] = []
        for page in sorted(left_starts.keys() & right_starts.keys()):
            near_left, near_right = _near(
                left_starts[page], len(left_tokens), right_starts[page], len(right_tokens)
            )
            if not near_left:
                continue
            tf = left_idf * self._tf(page, near_left) + right_idf * self._tf(page, near_right)
            hits.append((page, tf / (left_idf + right_idf)))
        return hits


def _near(
    first: Sequence[Occurrence], first_size: int, second: Sequence[Occurrence], second_size: int
) -> tuple[list[Occurrence], list[Occurrence]]:
    """The occurrences of each of two terms that stand within ``PAIR_DISTANCE`` tokens of the other, in
    either order and in the same column (FTS5's ``NEAR(a b, PAIR_DISTANCE)``)."""

    def close(a: Occurrence, a_size: int, b: Occurrence, b_size: int) -> bool:
        if a[1] != b[1]:
            return False
        gap = b[0] - (a[0] + a_size) if a[0] <= b[0] else a[0] - (b[0] + b_size)
        return 0 <= gap <= PAIR_DISTANCE

    near_first = [a for a in first if any(close(a, first_size, b, second_size) for b in second)]
    near_second = [b for b in second if any(close(a, first_size, b, second_size) for a in first)]
    return near_first, near_second
