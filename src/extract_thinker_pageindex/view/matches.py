"""A query run against a document's pages for the view: the matches with their scores and snippets, and
which words of the matched pages are the query's (as the retriever's own tokenizer sees them)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..retrieval.page_text import WORD

if TYPE_CHECKING:
    from ..document.model import Document
    from ..retrieval.sqlite import SQLitePageRetriever

__all__ = ["Match", "QueryResult", "run_query"]

#: The id the in-memory retriever holds the one document under.
DOC_ID = "view"


@dataclass(frozen=True)
class Match:
    """A page found for the query: its 0-based index, its score (as ``search`` prints it) and a snippet
    of its text, plain (see :func:`~.snippets.plain_snippet`), with the matched words in ``[`` ``]``."""

    page_index: int
    score: float
    snippet: str


@dataclass
class QueryResult:
    """The query's matches, best first, and a way to tell the query's words in a page's text."""

    query: str
    matches: list[Match]
    _retriever: SQLitePageRetriever
    _stems: frozenset[str] = field(default_factory=frozenset)

    @property
    def page_indexes(self) -> set[int]:
        """The 0-based indexes of the matched pages."""
        return {match.page_index for match in self.matches}

    def matching(self, words: Iterable[str]) -> set[str]:
        """Those of ``words`` (raw words of a page, punctuation included) that hold a query word, compared
        by the retriever's tokens (stems), so "Services," matches the query "service"."""
        unique = sorted({word for word in words if word.strip()})
        if not unique or not self._stems:
            return set()
        tokens = self._retriever._stem(unique)
        return {word for word in unique if self._stems.intersection(tokens.get(word, ()))}

    def marks(self, text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` character ranges of the query's words in ``text``."""
        spans = [(found.start(), found.end(), found.group()) for found in WORD.finditer(text)]
        hits = self.matching(word for _, _, word in spans)
        return [(start, end) for start, end, word in spans if word in hits]


@contextmanager
def run_query(document: Document, query: str, *, max_pages: int) -> Iterator[QueryResult]:
    """Rank the document's pages for ``query`` with an in-memory :class:`SQLitePageRetriever`, as the
    ``search`` command does for a saved index (the same page texts:
    :func:`~..document.render.page_texts`); the result can tell the query's words while the context is open.

    Raises:
        InvalidOptionError: the query has no searchable words, or ``max_pages`` is below 1.
    """
    from ..document.render import page_texts
    from ..retrieval.page_text import page_text_fields
    from ..retrieval.sqlite import SQLitePageRetriever, require_query_words
    from .snippets import SNIPPET_WORDS, plain_snippet

    require_query_words(query)
    texts = page_texts(document)
    with SQLitePageRetriever() as retriever:
        retriever.index(DOC_ID, texts)
        found = retriever.search(DOC_ID, query, max_pages=max_pages)
        matches = []
        for match in found:
            # The extract with its lines, not ``snippet()``'s one line: the page's Markdown marks are
            # only told from its own punctuation line by line.
            fragment = retriever.snippet(DOC_ID, match.page_number, query, words=SNIPPET_WORDS, lines=True)
            titles = page_text_fields(texts[match.page_number - 1])[1].splitlines()
            snippet = plain_snippet(fragment, titles=titles)
            matches.append(Match(match.page_number - 1, match.score, snippet))
        stems = retriever._stem(retriever.plan(query).words)
        yield QueryResult(
            query,
            matches,
            retriever,
            frozenset(token for tokens in stems.values() for token in tokens),
        )
