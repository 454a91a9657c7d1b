"""``SQLitePageRetriever``: pages of many documents in one SQLite FTS5 index, searched one document at a time.

The retriever holds the index's lifecycle (opening, closing, thread and process safety), writing
(``index``, ``delete``) and reading (``search``, ``snippet``, the document list). How pages are scored for a
query (FTS5's BM25 with the IDF computed over the searched document only, proximity pairs, the profile's
boosts) is in :mod:`.scoring`; the file itself (opening it, its schema, SQLite's errors) is handled in
:mod:`.database`; the text each page gives the index is read in :mod:`.page_text`.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import IndexFormatError, InvalidOptionError, NoMatchError, RetrieverClosedError, RetrieverError
from .database import (
    TOKENIZER,
    busy_timeout_ms,
    connect,
    database_path,
    error_kind,
    prepare_schema,
    read_transaction,
    translate_error,
    unwritable_reason,
    write_transaction,
)
from .page_text import SURROGATE, Page, page_facts, page_list, page_text_fields, title_zone
from .profiles import FINANCE, GENERAL_SYNONYMS, RetrievalProfile
from .query import QueryPlan, analyse_query, query_words
from .ranking import Ranking
from .scoring import boost_pages, fts_quote, score_pages

__all__ = [
    "PageMatch",
    "SQLitePageRetriever",
    "page_list",
    "page_text_fields",
    "query_words",
    "require_query_words",
]

_LEADERS = re.compile(r"(?:\s*\.){4,}")


@dataclass(frozen=True)
class PageMatch:
    """A page found by a search.

    Attributes:
        page_number: 1-based position of the page in the list that was indexed.
        score: BM25 score; lower ranks first (the FTS5 convention).
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


def _doc_key(doc_id: str) -> str | bytes:
    """How a document id is stored and looked up.

    An id UTF-8 can encode is stored as text. Any other (one holding lone surrogates, as a file name read
    by ``os.listdir`` may) is stored as the BLOB of its ``surrogatepass`` encoding: lossless, and never
    equal to a text id, because SQLite never finds a BLOB equal to a TEXT value.

    Raises:
        TypeError: ``doc_id`` is not a string.
    """
    if not isinstance(doc_id, str):
        raise TypeError(f"doc_id must be a string, got {type(doc_id).__name__}.")
    if SURROGATE.search(doc_id) is None:
        return doc_id
    return doc_id.encode("utf-8", "surrogatepass")


def _doc_id(key: str | bytes) -> str:
    """The document id a stored key stands for (the inverse of :func:`_doc_key`)."""
    return key.decode("utf-8", "surrogatepass") if isinstance(key, bytes) else key


class SQLitePageRetriever:
    """A local full-text index of document pages, on SQLite FTS5.

    Args:
        path: ``":memory:"`` (the default) for an index that lives as long as the object, or a file path
            for one that persists and can be shared by several processes.
        timeout: Seconds to wait for another process's write lock before giving up.
        read_only: Open an existing retriever file for searching only. A file (or folder) this process
            cannot write is opened read-only without asking; :attr:`read_only` says which happened.
        allow_foreign_tables: Open a file that also holds other tables (another application's database):
            the retriever's tables are added beside them and the journal mode is left as it is. Without
            it, such a file is refused and left untouched.

    Raises:
        InvalidOptionError: ``path`` holds a NUL character, ``timeout`` is not a finite number of 0 or
            more, or ``read_only=True`` names no existing file.
        IndexFormatError: the file is not SQLite, is damaged, holds an index of another schema version,
            has a table named like the retriever's with another layout, holds other tables without
            ``allow_foreign_tables=True``, or is read-only and holds no retriever index.
        RetrieverError: SQLite cannot open or create the file (missing folder, permissions, full disk,
            locked past ``timeout``).

    Thread and process rules: one retriever may be shared by any number of threads (calls are serialised
    on one connection); several processes may open the same file (WAL journal, busy timeout). Re-indexing
    a ``doc_id`` replaces its pages in one transaction, so a search sees the old pages or the new ones,
    never a mix. Every SQLite error is raised as the project's error naming the file (a
    :class:`RetrieverError`, or an :class:`IndexFormatError` for a damaged file); a write that fails (a full
    disk, say) changes nothing. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        read_only: bool = False,
        allow_foreign_tables: bool = False,
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
        self.path = database_path(path)
        self.timeout = timeout
        self._busy_timeout = busy_timeout_ms(timeout)
        self.allow_foreign_tables = bool(allow_foreign_tables)
        self._memory = self.path in (":memory:", "") or self.path.startswith("file::memory:")
        self._lock = threading.RLock()
        self._closed = True  # until the connection is open and set up
        self._stems: dict[str, tuple[str, ...]] = {}
        self._conn: sqlite3.Connection
        exists = not self._memory and os.path.isfile(self.path)
        if read_only and not exists:
            raise InvalidOptionError(
                f"read_only=True opens an existing retriever database, and {self.path!r} is no file; "
                "check the path, or drop read_only to create one."
            )
        reason = "it was opened with read_only=True" if read_only else None
        if reason is None and exists:
            reason = unwritable_reason(self.path)
        #: Whether the database was opened for searching only (``index`` and ``delete`` then raise).
        self.read_only = reason is not None
        self._read_only_reason = reason or ""
        try:
            self._open()
        except sqlite3.Error as exc:
            if self.read_only or not exists or error_kind(exc) != "READONLY":
                raise self._error(exc, "open") from exc
            # The file cannot be written after all (a read-only mount, say): open it for searching.
            self.read_only = True
            self._read_only_reason = "SQLite cannot write it"
            try:
                self._open()
            except sqlite3.Error as retry_exc:
                raise self._error(retry_exc, "open") from retry_exc

    # -- lifecycle ------------------------------------------------------------------------------------

    def _open(self) -> None:
        """Connect and set up; on failure nothing stays open and the file is as it was."""
        self._conn = connect(self.path, timeout_ms=self._busy_timeout, read_only=self.read_only)
        try:
            self._setup()
        except BaseException:
            self._conn.close()
            raise
        self._closed = False

    def _setup(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout}")
        prepare_schema(
            conn,
            self.path,
            memory=self._memory,
            read_only_reason=self._read_only_reason if self.read_only else None,
            allow_foreign_tables=self.allow_foreign_tables,
        )
        # A scratch table in the connection's private temp schema: FTS5 tokenizes query words here, so
        # query and pages are stemmed by the very same tokenizer. Nothing is written to the file, so this
        # works on a read-only file too.
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.pi_query USING fts5(t, tokenize = '{TOKENIZER}')"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.pi_query_terms "
            "USING fts5vocab('temp', 'pi_query', 'instance')"
        )

    def close(self) -> None:
        """Close the database connection; further calls raise ``RetrieverClosedError``. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> SQLitePageRetriever:
        self._check_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("open read-only" if self.read_only else "open")
        return f"SQLitePageRetriever({self.path!r}, {state})"

    def _check_open(self) -> None:
        if self._closed:
            raise RetrieverClosedError("This SQLitePageRetriever is closed; create a new one.")

    def _error(self, exc: sqlite3.Error, action: str) -> IndexFormatError | RetrieverError:
        """The project's error for an SQLite error met while doing ``action``: see :func:`translate_error`."""
        return translate_error(exc, action, path=self.path, timeout=self.timeout)

    @contextmanager
    def _session(self, action: str) -> Iterator[sqlite3.Connection]:
        """The connection for one call: under the lock, checked open, SQLite's errors translated."""
        with self._lock:
            self._check_open()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._error(exc, action) from exc

    def _check_writable(self) -> None:
        if self.read_only:
            raise RetrieverError(
                f"The retriever database {self.path!r} is open read-only ({self._read_only_reason}): "
                "search it, or open a writable file to index into or delete from."
            )

    # -- writing --------------------------------------------------------------------------------------

    def index(self, doc_id: str, pages: Iterable[Page] | str | Mapping[str, Any]) -> None:
        """Index the pages of a document, atomically replacing any pages indexed under ``doc_id`` before.

        Args:
            doc_id: Any string naming the document (lone surrogates included, as in names from
                ``os.listdir``).
            pages: Page dicts as framework loaders return them (``content``, ``markdown``, ``tables``,
                ``forms``, ``sections``...) or plain strings, in document order; ``None`` is a page without
                text. A lone string or dict is one page. Only text is stored.

        Raises:
            RetrieverClosedError: the retriever is closed.
            TypeError: ``doc_id`` is not a string.
            InvalidOptionError: ``pages`` or one of them is not a page (the message names its position).
            RetrieverError: the database is read-only, or the write failed (full disk...): nothing changed.
        """
        key = _doc_key(doc_id)
        rows = [page_text_fields(page) for page in page_list(pages)]
        if self.ranking.title_zone:
            # A page without a heading path gets its first heading-like lines as one: the title zone.
            rows = [
                (body, headings or title_zone(body), descriptions) for body, headings, descriptions in rows
            ]
        facts = [page_facts(body, self.profile) for body, _, _ in rows]
        with self._session("write to") as conn:
            self._check_writable()
            with write_transaction(conn):
                self._delete(conn, key)
                (first_row,) = conn.execute(
                    "SELECT coalesce(max(first_row + page_count), 1) FROM pi_docs"
                ).fetchone()
                conn.executemany(
                    "INSERT INTO pi_fts (rowid, body, headings, descriptions) VALUES (?, ?, ?, ?)",
                    [(first_row + position, *fields) for position, fields in enumerate(rows)],
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO pi_pages (row, kind, numeric) VALUES (?, ?, ?)",
                    [(first_row + position, kind, share) for position, (kind, share) in enumerate(facts)],
                )
                conn.execute(
                    "INSERT INTO pi_docs (doc_id, first_row, page_count, indexed_at) VALUES (?, ?, ?, ?)",
                    (key, first_row, len(rows), time.time()),
                )

    @staticmethod
    def _delete(conn: sqlite3.Connection, key: str | bytes) -> bool:
        row = conn.execute("SELECT first_row, page_count FROM pi_docs WHERE doc_id = ?", (key,)).fetchone()
        if row is None:
            return False
        first_row, page_count = row
        span = (first_row, first_row + page_count - 1)
        conn.execute("DELETE FROM pi_fts WHERE rowid BETWEEN ? AND ?", span)
        conn.execute("DELETE FROM pi_pages WHERE row BETWEEN ? AND ?", span)
        conn.execute("DELETE FROM pi_docs WHERE doc_id = ?", (key,))
        return True

    def delete(self, doc_id: str) -> bool:
        """Remove a document's pages. Returns whether the document was indexed.

        Raises:
            TypeError: ``doc_id`` is not a string.
            RetrieverError: the database is read-only, or the write failed: nothing changed.
        """
        key = _doc_key(doc_id)
        with self._session("write to") as conn:
            self._check_writable()
            with write_transaction(conn):
                return self._delete(conn, key)

    # -- reading --------------------------------------------------------------------------------------

    def __contains__(self, doc_id: object) -> bool:
        """Whether ``doc_id`` is indexed; a non-string is never indexed."""
        if not isinstance(doc_id, str):
            return False
        key = _doc_key(doc_id)
        with self._session("read") as conn:
            row = conn.execute("SELECT 1 FROM pi_docs WHERE doc_id = ?", (key,)).fetchone()
        return row is not None

    def page_count(self, doc_id: str) -> int:
        """How many pages are indexed under ``doc_id``.

        Raises:
            NoMatchError: the document is not indexed.
            TypeError: ``doc_id`` is not a string.
        """
        key = _doc_key(doc_id)
        with self._session("read") as conn:
            row = conn.execute("SELECT page_count FROM pi_docs WHERE doc_id = ?", (key,)).fetchone()
        if row is None:
            raise NoMatchError(f"Document {doc_id!r} is not indexed; index it before searching it.")
        return int(row[0])

    def doc_ids(self) -> list[str]:
        """Every indexed document id, sorted."""
        with self._session("read") as conn:
            return sorted(_doc_id(row[0]) for row in conn.execute("SELECT doc_id FROM pi_docs"))

    def _stem(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """FTS5's own tokens for each word (usually one stem), cached per retriever."""
        missing = [word for word in words if word not in self._stems]
        if missing:
            conn = self._conn
            conn.executemany(
                "INSERT INTO temp.pi_query (rowid, t) VALUES (?, ?)",
                [(number, word) for number, word in enumerate(missing, start=1)],
            )
            tokens: dict[int, list[tuple[int, str]]] = {}
            for doc, term, offset in conn.execute("SELECT doc, term, offset FROM temp.pi_query_terms"):
                tokens.setdefault(doc, []).append((offset, term))
            conn.execute("DELETE FROM temp.pi_query")
            if len(self._stems) > 50_000:
                self._stems.clear()
            for number, word in enumerate(missing, start=1):
                self._stems[word] = tuple(term for _, term in sorted(tokens.get(number, [])))
        return {word: self._stems[word] for word in words}

    def search(self, doc_id: str, query: str, max_pages: int = 3) -> list[PageMatch]:
        """The pages of one document that best match a query, best first.

        Args:
            doc_id: The document to search (as given to :meth:`index`).
            query: Free text; its words are OR-ed together. No syntax is interpreted, and any string
                (lone surrogates included) is a safe query.
            max_pages: How many matches to return at most.

        Returns:
            Up to ``max_pages`` matches, best first (lowest score first); empty when no page holds any
            query word.

        Raises:
            NoMatchError: ``doc_id`` is not indexed.
            RetrieverClosedError: the retriever is closed.
            InvalidOptionError: ``max_pages`` is not a positive whole number.
            TypeError: ``doc_id`` or ``query`` is not a string.
            RetrieverError: SQLite failed to read the file (locked past the timeout, I/O error).
            IndexFormatError: the file is damaged.
        """
        if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
            raise InvalidOptionError(f"max_pages must be a whole number of at least 1; got {max_pages!r}.")
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}.")
        key = _doc_key(doc_id)
        with self._session("read") as conn, read_transaction(conn):
            row = conn.execute(
                "SELECT first_row, page_count FROM pi_docs WHERE doc_id = ?", (key,)
            ).fetchone()
            if row is None:
                raise NoMatchError(f"Document {doc_id!r} is not indexed; index it before searching it.")
            first_row, page_count = row
            facts = conn.execute(
                "SELECT row, kind, numeric FROM pi_pages WHERE row BETWEEN ? AND ?",
                (first_row, first_row + page_count - 1),
            ).fetchall()
            kinds = self._kinds_asked(query, facts)
            plan = self.plan(query, profile=bool(kinds))
            if not plan.terms or page_count == 0:
                return []
            stems = self._stem(plan.words)
            scores = score_pages(conn, plan, stems, first_row, page_count, proximity=self.ranking.proximity)
            if scores:
                boost_pages(plan, kinds, facts, scores, self.ranking)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:max_pages]
        return [
            PageMatch(page_number=rowid - first_row + 1, score=-round(score, 6)) for rowid, score in ranked
        ]

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
        )

    def _kinds_asked(self, query: str, facts: Sequence[tuple[int, str | None, float]]) -> set[str]:
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

    def snippet(self, doc_id: str, page_number: int, query: str, *, words: int = 24) -> str:
        """A short extract of a page around the query's words, matched words wrapped in ``[`` ``]``.

        Returns:
            The extract; an empty string when the document or page is not indexed or holds none of the
            words.

        Raises:
            TypeError: ``doc_id`` is not a string.
            RetrieverClosedError: the retriever is closed.
            RetrieverError: SQLite failed to read the file.
            IndexFormatError: the file is damaged.
        """
        key = _doc_key(doc_id)
        terms = query_words(query)
        if not terms:
            return ""
        expression = " OR ".join(fts_quote(term) for term in terms)
        # One read transaction: the page range and the page's text come from the same version, even while
        # another connection re-indexes the document.
        with self._session("read") as conn, read_transaction(conn):
            row = conn.execute(
                "SELECT first_row, page_count FROM pi_docs WHERE doc_id = ?", (key,)
            ).fetchone()
            if row is None or not 1 <= page_number <= row[1]:
                return ""
            found = conn.execute(
                "SELECT snippet(pi_fts, -1, '[', ']', '…', ?) FROM pi_fts WHERE pi_fts MATCH ? AND rowid = ?",
                (max(1, min(words, 64)), expression, row[0] + page_number - 1),
            ).fetchone()
        if not found:
            return ""
        # Dot leaders of tables of contents and statements say nothing; fold them.
        return " ".join(_LEADERS.sub(" … ", found[0]).split())
