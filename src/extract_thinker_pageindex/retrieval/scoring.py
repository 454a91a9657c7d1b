"""How the pages of one document are scored for a query: BM25 with a per-document IDF, proximity, boosts.

Every retriever backend ranks through :func:`score_pages`; a backend only counts. Plain full-text ranking
has two flaws for page retrieval inside one long document: its IDF is computed over the whole table (every
document sharing the index; FTS5's ``bm25()`` also floors it at ~0 for a term on half the rows or more, so a
decisive but common word such as "revenue" in a 10-K scores nothing), and PostgreSQL's ``ts_rank`` is no
BM25 at all. So the backends give, for each query term, the pages of the searched document that hold it
and BM25's tf part on each, its length normalised by the document's own average page (:class:`TermStatistics`:
SQLite takes it from FTS5's ``bm25()`` with FTS5's IDF divided back out and FTS5's table-wide length norm
brought back to the document's, PostgreSQL computes it from the tsvector's positions with :func:`bm25_tf`),
and the score multiplies it by a Lucene-style IDF computed over the pages of the searched document only::

    score(page) = sum over query terms t of  idf_doc(t) * tf_part(t, page)
    idf_doc(t)  = ln(1 + (N_doc - n_doc(t) + 0.5) / (n_doc(t) + 0.5))

Each pair of adjacent query words that also stand within two tokens of each other on a page ("statement
of cash flows" for the query "statement cash flows") adds a proximity bonus in the spirit of the sequential
dependence model: ``idf_doc(pair)`` times the tf part of those near occurrences. Queries drop English
stop words. Scores here are higher-is-better; the retriever negates them so that, as in FTS5, lower ranks
first.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Protocol

from .query import QueryPlan
from .ranking import Ranking

__all__ = [
    "B",
    "DEFAULT_WEIGHTS",
    "K1",
    "NUMERIC_FULL",
    "PAIR_DISTANCE",
    "PAIR_WEIGHT",
    "DocumentView",
    "PageFacts",
    "TermStatistics",
    "bm25_idf",
    "bm25_tf",
    "boost_pages",
    "demote_decoys",
    "fts_quote",
    "score_pages",
]

#: BM25's term-frequency saturation and length normalisation, FTS5's values.
K1 = 1.2
B = 0.75
#: Column weights inside the BM25 term frequency: body text, heading path, section descriptions.
DEFAULT_WEIGHTS = (1.0, 2.0, 1.0)
#: Weight of a pair of adjacent query words found near each other on a page, relative to one term.
PAIR_WEIGHT = 1.0
#: The density of numbers at which a page gets the whole numeric boost: that of a financial statement.
NUMERIC_FULL = 0.3
#: How many tokens may stand between the two words of a pair (room for the stop words the query lost).
PAIR_DISTANCE = 2


#: A page's number (1-based), its kind in the domain profile and its share of numbers.
PageFacts = tuple[int, str | None, float]


class DocumentView(Protocol):
    """One document as a backend shows it to a search, inside one consistent snapshot."""

    @property
    def version(self) -> Hashable:
        """Which indexing of the document this is: equal for two views only when its pages are the same."""
        ...

    @property
    def page_count(self) -> int:
        """How many pages the document has."""
        ...

    @property
    def facts(self) -> Sequence[PageFacts]:
        """``(page_number, kind, numeric share)`` of each page."""
        ...

    def statistics(self, tokens: Collection[str]) -> TermStatistics:
        """The term statistics of the pages for a query made of these tokens (fetched in one go, or as
        the scorer asks)."""
        ...

    def page_edges(self, chars: int) -> Sequence[tuple[int, str, str]]:
        """``(page_number, head, tail)`` of every page: the first and last ``chars`` characters of its
        body, where its printed page number stands (read only for a query that names a page)."""
        ...

    def page_bodies(self, pages: Collection[int]) -> dict[int, str]:
        """The body text of these pages (read only for a query that names a table or figure)."""
        ...


class TermStatistics(Protocol):
    """What a backend tells the scorer about the pages of one document, inside one snapshot.

    A *term* is one query word as the index's tokens (usually one stem; several make a phrase). The tf part
    is BM25's weighted, saturated, length-normalised term frequency without the IDF:
    ``f * (K1 + 1) / (f + K1 * (1 - B + B * length / average length))``, where ``f`` sums the term's
    occurrences in each column times the column's weight (:data:`DEFAULT_WEIGHTS`).
    """

    def term_hits(self, word: str, tokens: tuple[str, ...]) -> Sequence[tuple[int, float]]:
        """``(page_number, tf part)`` of each page of the document that holds the term."""
        ...

    def pair_hits(
        self, left: tuple[str, tuple[str, ...]], right: tuple[str, tuple[str, ...]]
    ) -> Sequence[tuple[int, float]]:
        """``(page_number, tf part)`` of each page where the two terms stand within :data:`PAIR_DISTANCE`
        tokens of each other, counting only those near occurrences (the mean of the two terms' tf parts,
        weighted by their IDF). Called only for terms :meth:`term_hits` found."""
        ...


def bm25_tf(weighted_count: float, length: float, average_length: float) -> float:
    """BM25's tf part, as FTS5's ``bm25()`` computes it before multiplying by the IDF.

    Args:
        weighted_count: The term's occurrences on the page, each times its column's weight.
        length: The page's length in tokens (every column).
        average_length: The average page length the normalisation is relative to.
    """
    if weighted_count <= 0.0:
        return 0.0
    norm = K1 * (1.0 - B + B * length / average_length) if average_length > 0 else K1
    return weighted_count * (K1 + 1.0) / (weighted_count + norm)


def bm25_idf(pages: int, hits: int) -> float:
    """Lucene's BM25 IDF over the pages of one document: always positive, largest for rare words."""
    return math.log(1.0 + (pages - hits + 0.5) / (hits + 0.5))


def fts_quote(text: str) -> str:
    """An FTS5 string literal: the text inside double quotes, quotes doubled. Never an operator."""
    return '"' + text.replace('"', '""') + '"'


def boost_pages(
    plan: QueryPlan,
    kinds: set[str],
    facts: Sequence[tuple[int, str | None, float]],
    scores: dict[int, float],
    ranking: Ranking,
) -> None:
    """Raise pages that hold query words by what the query's domain and form point to, as a share of
    the best lexical score: a page of the statement the query names or implies by
    ``statement_boost``, and, when the query asks for a figure, a page by its density of numbers (up
    to ``numeric_boost``, full at ``NUMERIC_FULL``, the density of a financial statement). The two add
    up, so among the number-dense pages of a figure question the statement it points to comes first. A
    page without any query word is never raised.
    """
    statement = ranking.statement_boost if kinds else 0.0
    figure = ranking.numeric_boost if plan.asks_figure and ranking.numeric_density else 0.0
    if not statement and not figure:
        return
    best = max(scores.values())
    for row, kind, numeric in facts:
        if row not in scores:
            continue
        bonus = (statement if kind in kinds else 0.0) + figure * min(1.0, numeric / NUMERIC_FULL)
        if bonus:
            scores[row] += best * bonus


#: A word on at least this share of a document's pages says nothing about which page to read: a running
#: header, the document's own name where it heads its pages, a word of its subject.
UBIQUITOUS = 0.5


def demote_decoys(
    scores: dict[int, float],
    pages_of: Mapping[tuple[str, ...], set[int]],
    weights: Mapping[tuple[str, ...], float],
    page_count: int,
) -> None:
    """Keep pages whose only query words stand on half the document's pages or more (its name in the
    running header, its subject: what exhibit certifications, signature pages and covers repeat) below
    every page that holds a written query word that tells pages apart. Nothing changes when no page holds
    such a word.

    A stricter rule, that also took a word on the first page and on a quarter of the pages for the
    document's name, cost questions on both eval sets (docs/benchmarks.md), and was left out.

    Args:
        scores: Each page's score, changed in place.
        pages_of: The pages holding each query term found.
        weights: Each term's weight in the query (a decoy is judged by the words written, weight 1).
        page_count: How many pages the document has.
    """
    if page_count < 4:
        return
    telling = {
        tokens
        for tokens, pages in pages_of.items()
        if weights.get(tokens, 0.0) >= 1.0 and len(pages) < UBIQUITOUS * page_count
    }
    content = {page for tokens in telling for page in pages_of[tokens]}
    if not content:
        return
    floor = min(scores[page] for page in content if page in scores)
    for page, score in scores.items():
        if page not in content:
            scores[page] = floor * score / (score + floor)  # below every content page, in the same order


def score_pages(
    statistics: TermStatistics,
    plan: QueryPlan,
    stems: Mapping[str, tuple[str, ...]],
    page_count: int,
    *,
    proximity: bool,
    found: set[tuple[str, ...]] | None = None,
    pages_of: dict[tuple[str, ...], set[int]] | None = None,
) -> dict[int, float]:
    """The lexical score of each page of one document that holds a query term, higher first.

    Every backend ranks through this one function: the backend only counts (``statistics``).

    Args:
        statistics: The backend's term statistics for the document, inside one snapshot.
        plan: The query's weighted terms and phrase pairs.
        stems: The index's tokens for each query word.
        page_count: How many pages the document has.
        proximity: Add the bonus of phrase pairs found near each other.
        found: A set that receives the tokens of every term found on some page.
        pages_of: A dict that receives the pages holding each term found.

    Returns:
        ``{page_number: score}`` of the pages holding a query term.
    """
    # One term per distinct stem (several query words may share one), weighted by the word's weight in
    # the plan (the highest, when words share a stem).
    terms: dict[tuple[str, ...], tuple[str, float]] = {}
    for word, weight in plan.terms:
        tokens = stems.get(word, ())
        if tokens and (tokens not in terms or terms[tokens][1] < weight):
            terms[tokens] = (word, weight)
    # Words that stand together in the query (a phrase), as unordered near-pairs, for the proximity bonus.
    pairs: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, str]] = {}
    for left, right in plan.pairs if proximity else ():
        if not stems.get(left) or not stems.get(right):
            continue
        key = (stems[left], stems[right])
        if key not in pairs and key[0] != key[1]:
            pairs[key] = (left, right)

    scores: dict[int, float] = {}
    if found is None:
        found = set()
    if pages_of is None:
        pages_of = {}
    for tokens, (word, weight) in terms.items():
        rows = statistics.term_hits(word, tokens)
        if not rows:
            continue
        found.add(tokens)
        pages_of[tokens] = {page for page, _ in rows}
        idf = weight * bm25_idf(page_count, len(rows))
        for page, tf in rows:
            scores[page] = scores.get(page, 0.0) + idf * tf
    for (left_stem, right_stem), (left, right) in pairs.items():
        if left_stem not in found or right_stem not in found:
            continue  # a word of the pair is on no page of this document
        if pages_of[left_stem].isdisjoint(pages_of[right_stem]):
            continue  # no page holds both: none can hold them near each other
        rows = statistics.pair_hits((left, left_stem), (right, right_stem))
        if not rows:
            continue
        idf = PAIR_WEIGHT * bm25_idf(page_count, len(rows))
        for page, tf in rows:
            scores[page] = scores.get(page, 0.0) + idf * tf
    return scores
