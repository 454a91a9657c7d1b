"""How the pages of one document are scored for a query: BM25 with a per-document IDF, proximity, boosts.

FTS5's ``bm25()`` has two flaws for page retrieval inside one long document: its IDF is computed over the
whole table (every document sharing the file), and it is floored at ~0 for a term on half the rows or more,
so a decisive but common word ("revenue" in a 10-K) scores nothing. The retriever keeps FTS5 for what it
does well (Porter stemming, Unicode folding, postings, the BM25 term-frequency saturation and length
normalisation, heading-column weights) and replaces the IDF: for each query term it runs one scoped FTS5
query, divides FTS5's own IDF back out of ``bm25()``, and multiplies by a Lucene-style IDF computed over the
pages of the searched document only::

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
import sqlite3
from collections.abc import Mapping, Sequence

from .query import QueryPlan
from .ranking import Ranking

__all__ = [
    "DEFAULT_WEIGHTS",
    "NUMERIC_FULL",
    "PAIR_DISTANCE",
    "PAIR_WEIGHT",
    "boost_pages",
    "fts_quote",
    "score_pages",
]

#: Column weights inside the BM25 term frequency: body text, heading path, section descriptions.
DEFAULT_WEIGHTS = (1.0, 2.0, 1.0)
#: Weight of a pair of adjacent query words found near each other on a page, relative to one term.
PAIR_WEIGHT = 1.0
#: The density of numbers at which a page gets the whole numeric boost: that of a financial statement.
NUMERIC_FULL = 0.3
#: How many tokens may stand between the two words of a pair (room for the stop words the query lost).
PAIR_DISTANCE = 2


def _idf(pages: int, hits: int) -> float:
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


def score_pages(
    conn: sqlite3.Connection,
    plan: QueryPlan,
    stems: Mapping[str, tuple[str, ...]],
    first_row: int,
    page_count: int,
    *,
    proximity: bool,
) -> dict[int, float]:
    """The lexical score of each page (FTS5 row) of one document that holds a query term, higher first.

    Args:
        conn: The retriever's connection, inside a read transaction.
        plan: The query's weighted terms and phrase pairs.
        stems: FTS5's tokens for each query word.
        first_row: The document's first row in the FTS5 table.
        page_count: How many rows (pages) the document has.
        proximity: Add the bonus of phrase pairs found near each other.
    """
    (total_rows,) = conn.execute("SELECT coalesce(sum(page_count), 0) FROM pi_docs").fetchone()
    last_row = first_row + page_count - 1
    weights = ", ".join(str(weight) for weight in DEFAULT_WEIGHTS)
    sql = f"SELECT rowid, bm25(pi_fts, {weights}) FROM pi_fts WHERE pi_fts MATCH ? AND rowid BETWEEN ? AND ?"

    # One FTS5 query per distinct stem (several query words may share one), weighted by the word's
    # weight in the plan (the highest, when words share a stem).
    terms: dict[tuple[str, ...], tuple[str, float]] = {}
    for word, weight in plan.terms:
        tokens = stems.get(word, ())
        if tokens and (tokens not in terms or terms[tokens][1] < weight):
            terms[tokens] = (fts_quote(word), weight)
    # Words that stand together in the query (a phrase), as unordered near-pairs, for the proximity bonus.
    pairs: dict[tuple[tuple[str, ...], tuple[str, ...]], str] = {}
    phrase_pairs = plan.pairs if proximity else ()
    for left, right in phrase_pairs:
        if not stems.get(left) or not stems.get(right):
            continue
        key = (stems[left], stems[right])
        if key not in pairs and key[0] != key[1]:
            pairs[key] = f"NEAR({fts_quote(left)} {fts_quote(right)}, {PAIR_DISTANCE})"

    scores: dict[int, float] = {}
    fts_idfs: dict[tuple[str, ...], float] = {}
    for tokens, (expression, weight) in terms.items():
        rows = conn.execute(sql, (expression, first_row, last_row)).fetchall()
        if not rows:
            continue
        fts_idfs[tokens] = fts_idf = _fts_idf(conn, tokens, expression, total_rows)
        idf = weight * _idf(page_count, len(rows))
        for rowid, bm25 in rows:
            # bm25() is -(FTS5 idf) * (weighted, saturated, length-normalised tf): keep only the tf part.
            scores[rowid] = scores.get(rowid, 0.0) + idf * (-bm25 / fts_idf)
    for (left_stem, right_stem), expression in pairs.items():
        if left_stem not in fts_idfs or right_stem not in fts_idfs:
            continue  # a word of the pair is on no page of this document
        rows = conn.execute(sql, (expression, first_row, last_row)).fetchall()
        if not rows:
            continue
        # bm25() of a NEAR query sums idf * tf over its two words, counting only the near occurrences;
        # dividing by the sum of their FTS5 IDFs gives the IDF-weighted mean of those two tf parts.
        idf = PAIR_WEIGHT * _idf(page_count, len(rows))
        divisor = fts_idfs[left_stem] + fts_idfs[right_stem]
        for rowid, bm25 in rows:
            scores[rowid] = scores.get(rowid, 0.0) + idf * (-bm25 / divisor)
    return scores


def _fts_idf(conn: sqlite3.Connection, tokens: tuple[str, ...], expression: str, total_rows: int) -> float:
    """The IDF that FTS5's bm25() used for a term: over the whole table, floored at 1e-6."""
    if len(tokens) == 1:
        row = conn.execute("SELECT doc FROM pi_vocab WHERE term = ?", tokens).fetchone()
        hits = int(row[0]) if row is not None else 0
    else:
        (hits,) = conn.execute("SELECT count(*) FROM pi_fts WHERE pi_fts MATCH ?", (expression,)).fetchone()
    idf = math.log((total_rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6
