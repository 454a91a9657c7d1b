"""What every page retriever does, whatever holds its pages: the ``PageRetriever`` protocol and the base
class that implements its shared part once.

A backend (:class:`~extract_thinker_pageindex.retrieval.sqlite.SQLitePageRetriever` on an SQLite FTS5 file,
:class:`~extract_thinker_pageindex.retrieval.postgres.PostgresPageRetriever` on a PostgreSQL server) stores
pages and finds the pages holding a query's words. Everything that decides *which* pages rank first lives
here and in :mod:`.scoring`, so both backends rank alike: the options, the text a page gives the index,
query analysis (:mod:`.query`), the domain profile, the per-document BM25 sum and proximity bonus
(:func:`.scoring.score_pages`), the boosts, and the order of the answer.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from ..errors import InvalidOptionError, NoMatchError, RetrieverError
from .page_text import Page, join_split_words, page_facts, page_list, page_text_fields, title_zone
from .profiles import FINANCE, GENERAL_SYNONYMS, RetrievalProfile
from .query import QueryPlan, analyse_query, query_words
from .ranking import Ranking
from .references import EDGE_CHARS, Reference, caption_pages, find_references, pages_printed
from .respelling import document_spellings, lowered_text
from .scoring import DocumentView, PageFacts, TermStatistics, boost_pages, demote_decoys, score_pages

__all__ = [
    "BasePageRetriever",
    "Memo",
    "PageMatch",
    "PageRetriever",
    "PageRow",
    "fold_leaders",
    "require_query_words",
]

_LEADERS = re.compile(r"(?:\s*\.){4,}")
#: A page as the backends store it: body text, heading path, descriptions; its kind and share of numbers.
PageRow = tuple[str, str, str, str | None, float]


_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class Memo(Generic[_K, _V]):
    """A few recent results, the least recently used dropped first (callers hold their own lock)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[_K, _V] = OrderedDict()

    def get(self, key: _K) -> _V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: _K, value: _V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


@dataclass(frozen=True)
class PageMatch:
    """A page found by a search.

    Attributes:
        page_number: 1-based position of the page in the list that was indexed.
        score: The page's score, negated so that lower ranks first (the FTS5 convention).
    """

    page_number: int
    score: float


def require_query_words(query: object) -> list[str]:
    """The searchable words of a query that must have some (a loader's fixed query, the CLI's ``-q``).

    Raises:
        InvalidOptionError: the query is not a string, or holds only stop words and punctuation.
    """
    words = query_words(query) if isinstance(query, str) else []
    if not words:
        raise InvalidOptionError(
            f"The query {query!r} has no searchable words (stop words and punctuation are ignored); "
            "name what the pages you need talk about."
        )
    return words


@runtime_checkable
class PageRetriever(Protocol):
    """What ``DocumentLoaderRAG``, the batch indexer and the CLI need of a retriever.

    Both :class:`SQLitePageRetriever` and :class:`PostgresPageRetriever` implement it; so may a
    retriever of your own.
    """

    def index(self, document_id: str, pages: Iterable[Page] | str | Mapping[str, Any]) -> None: ...

    def search(self, document_id: str, query: str, max_pages: int = 5) -> list[PageMatch]: ...

    def delete(self, document_id: str) -> bool: ...

    def __contains__(self, document_id: object) -> bool: ...

    def page_count(self, document_id: str) -> int: ...

    def document_ids(self) -> list[str]: ...

    def snippet(
        self, document_id: str, page_number: int, query: str, *, words: int = 24, lines: bool = False
    ) -> str: ...

    def close(self) -> None: ...


class BasePageRetriever(ABC):
    """The shared part of every retriever: options, page text, query analysis, ranking, answers.

    A backend implements the storage hooks (``_write``, ``_remove``, ``_view``, ``_tokens``,
    ``_highlight``, the document list) and its own lifecycle.

    Args:
        ranking: The ranking's switches and weights (:class:`Ranking`).
        profile: The domain profile (``FINANCE`` by default; ``None`` for none).
        synonyms: More phrases searched with a query phrase, on top of the general ones.

    Raises:
        InvalidOptionError: an option has a value that cannot work.
    """

    #: A copy pickled to another process or machine reaches the same index (a database server), so batch
    #: workers may write to it themselves. False for a file on one machine.
    shared_across_machines: ClassVar[bool] = False
    #: Whether the index was opened for searching only (``index`` and ``delete`` then raise).
    read_only: bool = False
    #: Why it is read-only, for the error a write gets.
    _read_only_reason = "it was opened with read_only=True"

    def __init__(
        self,
        *,
        ranking: Ranking | None = None,
        profile: RetrievalProfile | None = FINANCE,
        synonyms: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        if ranking is not None and not isinstance(ranking, Ranking):
            raise InvalidOptionError(f"ranking must be a Ranking; got {type(ranking).__name__}.")
        if profile is not None and not isinstance(profile, RetrievalProfile):
            raise InvalidOptionError(
                f"profile must be a RetrievalProfile or None; got {type(profile).__name__}."
            )
        #: The ranking's switches and weights.
        self.ranking = ranking or Ranking()
        #: The domain profile (``FINANCE`` by default; ``None`` for none).
        self.profile = profile
        if synonyms is not None and not isinstance(synonyms, Mapping):
            raise InvalidOptionError(
                f"synonyms must map a phrase to the phrases searched with it; got {type(synonyms).__name__}."
            )
        merged: dict[str, tuple[str, ...]] = dict(GENERAL_SYNONYMS)
        for phrase, given in (synonyms or {}).items():
            if isinstance(given, str):
                added: tuple[str, ...] = (given,)
            elif isinstance(given, Iterable) and all(isinstance(item, str) for item in given):
                added = tuple(given)
            else:
                raise InvalidOptionError(f"synonyms[{phrase!r}] must be a string or a list of strings.")
            merged[str(phrase).lower()] = (*merged.get(str(phrase).lower(), ()), *added)
        self._synonyms = merged
        # The profile's own synonyms join them only for a query the profile acts on (see boost_pages).
        self._profile_synonyms: dict[str, tuple[str, ...]] = dict(merged)
        if profile is not None:
            for phrase, expansions in profile.synonyms.items():
                self._profile_synonyms[phrase] = (*self._profile_synonyms.get(phrase, ()), *expansions)
        self._stems: dict[str, tuple[str, ...]] = {}
        # What a document's queries share: the spellings found in it for missing words, by its version.
        self._spellings: Memo[tuple[str, Hashable], dict[str, tuple[str, ...]]] = Memo(8)
        self._spellings_lock = threading.Lock()
        self._texts: Memo[tuple[str, Hashable], str] = Memo(1)

    # -- the backend's part ---------------------------------------------------------------------------

    @abstractmethod
    def _write(self, document_id: str, rows: list[PageRow]) -> None:
        """Replace the document's pages by ``rows`` in one transaction."""

    @abstractmethod
    def _remove(self, document_id: str) -> bool:
        """Remove the document's pages; whether it was indexed."""

    @abstractmethod
    def _view(self, document_id: str) -> AbstractContextManager[DocumentView | None]:
        """The document inside one read snapshot, or ``None`` when it is not indexed."""

    @abstractmethod
    def _tokens(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The index's own tokens (stems) of each word, as the backend's tokenizer makes them."""

    @abstractmethod
    def _highlight(self, document_id: str, page_number: int, words: Sequence[str], size: int) -> str:
        """An extract of about ``size`` words of the page around ``words``, matches in ``[`` ``]``;
        empty when the page is not indexed or holds none of them."""

    # -- writing --------------------------------------------------------------------------------------

    def _subject(self) -> str:
        """What the index is, as error messages begin ("The retriever database 'pages.sqlite'")."""
        return f"This {type(self).__name__}"

    def _check_writable(self) -> None:
        """Raise ``RetrieverError`` for a write to an index open read-only (backends call it before
        writing, once they know the retriever is open)."""
        if self.read_only:
            raise RetrieverError(
                f"{self._subject()} is open read-only ({self._read_only_reason}): search it, or open it "
                "writable to index into or delete from."
            )

    def index(self, document_id: str, pages: Iterable[Page] | str | Mapping[str, Any]) -> None:
        """Index the pages of a document, atomically replacing any pages indexed under ``document_id`` before.

        Args:
            document_id: Any string naming the document (lone surrogates included, as in names from
                ``os.listdir``).
            pages: Page dicts as framework loaders return them (``content``, ``markdown``, ``tables``,
                ``forms``, ``sections``...) or plain strings, in document order; ``None`` is a page without
                text. A lone string or dict is one page. Only text is stored.

        Raises:
            RetrieverClosedError: the retriever is closed.
            TypeError: ``document_id`` is not a string.
            InvalidOptionError: ``pages`` or one of them is not a page (the message names its position).
            RetrieverError: the database is read-only, or the write failed: nothing changed.
        """
        check_doc_id(document_id)
        fields = [page_text_fields(page) for page in page_list(pages)]
        if self.ranking.join_split_words:
            # Letter-spaced words ("Balance Shee t") are joined in what is indexed, never in the pages.
            bodies = join_split_words([body for body, _, _ in fields])
            fields = [(body, *rest) for body, (_, *rest) in zip(bodies, fields, strict=True)]  # type: ignore[misc]
        if self.ranking.title_zone:
            # A page without a heading path gets its first heading-like lines as one: the title zone.
            fields = [
                (body, headings or title_zone(body), descriptions) for body, headings, descriptions in fields
            ]
        rows = [(*texts, *page_facts(texts[0], self.profile)) for texts in fields]
        self._write(document_id, rows)

    def delete(self, document_id: str) -> bool:
        """Remove a document's pages. Returns whether the document was indexed.

        Raises:
            TypeError: ``document_id`` is not a string.
            RetrieverError: the database is read-only, or the write failed: nothing changed.
        """
        check_doc_id(document_id)
        return self._remove(document_id)

    # -- reading --------------------------------------------------------------------------------------

    def search(self, document_id: str, query: str, max_pages: int = 5) -> list[PageMatch]:
        """The pages of one document that best match a query, best first.

        Args:
            document_id: The document to search (as given to :meth:`index`).
            query: Free text; its words are OR-ed together. No syntax is interpreted, and any string
                (lone surrogates included) is a safe query.
            max_pages: How many matches to return at most.

        Returns:
            Up to ``max_pages`` matches, best first (lowest score first); empty when no page holds any
            query word, and when ``document_id`` is not indexed (never indexed, or deleted), as
            ExtractThinker's own retriever answers.

        Raises:
            RetrieverClosedError: the retriever is closed.
            InvalidOptionError: ``max_pages`` is not a positive whole number.
            TypeError: ``document_id`` or ``query`` is not a string.
            RetrieverError: the database failed to answer.
            IndexFormatError: the database is damaged.
        """
        check_max_pages(max_pages)
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}.")
        check_doc_id(document_id)
        with self._view(document_id) as view:
            if view is None:
                return []
            scores = self._score(view, query, document_id)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:max_pages]
        return [PageMatch(page_number=page, score=-round(score, 6)) for page, score in ranked]

    def _score(self, view: DocumentView, query: str, document_id: str = "") -> dict[int, float]:
        """Each page's score for the query (higher is better), pages without a query word left out
        (unless the query names them: "page 17")."""
        kinds = self._kinds_asked(query, view.facts)
        plan = self.plan(query, profile=bool(kinds))
        if not plan.terms or view.page_count == 0:
            return {}
        reference = find_references(query) if self.ranking.references else Reference()
        label_words = [word for _, number in reference.labels for word in query_words(number)]
        stems = self._stem([*plan.words, *label_words])
        statistics = view.statistics({token for tokens in stems.values() for token in tokens})
        found: set[tuple[str, ...]] = set()
        pages_of: dict[tuple[str, ...], set[int]] = {}
        scores = score_pages(
            statistics,
            plan,
            stems,
            view.page_count,
            proximity=self.ranking.proximity,
            found=found,
            pages_of=pages_of,
        )
        missing = [word for word in plan.written if stems.get(word) and stems[word] not in found]
        if missing and self.ranking.respell:
            # Words on no page of the document: search them as the document spells them, if it does.
            extra = [spelling for word in missing for spelling in plan.fallbacks.get(word, ())]
            with self._spellings_lock:
                memo = self._spellings.get((document_id, view.version))
                if memo is None:
                    memo = {}
                    self._spellings.put((document_id, view.version), memo)
            extra += document_spellings(
                view,
                statistics,
                self._stem,
                plan.text,
                missing,
                memo,
                lambda: self._text_of(document_id, view),
            )
            known = set(plan.words)
            added = tuple(dict.fromkeys(spelling for spelling in extra if spelling not in known))
            if added:
                # Scored on their own and added: each term's IDF and tf are its own, so nothing else changes.
                weight = self.ranking.expansion_weight
                respelled = QueryPlan(terms=tuple((spelling, weight) for spelling in added))
                extra_stems = self._stem(list(added))
                extra_tokens = {token for tokens in extra_stems.values() for token in tokens}
                extra_statistics = view.statistics(extra_tokens)
                for page, score in score_pages(
                    extra_statistics, respelled, extra_stems, view.page_count, proximity=False
                ).items():
                    scores[page] = scores.get(page, 0.0) + score
        if scores and self.ranking.decoys:
            weights = {stems[word]: weight for word, weight in plan.terms if stems.get(word)}
            demote_decoys(scores, pages_of, weights, view.page_count)
        if scores:
            boost_pages(plan, kinds, view.facts, scores, self.ranking)
        if reference:
            self._boost_named(view, statistics, stems, reference, scores)
        return scores

    def _boost_named(
        self,
        view: DocumentView,
        statistics: TermStatistics,
        stems: Mapping[str, tuple[str, ...]],
        reference: Reference,
        scores: dict[int, float],
    ) -> None:
        """Raise the pages a query names (see :mod:`.references`) by a share of the best lexical score;
        a named page without any query word becomes a candidate."""
        best = max(scores.values(), default=0.0) or 1.0
        boosts: dict[int, float] = {}
        if reference.pages and self.ranking.reference_boost:
            for page in pages_printed(reference, view.page_edges(EDGE_CHARS), view.page_count):
                boosts[page] = self.ranking.reference_boost
        if reference.labels and self.ranking.caption_boost:
            holding: set[int] = set()
            for _, number in reference.labels:
                for word in query_words(number):
                    if stems.get(word):
                        holding |= {page for page, _ in statistics.term_hits(word, stems[word])}
            for page in caption_pages(reference.labels, view.page_bodies(holding)):
                boosts[page] = max(boosts.get(page, 0.0), self.ranking.caption_boost)
        for page, share in boosts.items():
            scores[page] = scores.get(page, 0.0) + best * share

    def _text_of(self, document_id: str, view: DocumentView) -> str:
        """The document's whole text in lower case, kept for the latest document asked for (an acronym
        looked up in it again costs no reading)."""
        key = (document_id, view.version)
        with self._spellings_lock:
            text = self._texts.get(key)
        if text is None:
            text = lowered_text(view.page_bodies(range(1, view.page_count + 1)).values())
            with self._spellings_lock:
                self._texts.put(key, text)
        return text

    def _stem(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The index's tokens for each word (usually one stem), cached per retriever."""
        missing = [word for word in words if word not in self._stems]
        if missing:
            found = self._tokens(missing)
            if len(self._stems) > 50_000:
                self._stems.clear()
            for word in missing:
                self._stems[word] = found.get(word, ())
        return {word: self._stems[word] for word in words}

    def plan(self, query: str, *, profile: bool = False) -> QueryPlan:
        """How a query is searched: its weighted terms and whether it asks for a figure (see
        :func:`~extract_thinker_pageindex.retrieval.query.analyse_query`).

        Args:
            query: The query.
            profile: Expand with the domain profile's synonyms too (as a search does when the profile acts
                on the query and the document).
        """
        synonyms = self._profile_synonyms if profile else self._synonyms
        return analyse_query(
            query,
            synonyms=synonyms if self.ranking.synonyms else None,
            instruction_words=self.ranking.query_weights,
            expansion_weight=self.ranking.expansion_weight,
            respell=self.ranking.respell,
        )

    def _kinds_asked(self, query: str, facts: Sequence[PageFacts]) -> set[str]:
        """The page kinds the profile points this query to in this document; empty when it stays inert.

        It acts when the query names a statement or a metric of the profile and, under ``"auto"``, the
        document has pages of at least two of its kinds (a report of the domain has a balance sheet and a
        cash flow statement, not one page that happens to say one); ``"on"`` needs one such page.
        """
        if self.profile is None or self.ranking.profile == "off":
            return set()
        present = {kind for _, kind, _ in facts if kind is not None}
        if len(present) < (2 if self.ranking.profile == "auto" else 1):
            return set()
        return self.profile.kinds_asked(query) & present

    def snippet(
        self, document_id: str, page_number: int, query: str, *, words: int = 24, lines: bool = False
    ) -> str:
        """A short extract of a page around the query's words, matched words wrapped in ``[`` ``]``.

        Args:
            document_id: The document.
            page_number: The page (1-based).
            query: The words to find.
            words: About how many words the extract holds (1 to 64).
            lines: Give the extract as the indexed text holds it, line breaks and dot leaders kept (the
                view tells the page's Markdown marks from its punctuation line by line), instead of one
                line with dot leaders folded to ``…``.

        Returns:
            The extract; an empty string when the document or page is not indexed or holds none of the
            words.

        Raises:
            TypeError: ``document_id`` is not a string.
            RetrieverClosedError: the retriever is closed.
            RetrieverError: the database failed to answer.
            IndexFormatError: the database is damaged.
        """
        check_doc_id(document_id)
        terms = query_words(query)
        if not terms or isinstance(page_number, bool) or not isinstance(page_number, int):
            return ""
        found = self._highlight(document_id, page_number, terms, max(1, min(words, 64)))
        return found if lines else fold_leaders(found)


def fold_leaders(text: str) -> str:
    """Text on one line, its dot leaders (of tables of contents and statements: they say nothing) folded
    to `` … ``."""
    return " ".join(_LEADERS.sub(" … ", text).split())


def check_max_pages(max_pages: object) -> None:
    """Refuse a page limit that is not a positive integer (``0``, ``-1``, ``True``, ``1.5``).

    Raises:
        InvalidOptionError: as ExtractThinker's retriever words it, "max_pages must be a positive integer".
    """
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise InvalidOptionError(f"max_pages must be a positive integer; got {max_pages!r}.")


def check_doc_id(document_id: object) -> None:
    """Refuse a document id that is not a string.

    Raises:
        TypeError: ``document_id`` is not a string.
    """
    if not isinstance(document_id, str):
        raise TypeError(f"document_id must be a string, got {type(document_id).__name__}.")


def not_indexed(document_id: str) -> NoMatchError:
    """The error for a document that is not indexed."""
    return NoMatchError(f"Document {document_id!r} is not indexed; index it before searching it.")
