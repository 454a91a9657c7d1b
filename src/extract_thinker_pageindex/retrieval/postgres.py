"""``PostgresPageRetriever``: the pages of many documents in one PostgreSQL schema, searched one document at
a time, shared by every worker of a cluster.

The drop-in for :class:`~extract_thinker_pageindex.retrieval.sqlite.SQLitePageRetriever` where one file
cannot be shared (many machines; SQLite's locks over network file systems are unreliable). It ranks as the
SQLite retriever does, through the same code (:mod:`.base`, :mod:`.scoring`): PostgreSQL's text search
(``to_tsvector``, a GIN index) finds the pages that hold the query's stems and gives their positions; the
BM25 tf part, the IDF over the searched document's pages, the proximity bonus and the boosts are computed
here, not by ``ts_rank`` (which is no BM25). Needs the ``[postgres]`` extra: psycopg 3 and psycopg_pool.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - the extra is installed wherever the tests run
    raise ImportError(
        "PostgresPageRetriever needs psycopg 3 and psycopg_pool: "
        "pip install 'extract-thinker-pageindex[postgres]'"
    ) from exc

from ..errors import InvalidOptionError, PageIndexError, RetrieverClosedError
from .base import BasePageRetriever, PageMatch, PageRow, not_indexed
from .page_text import WORD, Page
from .pg_conninfo import ConnectionString, scrub_pool_logs
from .pg_database import connection_lost, prepare_schema, translate_error
from .pg_parts import PART_CHARS, PART_WORDS, cut_into_parts
from .positions import Occurrence, PositionStatistics
from .profiles import FINANCE, RetrievalProfile
from .ranking import Ranking
from .scoring import DocumentView, PageFacts

__all__ = ["PostgresPageRetriever"]

_T = TypeVar("_T")
#: The tsvector weight letter of each column: body D (the default), heading path A, descriptions B.
_COLUMNS = {"D": 0, "A": 1, "B": 2}
#: Highlight marks ts_headline puts around matches (private-use characters no stored text keeps).
_OPEN, _CLOSE = "\ue000", "\ue001"
#: What PostgreSQL's text cannot hold (NUL, lone surrogates) and the highlight marks.
_UNSTORABLE = re.compile(r"[\x00\ue000\ue001]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: What a name sent to the server cannot hold: NUL, and lone surrogates (no UTF-8 encodes them).
_UNSENDABLE = re.compile(r"[\x00\ud800-\udfff]")
#: The tsvector weight letter of each column: body D (the default), heading path A, descriptions B.
_COLUMNS = {"D": 0, "A": 1, "B": 2}
#: Highlight marks ts_headline puts around matches (private-use characters no stored text keeps).
_OPEN, _CLOSE = "\ue000", "\ue001"
#: What PostgreSQL's text cannot hold (NUL, lone surrogates) and the highlight marks.
_UNSTORABLE = re.compile(r"[\x00\ue000\ue001]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: What a name sent to the server cannot hold: NUL, and lone surrogates (no UTF-8 encodes them).
_UNSENDABLE = re.compile(r"[\x00\ud800-\udfff]")
#: The tsvector weight letter of each column, in the order of a page row's texts.
_WEIGHTS = ("D", "A", "B")
_TAIL = re.compile(r"[^\w]+$")
#: The lexemes of each query word, with their positions.
_WORD_LEXEMES = (
    "SELECT t.ord, u.lexeme, u.positions[1] FROM unnest(%s::text[]) WITH ORDINALITY AS t(word, ord)"
    " CROSS JOIN LATERAL unnest(to_tsvector(%s::regconfig, t.word)) AS u"
)


#: The parts of long pages' columns, into ``pi_parts``: each part's tsvector, its positions counted on from
#: those of the column's earlier parts (the sum of their last positions), so that a phrase or a pair of
#: words across two parts stands as it does in the text.
_INSERT_PARTS = sql.SQL(
    "INSERT INTO {} (doc_key, page, part, start, tsv)"
    " SELECT %(key)s, c.page, c.part, coalesce(sum(c.width) OVER (PARTITION BY c.page, c.weight"
    "  ORDER BY c.part ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::integer, c.tsv"
    " FROM (SELECT t.page, t.part, t.weight, v.tsv, (SELECT coalesce(max(p.pos), 0)"
    "  FROM unnest(v.tsv) AS u CROSS JOIN LATERAL unnest(u.positions) AS p(pos)) AS width"
    "  FROM unnest(%(pages)s::integer[], %(parts)s::integer[], %(weights)s::text[], %(texts)s::text[])"
    "  AS t(page, part, weight, text) CROSS JOIN LATERAL"
    '  (SELECT setweight(to_tsvector(%(config)s::regconfig, t.text), t.weight::"char") AS tsv) AS v) AS c'
)
#: The positions of a query's lexemes on a document's pages: a page's tsvector cut down to the query's
#: lexemes (deleting every other one) before it is unnested — half the work of unnesting it whole — from
#: ``pi_pages`` (start 0) and from the parts of long pages.
_STATISTICS = sql.SQL(
    "SELECT p.page, 0, u.lexeme, u.positions, u.weights FROM {pages} AS p CROSS JOIN LATERAL"
    " unnest(ts_delete(p.tsv, tsvector_to_array(ts_delete(p.tsv, %(tokens)s::text[])))) AS u"
    " WHERE p.doc_key = %(key)s AND p.tsv @@ %(query)s::tsquery"
    " UNION ALL SELECT p.page, p.start, u.lexeme, u.positions, u.weights FROM {parts} AS p CROSS JOIN LATERAL"
    " unnest(ts_delete(p.tsv, tsvector_to_array(ts_delete(p.tsv, %(tokens)s::text[])))) AS u"
    " WHERE p.doc_key = %(key)s AND p.tsv @@ %(query)s::tsquery"
)


def _doc_id(document_id: str) -> bytes:
    """A document id as stored: its UTF-8 bytes (``surrogatepass``: lossless for any string)."""
    return document_id.encode("utf-8", "surrogatepass")


def _doc_key(document_id: str) -> bytes:
    """The key of a document: the SHA-256 of its id, so that an id of any length fits the btree of the
    primary keys (an entry of 2,704 bytes at most)."""
    return hashlib.sha256(_doc_id(document_id)).digest()


def _storable(text: str) -> str:
    """Text PostgreSQL can store: NUL and the highlight marks become spaces, lone surrogates U+FFFD."""
    return _SURROGATE.sub("\ufffd", _UNSTORABLE.sub(" ", text))


def _lock_id(key: bytes) -> int:
    """The advisory lock of one document id: writers of the same id queue, others do not."""
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big", signed=True)


def _tsquery(lexemes: Iterable[str]) -> str:
    """A tsquery OR-ing lexemes given literally (quoted: never an operator)."""
    quoted = ("'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes)
    return " | ".join(quoted)


def _with_end(extract: str, end: str) -> str:
    """The extract with the punctuation that ends its text, when it reaches the text's end
    (``ts_headline`` drops it: "thirty days" for "thirty days.")."""
    tail = _TAIL.search(end)
    punctuation = tail.group(0).strip() if tail else ""
    core = end[: len(end) - len(tail.group(0))] if tail else end
    plain = extract.replace(_OPEN, "").replace(_CLOSE, "").rstrip()
    probe = core[-min(len(core), 24) :].split()
    if punctuation and probe and plain.endswith(" ".join(probe[-3:])):
        return extract.rstrip() + punctuation
    return extract


def _reopen(dsn: str, options: dict[str, Any]) -> PostgresPageRetriever:
    """A retriever on the same server and schema (how a pickled one comes back in another process)."""
    return PostgresPageRetriever(dsn, **options)


class PostgresPageRetriever(BasePageRetriever):
    """A full-text index of document pages in a PostgreSQL schema, shared by threads, processes, machines.

    Args:
        dsn: The server, as a URL (``postgresql://user:password@host:5432/dbname``) or ``key=value`` pairs.
            Of it, :attr:`dsn`, ``repr`` and every message show the host, port, database and user only (see
            :class:`~.pg_conninfo.ConnectionString`); a password holding ``/`` or ``@`` must be
            percent-encoded in a URL (``%2F``, ``%40``) for libpq to read it as a password.
        schema: The schema holding the retriever's tables, created (with the tables) on first use; one
            schema per index.
        text_search_config: The text search configuration of a new index. ``None`` (the default) makes
            the retriever's own in the schema: Porter stems, no stop words, hyphenated words as their
            parts, as SQLite's FTS5 tokenizer does, so both backends rank alike. Name another
            (``english``, or your own with ``unaccent`` to fold accents) to use it instead. An existing
            index keeps the one it was created with (:attr:`text_search_config`).
        pool_size: The most connections this retriever opens (its threads share them).
        timeout: Seconds to wait for a connection (to connect, or for a free one in the pool).
        ranking: The ranking's switches and weights (as for ``SQLitePageRetriever``).
        profile: The domain profile (``FINANCE`` by default; ``None`` for none).
        synonyms: More phrases searched with a query phrase.
        read_only: Open an existing index for searching only: nothing is created (no schema, no tables,
            so a mistyped schema is an error rather than a new empty index, and a read-only user or a hot
            standby can open it), and ``index`` and ``delete`` raise ``RetrieverError``.

    Raises:
        InvalidOptionError: an option cannot work (a ``schema`` or ``text_search_config`` holding NUL or a
            lone surrogate, a schema name over 63 bytes), the connection string cannot be read,
            ``text_search_config`` is no configuration of the server, or ``read_only=True`` names a schema
            without an index.
        RetrieverConnectionError: the server cannot be reached, or refuses the login or the database.
        IndexFormatError: the schema holds an index of another schema version, or tables named like the
            retriever's that are not its own.
        RetrieverError: the server refused otherwise (no right to create the schema, say).

    Same behaviour as ``SQLitePageRetriever``: re-indexing a ``document_id`` replaces its pages in one
    transaction (a search sees the old pages or the new ones); a search reads one snapshot. A call whose
    connection is lost (a restart, a network cut) is retried once on a new connection, then raises
    :class:`~extract_thinker_pageindex.errors.RetrieverConnectionError`; a refusal by the server (a value it
    cannot take, one of its limits, a right) is a ``RetrieverError`` at once, and the document keeps the
    pages it had. A process forked after the retriever was made opens its own connections; a pickled
    retriever reconnects where it is unpickled.

    What SQLite indexes, this does, past PostgreSQL's limits: a document is keyed by the SHA-256 of its id,
    so an id of any length works (``document_ids()`` gives it back whole); a page longer than one tsvector
    holds (1 MB, 16,383 positions: over ``PART_WORDS`` words or ``PART_CHARS`` characters in its text fields)
    keeps its whole text, and its words in parts of that size, each counted on from the part before: every
    word is found and counted, and the page ranks as in SQLite. PostgreSQL keeps at most 256 positions of
    one word in a part, and indexes no word of more than 2,047 bytes.
    """

    shared_across_machines = True

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "public",
        text_search_config: str | None = None,
        pool_size: int = 10,
        timeout: float = 30.0,
        ranking: Ranking | None = None,
        profile: RetrievalProfile | None = FINANCE,
        synonyms: Mapping[str, Iterable[str]] | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__(ranking=ranking, profile=profile, synonyms=synonyms)
        if not isinstance(dsn, str):
            raise InvalidOptionError(f"dsn must be a PostgreSQL connection string; got {type(dsn).__name__}.")
        if (
            not isinstance(schema, str)
            or not schema
            or _UNSENDABLE.search(schema)
            or len(schema.encode()) > 63
        ):
            raise InvalidOptionError(
                f"schema must be a PostgreSQL schema name of 1 to 63 bytes of UTF-8, without NUL or lone "
                f"surrogates; got {schema!r}."
            )
        if text_search_config is not None and (
            not isinstance(text_search_config, str)
            or not text_search_config
            or _UNSENDABLE.search(text_search_config)
        ):
            raise InvalidOptionError(
                "text_search_config must name a text search configuration (UTF-8, without NUL or lone "
                f"surrogates); got {text_search_config!r}."
            )
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise InvalidOptionError(f"pool_size must be a whole number of at least 1; got {pool_size!r}.")
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout)
            or timeout <= 0
        ):
            raise InvalidOptionError(f"timeout must be a finite number of seconds above 0; got {timeout!r}.")
        self._dsn = dsn
        self._connection_string = ConnectionString(dsn)
        self._options: dict[str, Any] = {
            "schema": schema,
            "text_search_config": text_search_config,
            "pool_size": pool_size,
            "timeout": timeout,
            "ranking": ranking,
            "profile": profile,
            "synonyms": synonyms,
            "read_only": read_only,
        }
        #: Whether the index was opened for searching only (``index`` and ``delete`` then raise).
        self.read_only = bool(read_only)
        #: The connection string as it may be shown: its host, port, database and user only, never a
        #: password, ``sslpassword``, ``options`` or a piece of one (``""`` when none can be told apart).
        self.dsn = self._connection_string.shown
        #: The schema of the retriever's tables.
        self.schema = schema
        self.timeout = float(timeout)
        self.pool_size = pool_size
        server = repr(self.dsn) if self.dsn else "the server its connection string names"
        self._where = f"the retriever schema {schema!r} on {server}"
        self._name = sql.Identifier(schema)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._closed = True
        self._connect_options: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in conninfo_to_dict(dsn):
            self._connect_options["connect_timeout"] = max(2, math.ceil(timeout))
        try:
            with psycopg.connect(dsn, **self._connect_options) as conn:
                #: The text search configuration of the index (the one it was created with).
                self.text_search_config = prepare_schema(
                    conn, schema, text_search_config, where=self._where, create=not read_only
                )
        except psycopg.Error as exc:
            raise self._translate(exc, "connect to")  # noqa: B904 - the cause is set, or hidden, there
        scrub_pool_logs(self._connection_string)
        self._pool = self._new_pool()
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------------

    def _new_pool(self) -> ConnectionPool:
        self._pid = os.getpid()
        return ConnectionPool(
            self._dsn,
            min_size=1,
            max_size=self.pool_size,
            kwargs=self._connect_options,
            timeout=self.timeout,
            open=True,
            name=f"pageindex-{self.schema}",
        )

    def close(self) -> None:
        """Close every connection; further calls raise ``RetrieverClosedError``. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._pid == os.getpid():
                    self._pool.close()

    def __enter__(self) -> PostgresPageRetriever:
        self._check_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"PostgresPageRetriever({self.dsn!r}, schema={self.schema!r}, {state})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_reopen, (self._dsn, self._options))

    def _check_open(self) -> None:
        if self._closed:
            raise RetrieverClosedError("This PostgresPageRetriever is closed; create a new one.")

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection, or the one this thread already holds inside a call."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._lock:
            self._check_open()
            if self._pid != os.getpid():
                # Forked: the parent's sockets are not ours to use; this process opens its own.
                self._pool = self._new_pool()
            pool = self._pool
        with pool.connection() as conn:
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    def _call(self, action: str, work: Callable[[], _T]) -> _T:
        """Run one public call; a lost connection is retried once on a fresh one, every error translated."""
        self._check_open()
        try:
            return work()
        except PoolTimeout as exc:
            raise self._translate(exc, action)  # noqa: B904 - the cause is set, or hidden, there
        except psycopg.Error as exc:
            if not connection_lost(exc):  # a refusal (a limit, a value, a right) comes back the same
                raise self._translate(exc, action)  # noqa: B904
        # The connection went away (a restart, a network cut): drop the pool's dead connections, try again.
        with suppress(psycopg.Error):
            self._pool.check()
        try:
            return work()
        except psycopg.Error as exc:
            raise self._translate(exc, action)  # noqa: B904

    def _translate(self, exc: BaseException, action: str) -> PageIndexError:
        """The project's error for ``exc``, scrubbed of what the connection string does not show."""
        return translate_error(exc, action, where=self._where, connection=self._connection_string)

    def _table(self, name: str) -> sql.Composed:
        return sql.SQL("{}.{}").format(self._name, sql.Identifier(name))

    # -- writing --------------------------------------------------------------------------------------

    def index(self, document_id: str, pages: Iterable[Page] | str | Mapping[str, Any]) -> None:
        self._check_writable()
        return self._call("write to", lambda: BasePageRetriever.index(self, document_id, pages))

    index.__doc__ = BasePageRetriever.index.__doc__

    def delete(self, document_id: str) -> bool:
        self._check_writable()
        return self._call("write to", lambda: BasePageRetriever.delete(self, document_id))

    delete.__doc__ = BasePageRetriever.delete.__doc__

    def _subject(self) -> str:
        return self._where[0].upper() + self._where[1:]

    def _write(self, document_id: str, rows: list[PageRow]) -> None:
        """Replace the document's pages in one transaction. A page whose columns together fit one
        tsvector (``PART_WORDS`` words, ``PART_CHARS`` characters) keeps its words in ``pi_pages.tsv``, as
        most do; a longer one keeps them in ``pi_parts``, a row per part of a column, so every word of it
        is found and counted, as SQLite counts them."""
        key = _doc_key(document_id)
        config = self.text_search_config
        insert = sql.SQL(
            "INSERT INTO {} (doc_key, page, body, headings, descriptions, kind, numeric, length, tsv) "
            "VALUES (%(key)s, %(page)s, %(body)s, %(headings)s, %(descriptions)s, %(kind)s, %(numeric)s,"
            " %(length)s, setweight(to_tsvector(%(config)s::regconfig, %(body_words)s), 'D')"
            " || setweight(to_tsvector(%(config)s::regconfig, %(headings_words)s), 'A')"
            " || setweight(to_tsvector(%(config)s::regconfig, %(descriptions_words)s), 'B'))"
        ).format(self._table("pi_pages"))
        params = []
        parts: dict[str, list[Any]] = {"pages": [], "parts": [], "weights": [], "texts": []}
        for page, (body, headings, descriptions, kind, numeric) in enumerate(rows, start=1):
            texts = [_storable(text) for text in (body, headings, descriptions)]
            length = sum(len(WORD.findall(text)) for text in texts)
            whole = length <= PART_WORDS and sum(len(text) for text in texts) <= PART_CHARS
            params.append(
                {
                    "key": key,
                    "page": page,
                    "body": texts[0],
                    "headings": texts[1],
                    "descriptions": texts[2],
                    "kind": kind,
                    "numeric": numeric,
                    "length": length,
                    "config": config,
                    **{
                        f"{column}_words": text if whole else ""
                        for column, text in zip(("body", "headings", "descriptions"), texts, strict=True)
                    },
                }
            )
            if not whole:
                for weight, text in zip(_WEIGHTS, texts, strict=True):
                    for piece in cut_into_parts(text) if text else ():
                        parts["pages"].append(page)
                        parts["parts"].append(len(parts["parts"]))
                        parts["weights"].append(weight)
                        parts["texts"].append(piece)
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_id(key),))
            conn.execute(sql.SQL("DELETE FROM {} WHERE doc_key = %s").format(self._table("pi_docs")), (key,))
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (doc_key, doc_id, page_count, indexed_at) VALUES (%s, %s, %s, %s)"
                ).format(self._table("pi_docs")),
                (key, _doc_id(document_id), len(rows), time.time()),
            )
            if params:
                with conn.cursor() as cursor:
                    cursor.executemany(insert, params)
            if parts["texts"]:
                conn.execute(
                    _INSERT_PARTS.format(self._table("pi_parts")), {"key": key, "config": config, **parts}
                )

    def _remove(self, document_id: str) -> bool:
        key = _doc_key(document_id)
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_id(key),))
            deleted = conn.execute(
                sql.SQL("DELETE FROM {} WHERE doc_key = %s RETURNING 1").format(self._table("pi_docs")),
                (key,),
            ).fetchone()
        return deleted is not None

    # -- reading --------------------------------------------------------------------------------------

    def search(self, document_id: str, query: str, max_pages: int = 5) -> list[PageMatch]:
        return self._call("read", lambda: BasePageRetriever.search(self, document_id, query, max_pages))

    search.__doc__ = BasePageRetriever.search.__doc__

    def snippet(
        self, document_id: str, page_number: int, query: str, *, words: int = 24, lines: bool = False
    ) -> str:
        return self._call(
            "read",
            lambda: BasePageRetriever.snippet(
                self, document_id, page_number, query, words=words, lines=lines
            ),
        )

    snippet.__doc__ = BasePageRetriever.snippet.__doc__

    def __contains__(self, document_id: object) -> bool:
        """Whether ``document_id`` is indexed; a non-string is never indexed."""
        if not isinstance(document_id, str):
            return False
        return self._page_count(document_id) is not None

    def page_count(self, document_id: str) -> int:
        """How many pages are indexed under ``document_id``.

        Raises:
            NoMatchError: the document is not indexed.
            TypeError: ``document_id`` is not a string.
        """
        if not isinstance(document_id, str):
            raise TypeError(f"document_id must be a string, got {type(document_id).__name__}.")
        count = self._page_count(document_id)
        if count is None:
            raise not_indexed(document_id)
        return count

    def _page_count(self, document_id: str) -> int | None:
        def read() -> int | None:
            with self._connection() as conn:
                row = conn.execute(
                    sql.SQL("SELECT page_count FROM {} WHERE doc_key = %s").format(self._table("pi_docs")),
                    (_doc_key(document_id),),
                ).fetchone()
            return None if row is None else int(row[0])

        return self._call("read", read)

    def document_ids(self) -> list[str]:
        """Every indexed document id, sorted."""

        def read() -> list[str]:
            with self._connection() as conn:
                query = sql.SQL("SELECT doc_id FROM {}").format(self._table("pi_docs"))
                rows = conn.execute(query).fetchall()
            return sorted(bytes(row[0]).decode("utf-8", "surrogatepass") for row in rows)

        return self._call("read", read)

    @contextmanager
    def _view(self, document_id: str) -> Iterator[DocumentView | None]:
        key = _doc_key(document_id)
        with self._connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            row = conn.execute(
                sql.SQL("SELECT page_count, indexed_at FROM {} WHERE doc_key = %s").format(
                    self._table("pi_docs")
                ),
                (key,),
            ).fetchone()
            if row is None:
                yield None
                return
            pages = conn.execute(
                sql.SQL("SELECT page, kind, numeric, length FROM {} WHERE doc_key = %s ORDER BY page").format(
                    self._table("pi_pages")
                ),
                (key,),
            ).fetchall()
            yield _PostgresView(self, conn, key, int(row[0]), pages, (int(row[0]), float(row[1])))

    def _tokens(self, words: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The lexemes ``to_tsvector`` makes of each word, in order (usually one stem; none for a stop
        word). Of a hyphenated compound only its parts are kept, as they stand in the index."""
        with self._connection() as conn:
            rows = conn.execute(
                _WORD_LEXEMES,
                ([_storable(word) for word in words], self.text_search_config),
            ).fetchall()
        found: dict[int, list[tuple[int, str]]] = {}
        for number, lexeme, position in rows:
            found.setdefault(int(number), []).append((int(position), lexeme))
        tokens: dict[str, tuple[str, ...]] = {}
        for number, word in enumerate(words, start=1):
            lexemes = [lexeme for _, lexeme in sorted(found.get(number, []))]
            parts = [lexeme for lexeme in lexemes if "-" not in lexeme]
            tokens[word] = tuple(parts if parts and len(parts) < len(lexemes) else lexemes)
        return tokens

    def _highlight(self, document_id: str, page_number: int, words: Sequence[str], size: int) -> str:
        most = max(size, 2)
        options = (
            f'StartSel="{_OPEN}", StopSel="{_CLOSE}", MaxWords={most}, MinWords={max(1, most // 2)}, '
            'ShortWord=0, MaxFragments=1, FragmentDelimiter=" … "'
        )
        with self._connection() as conn:
            lexemes = sorted({token for tokens in self._stem(words).values() for token in tokens})
            if not lexemes:
                return ""
            row = conn.execute(
                sql.SQL(
                    "SELECT ts_headline(%(config)s::regconfig, body, %(query)s::tsquery, %(options)s),"
                    " right(body, 64),"
                    " ts_headline(%(config)s::regconfig, headings, %(query)s::tsquery, %(options)s),"
                    " right(headings, 64),"
                    " ts_headline(%(config)s::regconfig, descriptions, %(query)s::tsquery, %(options)s),"
                    " right(descriptions, 64)"
                    " FROM {} WHERE doc_key = %(key)s AND page = %(page)s"
                ).format(self._table("pi_pages")),
                {
                    "config": self.text_search_config,
                    "query": _tsquery(lexemes),
                    "options": options,
                    "key": _doc_key(document_id),
                    "page": page_number,
                },
            ).fetchone()
        fields = list(row or ())
        for text, end in zip(fields[::2], fields[1::2], strict=True):
            if _OPEN in text:
                return _with_end(str(text), str(end)).replace(_OPEN, "[").replace(_CLOSE, "]")
        return ""


class _PostgresView:
    """One document inside the caller's read snapshot: its pages' facts and lengths, and, for a query's
    lexemes, their positions on the pages that hold any (found through the GIN index)."""

    def __init__(
        self,
        retriever: PostgresPageRetriever,
        conn: psycopg.Connection,
        key: bytes,
        page_count: int,
        pages: Sequence[tuple[int, str | None, float, int]],
        version: tuple[int, float],
    ) -> None:
        self._retriever = retriever
        self.version = version
        self._conn = conn
        self._key = key
        self.page_count = page_count
        self.facts: list[PageFacts] = [(page, kind, float(numeric)) for page, kind, numeric, _ in pages]
        self._lengths = {page: int(length) for page, _, _, length in pages}

    def page_edges(self, chars: int) -> list[tuple[int, str, str]]:
        rows = self._conn.execute(
            sql.SQL(
                "SELECT page, left(body, %s), right(body, %s) FROM {} WHERE doc_key = %s ORDER BY page"
            ).format(self._retriever._table("pi_pages")),
            (chars, chars, self._key),
        ).fetchall()
        return [(int(page), str(head), str(tail)) for page, head, tail in rows]

    def page_bodies(self, pages: Collection[int]) -> dict[int, str]:
        rows = self._conn.execute(
            sql.SQL("SELECT page, body FROM {} WHERE doc_key = %s AND page = ANY(%s)").format(
                self._retriever._table("pi_pages")
            ),
            (self._key, sorted(pages)),
        ).fetchall()
        return {int(page): str(body) for page, body in rows}

    def statistics(self, tokens: Collection[str]) -> PositionStatistics:
        occurrences: dict[int, dict[str, list[Occurrence]]] = {}
        if tokens:
            rows = self._conn.execute(
                _STATISTICS.format(
                    pages=self._retriever._table("pi_pages"), parts=self._retriever._table("pi_parts")
                ),
                {"tokens": sorted(tokens), "key": self._key, "query": _tsquery(sorted(tokens))},
            ).fetchall()
            for page, start, lexeme, positions, weights in rows:
                occurrences.setdefault(int(page), {}).setdefault(lexeme, []).extend(
                    (int(start) + int(position), _COLUMNS.get(weight, 0))
                    for position, weight in zip(positions, weights, strict=True)
                )
        return PositionStatistics(self.page_count, self.facts, self._lengths, occurrences)
