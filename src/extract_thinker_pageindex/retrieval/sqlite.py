"""``SQLitePageRetriever``: pages of many documents in one SQLite FTS5 index, searched one document at a time.

The retriever holds the index's lifecycle (opening, closing, thread and process safety), writing
(``index``, ``delete``) and reading (``search``, ``snippet``, the document list). How pages are scored for a
query (FTS5's BM25 with the IDF computed over the searched document only, proximity pairs, the profile's
boosts) is in :mod:`.scoring`; the file itself (opening it, its schema, SQLite's errors) is handled in
:mod:`.database`; the text each page gives the index is read in :mod:`.page_text`.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from ..errors import IndexFormatError, InvalidOptionError, RetrieverClosedError, RetrieverError
from .base import BasePageRetriever, Memo, PageMatch, PageRow, not_indexed, require_query_words
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
from .page_text import SURROGATE, page_list, page_text_fields
from .profiles import FINANCE, RetrievalProfile
from .query import query_words
from .ranking import Ranking
from .scoring import DEFAULT_WEIGHTS, K1, PAIR_DISTANCE, B, PageFacts, bm25_tf, fts_quote

__all__ = [
    "PageMatch",
    "SQLitePageRetriever",
    "page_list",
    "page_text_fields",
    "query_words",
    "require_query_words",
]


def _doc_key(document_id: str) -> str | bytes:
    """How a document id is stored and looked up.

    An id UTF-8 can encode is stored as text. Any other (one holding lone surrogates, as a file name read
    by ``os.listdir`` may) is stored as the BLOB of its ``surrogatepass`` encoding: lossless, and never
    equal to a text id, because SQLite never finds a BLOB equal to a TEXT value.

    Raises:
        TypeError: ``document_id`` is not a string.
    """
    if not isinstance(document_id, str):
        raise TypeError(f"document_id must be a string, got {type(document_id).__name__}.")
    if SURROGATE.search(document_id) is None:
        return document_id
    return document_id.encode("utf-8", "surrogatepass")


def _doc_id(key: str | bytes) -> str:
    """The document id a stored key stands for (the inverse of :func:`_doc_key`)."""
    return key.decode("utf-8", "surrogatepass") if isinstance(key, bytes) else key


class SQLitePageRetriever(BasePageRetriever):
    """A local full-text index of document pages, on SQLite FTS5.

    Args:
        database: ``":memory:"`` (the default) for an index that lives as long as the object, or a file
            path for one that persists and can be shared by several processes (ExtractThinker's own
            retriever's first argument, spelled the same).
        timeout: Seconds to wait for another process's write lock before giving up.
        read_only: Open an existing retriever file for searching only. A file (or folder) this process
            cannot write is opened read-only without asking; :attr:`read_only` says which happened.
        allow_foreign_tables: Open a file that also holds other tables (another application's database):
            the retriever's tables are added beside them and the journal mode is left as it is. Without
            it, such a file is refused and left untouched.

    Raises:
        InvalidOptionError: ``database`` holds a NUL character, ``timeout`` is not a finite number of 0 or
            more, or ``read_only=True`` names no existing file.
        IndexFormatError: the file is not SQLite, is damaged, holds an index of another schema version,
            has a table named like the retriever's with another layout, holds other tables without
            ``allow_foreign_tables=True``, or is read-only and holds no retriever index.
        RetrieverError: SQLite cannot open or create the file (missing folder, permissions, full disk,
            locked past ``timeout``).

    Thread and process rules: one retriever may be shared by any number of threads (calls are serialised
    on one connection); several processes may open the same file (WAL journal, busy timeout). Re-indexing
    a ``document_id`` replaces its pages in one transaction, so a search sees the old pages or the new ones,
    never a mix. Every SQLite error is raised as the project's error naming the file (a
    :class:`RetrieverError`, or an :class:`IndexFormatError` for a damaged file); a write that fails (a full
    disk, say) changes nothing. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        database: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        read_only: bool = False,
        allow_foreign_tables: bool = False,
        ranking: Ranking | None = None,
        profile: RetrievalProfile | None = FINANCE,
        synonyms: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        super().__init__(ranking=ranking, profile=profile, synonyms=synonyms)
        #: The database file (or ``":memory:"``), as a string.
        self.database = database_path(database)
        self.timeout = timeout
        self._busy_timeout = busy_timeout_ms(timeout)
        self.allow_foreign_tables = bool(allow_foreign_tables)
        self._memory = self.database in (":memory:", "") or self.database.startswith("file::memory:")
        self._lock = threading.RLock()
        # Each recently searched document's page facts, by the version of its pages (read under the lock).
        self._facts: Memo[
            tuple[str | bytes, tuple[int, int, float]], tuple[list[PageFacts], dict[int, int]]
        ] = Memo(8)
        self._table_stamp: tuple[int, int] | None = None
        self._table_idfs: dict[tuple[str, ...] | None, float] = {}
        self._closed = True  # until the connection is open and set up
        self._conn: sqlite3.Connection
        exists = not self._memory and os.path.isfile(self.database)
        if read_only and not exists:
            raise InvalidOptionError(
                f"read_only=True opens an existing retriever database, and {self.database!r} is no file; "
                "check the path, or drop read_only to create one."
            )
        reason = "it was opened with read_only=True" if read_only else None
        if reason is None and exists:
            reason = unwritable_reason(self.database)
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
        self._conn = connect(self.database, timeout_ms=self._busy_timeout, read_only=self.read_only)
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
            self.database,
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
        return f"SQLitePageRetriever({self.database!r}, {state})"

    def _check_open(self) -> None:
        if self._closed:
            raise RetrieverClosedError("This SQLitePageRetriever is closed; create a new one.")

    def _error(self, exc: sqlite3.Error, action: str) -> IndexFormatError | RetrieverError:
        """The project's error for an SQLite error met while doing ``action``: see :func:`translate_error`."""
        return translate_error(exc, action, path=self.database, timeout=self.timeout)

    @contextmanager
    def _session(self, action: str) -> Iterator[sqlite3.Connection]:
        """The connection for one call: under the lock, checked open, SQLite's errors translated."""
        with self._lock:
            self._check_open()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._error(exc, action) from exc

    def _subject(self) -> str:
        return f"The retriever database {self.database!r}"

    # -- writing --------------------------------------------------------------------------------------

    def _write(self, document_id: str, rows: list[PageRow]) -> None:
        key = _doc_key(document_id)
        with self._session("write to") as conn:
            self._check_writable()
            with write_transaction(conn):
                self._delete(conn, key)
                (first_row,) = conn.execute(
                    "SELECT coalesce(max(first_row + page_count), 1) FROM pi_docs"
                ).fetchone()
                conn.executemany(
                    "INSERT INTO pi_fts (rowid, body, headings, descriptions) VALUES (?, ?, ?, ?)",
                    [(first_row + position, *row[:3]) for position, row in enumerate(rows)],
                )
                conn.executemany(
                    "INSERT OR REPLACE INTO pi_pages (row, kind, numeric) VALUES (?, ?, ?)",
                    [(first_row + position, *row[3:]) for position, row in enumerate(rows)],
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

    def _remove(self, document_id: str) -> bool:
        key = _doc_key(document_id)
        with self._session("write to") as conn:
            self._check_writable()
            with write_transaction(conn):
                return self._delete(conn, key)

    # -- reading --------------------------------------------------------------------------------------

    def __contains__(self, document_id: object) -> bool:
        """Whether ``document_id`` is indexed; a non-string is never indexed."""
        if not isinstance(document_id, str):
            return False
        key = _doc_key(document_id)
        with self._session("read") as conn:
            row = conn.execute("SELECT 1 FROM pi_docs WHERE doc_id = ?", (key,)).fetchone()
        return row is not None

    def page_count(self, document_id: str) -> int:
        """How many pages are indexed under ``document_id``.

        Raises:
            NoMatchError: the document is not indexed.
            TypeError: ``document_id`` is not a string.
        """
        key = _doc_key(document_id)
        with self._session("read") as conn:
            row = conn.execute("SELECT page_count FROM pi_docs WHERE doc_id = ?", (key,)).fetchone()
        if row is None:
            raise not_indexed(document_id)
        return int(row[0])

    def document_ids(self) -> list[str]:
        """Every indexed document id, sorted."""
        with self._session("read") as conn:
            return sorted(_doc_id(row[0]) for row in conn.execute("SELECT doc_id FROM pi_docs"))

    def _tokens(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """FTS5's own tokens for each word, from the connection's scratch table."""
        with self._session("read") as conn:
            conn.executemany(
                "INSERT INTO temp.pi_query (rowid, t) VALUES (?, ?)",
                [(number, word) for number, word in enumerate(words, start=1)],
            )
            tokens: dict[int, list[tuple[int, str]]] = {}
            for doc, term, offset in conn.execute("SELECT doc, term, offset FROM temp.pi_query_terms"):
                tokens.setdefault(doc, []).append((offset, term))
            conn.execute("DELETE FROM temp.pi_query")
        return {
            word: tuple(term for _, term in sorted(tokens.get(number, [])))
            for number, word in enumerate(words, start=1)
        }

    @contextmanager
    def _view(self, document_id: str) -> Iterator[_FTS5Statistics | None]:
        key = _doc_key(document_id)
        with self._session("read") as conn, read_transaction(conn):
            row = conn.execute(
                "SELECT first_row, page_count, indexed_at FROM pi_docs WHERE doc_id = ?", (key,)
            ).fetchone()
            if row is None:
                yield None
                return
            first_row, page_count, indexed_at = row
            version = (first_row, page_count, indexed_at)
            last_row = first_row + page_count - 1
            known = self._facts.get((key, version))
            if known is None:
                facts = [
                    (number - first_row + 1, kind, numeric)
                    for number, kind, numeric in conn.execute(
                        "SELECT row, kind, numeric FROM pi_pages WHERE row BETWEEN ? AND ?",
                        (first_row, last_row),
                    )
                ]
                # Each page's length in tokens (every column), from FTS5's own record of it.
                lengths = {
                    number - first_row + 1: sum(varints(sizes))
                    for number, sizes in conn.execute(
                        "SELECT id, sz FROM pi_fts_docsize WHERE id BETWEEN ? AND ?", (first_row, last_row)
                    )
                }
                known = (facts, lengths)
                self._facts.put((key, version), known)
            # What FTS5 knows of the whole table (its row count, each term's row count, the average row
            # length) stays valid until the index changes: through this connection (total_changes) or
            # another one (data_version).
            (data_version,) = conn.execute("PRAGMA data_version").fetchone()
            stamp = (data_version, conn.total_changes)
            if stamp != self._table_stamp:
                self._table_stamp = stamp
                self._table_idfs = {}
            yield _FTS5Statistics(conn, first_row, page_count, known[0], version, self._table_idfs, known[1])

    def _highlight(self, document_id: str, page_number: int, words: Sequence[str], size: int) -> str:
        key = _doc_key(document_id)
        expression = " OR ".join(fts_quote(term) for term in words)
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
                (size, expression, row[0] + page_number - 1),
            ).fetchone()
        return found[0] if found else ""


def varints(data: bytes) -> list[int]:
    """The unsigned integers of an SQLite varint sequence (FTS5's row sizes and table totals): big-endian,
    seven bits a byte while the high bit is set, the ninth byte whole."""
    values: list[int] = []
    value = 0
    length = 0
    for byte in data:
        length += 1
        if length == 9:
            values.append((value << 8) | byte)
            value = length = 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            values.append((value << 7) | byte)
            value = length = 0
    return values


#: The IDF recorded for a token on no row of the table (FTS5 would never divide by it).
_ABSENT = -1.0


class _FTS5Statistics:
    """One document's term statistics from FTS5, inside the caller's read transaction.

    FTS5's ``bm25()`` is ``-(FTS5's IDF over the whole table) * (tf part)``: the tf part is kept by
    dividing that IDF back out, and the scorer multiplies it by the IDF over this document's pages.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        first_row: int,
        page_count: int,
        facts: list[PageFacts],
        version: tuple[int, int, float],
        table_idfs: dict[tuple[str, ...] | None, float] | None = None,
        lengths: dict[int, int] | None = None,
    ) -> None:
        self.conn = conn
        self.version = version
        # FTS5's IDF of each term over the whole table (and, under None, the table's row count), shared by
        # the searches made while the table is unchanged.
        self._table_idfs = {} if table_idfs is None else table_idfs
        self.first_row = first_row
        self.page_count = page_count
        self.facts = facts
        if None not in self._table_idfs:
            (rows,) = conn.execute("SELECT coalesce(sum(page_count), 0) FROM pi_docs").fetchone()
            self._table_idfs[None] = float(rows)
        self.total_rows = int(self._table_idfs[None])
        # FTS5's bm25() normalises a page's length by the average row of the whole table, which mixes the
        # documents (a brochure's short pages with a 10-K's long ones); the tf parts are brought back to
        # the average page of this document, as the PostgreSQL backend computes them.
        self._lengths = lengths or {}
        self._document_average = (
            sum(self._lengths.values()) / page_count if self._lengths and page_count else 0.0
        )
        if ("",) not in self._table_idfs:
            block = conn.execute("SELECT block FROM pi_fts_data WHERE id = 1").fetchone()
            totals = varints(block[0]) if block is not None and block[0] else []
            self._table_idfs[("",)] = sum(totals[1:]) / totals[0] if len(totals) > 1 and totals[0] else 0.0
        self._table_average = self._table_idfs[("",)]
        weights = ", ".join(str(weight) for weight in DEFAULT_WEIGHTS)
        self._sql = (
            f"SELECT rowid, bm25(pi_fts, {weights}) FROM pi_fts"
            " WHERE pi_fts MATCH ? AND rowid BETWEEN ? AND ?"
        )
        self._fts_idfs: dict[tuple[str, ...], float] = {}

    def statistics(self, tokens: Collection[str]) -> _FTS5Statistics:
        """Itself: FTS5 is asked term by term, as the scorer goes. The table-wide row counts of the
        tokens not yet known are read first, in one query: a term with a token on no row of the table is
        then on no page of the document, and is not asked for."""
        unknown = sorted({token for token in tokens if (token,) not in self._table_idfs})
        for start in range(0, len(unknown), 500):
            chunk = unknown[start : start + 500]
            counts = dict(
                self.conn.execute(
                    f"SELECT term, doc FROM pi_vocab WHERE term IN ({', '.join('?' * len(chunk))})", chunk
                ).fetchall()
            )
            for token in chunk:
                self._table_idfs[(token,)] = self._idf_of(int(counts.get(token, 0)))
        return self

    def page_edges(self, chars: int) -> list[tuple[int, str, str]]:
        last_row = self.first_row + self.page_count - 1
        rows = self.conn.execute(
            "SELECT rowid, substr(body, 1, ?), substr(body, -?) FROM pi_fts WHERE rowid BETWEEN ? AND ?",
            (chars, chars, self.first_row, last_row),
        ).fetchall()
        return [(rowid - self.first_row + 1, head, tail) for rowid, head, tail in rows]

    def page_bodies(self, pages: Collection[int]) -> dict[int, str]:
        wanted = sorted(page for page in pages if 1 <= page <= self.page_count)
        found: dict[int, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for rowid, body in self.conn.execute(
                f"SELECT rowid, body FROM pi_fts WHERE rowid IN ({marks})",
                [self.first_row + page - 1 for page in chunk],
            ):
                found[rowid - self.first_row + 1] = body
        return found

    def _rows(self, expression: str) -> list[tuple[int, float]]:
        last_row = self.first_row + self.page_count - 1
        return self.conn.execute(self._sql, (expression, self.first_row, last_row)).fetchall()

    def term_hits(self, word: str, tokens: tuple[str, ...]) -> list[tuple[int, float]]:
        if any(self._table_idfs.get((token,)) == _ABSENT for token in tokens):
            return []  # a token on no row of the table
        expression = fts_quote(word)
        rows = self._rows(expression)
        if not rows:
            return []
        self._fts_idfs[tokens] = fts_idf = self._fts_idf(tokens, expression)
        return self._renormalised([(rowid - self.first_row + 1, -bm25 / fts_idf) for rowid, bm25 in rows])

    def _renormalised(self, rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """BM25 tf parts normalised by the table's average row, as normalised by this document's average
        page: the weighted count is solved back from FTS5's tf part and the page's length, exactly for
        one term (for a near pair, whose tf part is a mean of two, closely)."""
        table, document = self._table_average, self._document_average
        if not table or not document or abs(table - document) < 1e-9:
            return rows
        converted = []
        for page, tf in rows:
            length = self._lengths.get(page, 0)
            if not 0.0 < tf < K1 + 1.0:
                converted.append((page, tf))
                continue
            count = tf * K1 * (1.0 - B + B * length / table) / (K1 + 1.0 - tf)
            converted.append((page, bm25_tf(count, length, document)))
        return converted

    def pair_hits(
        self, left: tuple[str, tuple[str, ...]], right: tuple[str, tuple[str, ...]]
    ) -> list[tuple[int, float]]:
        rows = self._rows(f"NEAR({fts_quote(left[0])} {fts_quote(right[0])}, {PAIR_DISTANCE})")
        # bm25() of a NEAR query sums idf * tf over its two words, counting only the near occurrences;
        # dividing by the sum of their FTS5 IDFs gives the IDF-weighted mean of those two tf parts.
        divisor = self._fts_idfs[left[1]] + self._fts_idfs[right[1]]
        return self._renormalised([(rowid - self.first_row + 1, -bm25 / divisor) for rowid, bm25 in rows])

    def _fts_idf(self, tokens: tuple[str, ...], expression: str) -> float:
        """The IDF that FTS5's bm25() used for a term: over the whole table, floored at 1e-6."""
        known = self._table_idfs.get(tokens)
        if known is not None:
            return known
        self._table_idfs[tokens] = idf = self._table_idf(tokens, expression)
        return idf

    def _table_idf(self, tokens: tuple[str, ...], expression: str) -> float:
        if len(tokens) == 1:
            row = self.conn.execute("SELECT doc FROM pi_vocab WHERE term = ?", tokens).fetchone()
            hits = int(row[0]) if row is not None else 0
        else:
            (hits,) = self.conn.execute(
                "SELECT count(*) FROM pi_fts WHERE pi_fts MATCH ?", (expression,)
            ).fetchone()
        return self._idf_of(hits)

    def _idf_of(self, hits: int) -> float:
        """FTS5's IDF of a term on ``hits`` rows of the table (``_ABSENT`` for none)."""
        if hits == 0:
            return _ABSENT
        idf = math.log((self.total_rows - hits + 0.5) / (hits + 0.5))
        return idf if idf > 0.0 else 1e-6
