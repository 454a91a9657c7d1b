"""The page retriever's SQLite file: opening it (read-only when it must be), checking and creating its
schema, and translating SQLite's errors into the project's.

``SQLitePageRetriever`` (in :mod:`.sqlite`) holds the connection; everything here works on a connection or
a path it is given, so what the retriever refuses to open, and why, can be read in one place.
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import IndexFormatError, InvalidOptionError, RetrieverError

__all__ = [
    "SCHEMA_VERSION",
    "TOKENIZER",
    "busy_timeout_ms",
    "connect",
    "database_path",
    "error_kind",
    "prepare_schema",
    "read_transaction",
    "translate_error",
    "unwritable_reason",
    "write_transaction",
]

#: 2 adds ``pi_pages`` (each page's kind and share of numbers) and title zones in ``headings``; a file of
#: version 1 is brought up to it when opened for writing.
SCHEMA_VERSION = "2"
TOKENIZER = "porter unicode61 remove_diacritics 2"


def database_path(path: object) -> str:
    """The database path as a string, or a clear error for one that can name no file."""
    if isinstance(path, (bytes, bytearray)):
        path = os.fsdecode(bytes(path))
    elif isinstance(path, os.PathLike):
        path = os.fsdecode(os.fspath(path))
    if not isinstance(path, str):
        raise InvalidOptionError(f"database must be a file path or ':memory:'; got {type(path).__name__}.")
    if "\x00" in path:
        raise InvalidOptionError(
            f"The database path {path!r} contains a NUL character, which no file name can hold; "
            "pass a real file path or ':memory:'."
        )
    return path


def busy_timeout_ms(timeout: object) -> int:
    """``timeout`` in whole milliseconds for ``PRAGMA busy_timeout``, or a clear error."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout < 0
    ):
        raise InvalidOptionError(f"timeout must be a finite number of seconds, 0 or more; got {timeout!r}.")
    # SQLite keeps the busy timeout in a C int of milliseconds: about 24 days at most.
    return min(int(timeout * 1000), 2**31 - 1)


def error_kind(exc: sqlite3.Error) -> str:
    """SQLite's primary result code of an error without its prefix: ``FULL``, ``READONLY``, ``BUSY``..."""
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11+
    if name:
        return str(name).removeprefix("SQLITE_").split("_")[0]
    message = str(exc).lower()
    for fragment, kind in _ERROR_MESSAGES:
        if fragment in message:
            return kind
    return "ERROR"


# SQLite's own messages for its result codes, for Pythons whose sqlite3 errors do not carry the code.
_ERROR_MESSAGES = (
    ("database or disk is full", "FULL"),
    ("readonly database", "READONLY"),
    ("is locked", "BUSY"),
    ("not a database", "NOTADB"),
    ("malformed", "CORRUPT"),
    ("unable to open", "CANTOPEN"),
    ("disk i/o error", "IOERR"),
)


def translate_error(
    exc: sqlite3.Error, action: str, *, path: str, timeout: float
) -> IndexFormatError | RetrieverError:
    """The project's error for an SQLite error met while doing ``action`` ("open", "read", "write to").

    Every sqlite3 error the retriever meets is translated here, and only here.

    Args:
        exc: What sqlite3 raised.
        action: What was being done, as it reads after "Cannot".
        path: The database path, named in the message.
        timeout: The busy timeout in seconds, named when a lock was held too long.

    Returns:
        ``IndexFormatError`` for a file that is no database or is damaged; ``RetrieverError`` for
        anything else (full disk, read-only, locked past the timeout, I/O).
    """
    kind = error_kind(exc)
    where = f"the retriever database {path!r}"
    if kind == "FULL":
        return RetrieverError(
            f"Cannot {action} {where}: the database or disk is full. Nothing was changed; free some "
            "disk space and try again."
        )
    if kind == "READONLY":
        return RetrieverError(
            f"Cannot {action} {where}: it is read-only ({exc}). Nothing was changed; search it, or "
            "make the file and its folder writable to index into it."
        )
    if kind in ("NOTADB", "CORRUPT"):
        return IndexFormatError(
            f"{path!r} is not a page retriever database: {exc}. Use another file, or delete it if "
            "it is a damaged index."
        )
    if kind in ("BUSY", "LOCKED"):
        return RetrieverError(
            f"Cannot {action} {where}: another connection kept it locked for more than {timeout} "
            "seconds. Try again, or pass a longer timeout."
        )
    if kind in ("CANTOPEN", "IOERR", "PERM", "AUTH"):
        return RetrieverError(
            f"Cannot {action} {where}: {exc}. Check that the path and its folder exist and can be read "
            "and written, and that the disk works."
        )
    return RetrieverError(f"Cannot {action} {where}: {exc}.")


#: The retriever's plain tables and their columns.
_PLAIN_TABLES = {
    "pi_meta": ("key", "value"),
    "pi_docs": ("doc_id", "first_row", "page_count", "indexed_at"),
    "pi_pages": ("row", "kind", "numeric"),
}
#: The retriever's virtual tables: their module and columns.
_VIRTUAL_TABLES = {
    "pi_fts": ("fts5", ("body", "headings", "descriptions")),
    "pi_vocab": ("fts5vocab", ("term", "doc", "cnt")),
}
#: The tables FTS5 keeps for pi_fts.
_FTS_SHADOW_TABLES = {f"pi_fts_{part}" for part in ("data", "idx", "content", "docsize", "config")}


#: The FTS5 table of ExtractThinker's own ``SQLitePageRetriever`` (its main branch, after 0.1.14).
FRAMEWORK_TABLE = "extractthinker_pages"


def inspect_schema(conn: sqlite3.Connection, path: str) -> tuple[set[str], list[str]]:
    """The retriever tables a database holds, and the names of everything else in it.

    Raises:
        IndexFormatError: a table has a retriever table's name but another layout.
    """
    own: set[str] = set()
    foreign: list[str] = []
    for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall():
        key = str(name).lower()  # SQLite's names are case-insensitive
        if key.startswith("sqlite_"):
            continue  # SQLite's own: automatic indexes, sqlite_sequence, sqlite_stat1
        if key in _FTS_SHADOW_TABLES:
            own.add(key)
            continue
        if key in _PLAIN_TABLES:
            wanted, module = _PLAIN_TABLES[key], None
        elif key in _VIRTUAL_TABLES:
            module, wanted = _VIRTUAL_TABLES[key]
        else:
            foreign.append(str(name))
            continue
        using = re.search(r"\bUSING\s+(\w+)", sql or "", re.IGNORECASE)
        found_module = using.group(1).lower() if using else None
        columns = tuple(row[0] for row in conn.execute("SELECT name FROM pragma_table_info(?)", (name,)))
        if kind != "table" or found_module != module or columns != wanted:
            raise IndexFormatError(
                f"{path!r} has {_shape(kind, found_module, columns)} named {name!r} where the page "
                f"retriever keeps {_shape('table', module, wanted)}; the file belongs to something else. "
                "Use another file for the retriever."
            )
        own.add(key)
    return own, foreign


def _shape(kind: str, module: str | None, columns: Sequence[str]) -> str:
    """A table's kind and columns in words: ``an FTS5 table (body, headings, descriptions)``."""
    if module:
        what = f"an {module.upper()} table"  # "an eff-tee-ess"
    else:
        what = {"table": "a plain table", "view": "a view", "index": "an index"}.get(kind, f"a {kind}")
    return f"{what} ({', '.join(columns)})"


def check_schema_version(conn: sqlite3.Connection, path: str, *, migrate: bool = False) -> None:
    """Refuse an index written by another schema version, or bring a version 1 index up to date.

    Raises:
        IndexFormatError: ``pi_meta`` records another schema version (or version 1, read-only).
    """
    row = conn.execute("SELECT value FROM pi_meta WHERE key = 'schema_version'").fetchone()
    if row is not None and row[0] == "1" and migrate:
        _migrate_from_1(conn)
        return
    if row is not None and row[0] != SCHEMA_VERSION:
        raise IndexFormatError(
            f"{path!r} holds a retriever index of schema version {row[0]}; this version reads "
            f"{SCHEMA_VERSION}. Delete the file to rebuild it."
        )


def prepare_schema(
    conn: sqlite3.Connection,
    path: str,
    *,
    memory: bool,
    read_only_reason: str | None,
    allow_foreign_tables: bool,
) -> None:
    """Check what a database holds, then create the retriever's tables in it (or, read-only, find them).

    Args:
        conn: A connection from :func:`connect`.
        path: The database path, named in messages.
        memory: Whether the database is in memory (no WAL journal then).
        read_only_reason: Why the file is open read-only, or ``None`` when it may be written.
        allow_foreign_tables: Add the retriever's tables beside other applications' tables.

    Raises:
        IndexFormatError: a table is named like the retriever's with another layout; the file holds
            other tables without ``allow_foreign_tables``; it is read-only and holds no retriever index;
            or it holds an index of another schema version.
        sqlite3.Error: SQLite failed (the caller translates it with :func:`translate_error`).
    """
    # Look before touching anything: another application's file is refused as it is, journal mode
    # included.
    with read_transaction(conn):
        own, foreign = inspect_schema(conn, path)
    if foreign and not allow_foreign_tables:
        if any(name.lower() == FRAMEWORK_TABLE for name in foreign):
            raise IndexFormatError(
                f"{path!r} was written by ExtractThinker's own SQLitePageRetriever (its table "
                f"{FRAMEWORK_TABLE!r}); extract-thinker-pageindex's SQLitePageRetriever keeps pages in "
                "tables of its own and does not read or convert that one, so the file was left untouched. "
                "Index the documents again into a new file (the retriever stores only the pages' text), "
                "or pass allow_foreign_tables=True to keep both retrievers' tables in this file."
            )
        shown = ", ".join(repr(name) for name in foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise IndexFormatError(
            f"{path!r} holds tables that are not the page retriever's ({shown}), so it was left "
            "untouched. Use a file of its own for the retriever, or pass allow_foreign_tables=True to "
            "add the retriever's tables to this database."
        )
    if read_only_reason is not None:
        if "pi_meta" in own:
            with read_transaction(conn):
                version = conn.execute("SELECT value FROM pi_meta WHERE key = 'schema_version'").fetchone()
            if version is not None and version[0] == "1":
                raise IndexFormatError(
                    f"{path!r} holds a retriever index of schema version 1, and {read_only_reason}; open "
                    "it once with write access to upgrade it to version 2 in place."
                )
        missing = sorted((set(_PLAIN_TABLES) | set(_VIRTUAL_TABLES)) - own)
        if missing:
            raise IndexFormatError(
                f"{path!r} is not a page retriever database (it lacks {', '.join(missing)}), and "
                f"{read_only_reason}, so no index can be created in it."
            )
        with read_transaction(conn):
            check_schema_version(conn, path)
        return
    if not memory and not foreign:
        # WAL lets readers and one writer work at once; a file shared with another application
        # keeps the journal mode that application chose.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    with write_transaction(conn):
        conn.execute("CREATE TABLE IF NOT EXISTS pi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        check_schema_version(conn, path, migrate=True)
        conn.execute("INSERT OR IGNORE INTO pi_meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS pi_docs ("
            " doc_id TEXT PRIMARY KEY, first_row INTEGER NOT NULL, page_count INTEGER NOT NULL,"
            " indexed_at REAL NOT NULL)"
        )
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS pi_fts USING fts5("
            f"body, headings, descriptions, tokenize = '{TOKENIZER}')"
        )
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS pi_vocab USING fts5vocab(pi_fts, row)")
        conn.execute(_CREATE_PAGES)


# Facts about each page (rows of pi_fts), computed when it is indexed: its kind in the domain profile
# ("cash_flow_statement") and its share of numbers.
_CREATE_PAGES = (
    "CREATE TABLE IF NOT EXISTS pi_pages (row INTEGER PRIMARY KEY, kind TEXT, numeric REAL NOT NULL)"
)


def _migrate_from_1(conn: sqlite3.Connection) -> None:
    """Version 1 to 2, inside the caller's write transaction: the stored text gives each page its title
    zone (where it has no heading path) and its facts, as :meth:`SQLitePageRetriever.index` would."""
    from .page_text import page_facts, title_zone
    from .profiles import FINANCE

    conn.execute(_CREATE_PAGES)
    rows = conn.execute("SELECT rowid, body, headings FROM pi_fts").fetchall()
    for rowid, body, headings in rows:
        zone = title_zone(body or "")
        if not headings and zone:
            conn.execute("UPDATE pi_fts SET headings = ? WHERE rowid = ?", (zone, rowid))
        kind, numeric = page_facts(body or "", FINANCE)
        conn.execute(
            "INSERT OR REPLACE INTO pi_pages (row, kind, numeric) VALUES (?, ?, ?)", (rowid, kind, numeric)
        )
    conn.execute("UPDATE pi_meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))


def _read_only_uri(path: str, *, immutable: bool) -> str:
    """An SQLite URI that opens ``path`` read-only (any bytes of the name percent-encoded)."""
    posix = Path(os.path.abspath(path)).as_posix()
    if not posix.startswith("/"):
        posix = "/" + posix  # a Windows drive path: file:///C:/...
    uri = "file:" + quote(os.fsencode(posix), safe="/:") + "?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def unwritable_reason(path: str) -> str | None:
    """Why an existing database file cannot be written (it, or its folder, where the journal goes), if so."""
    if not os.access(path, os.W_OK):
        return "the file is read-only"
    if not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK):
        return "its folder is read-only"
    return None


def connect(path: str, *, timeout_ms: int, read_only: bool) -> sqlite3.Connection:
    """A connection to the database, usable from any thread, with transactions left to the caller.

    A read-only connection opens the file by a ``mode=ro`` URI, and falls back to reading it as immutable
    when SQLite cannot coordinate with other readers (a WAL file in a folder this process cannot write).

    Raises:
        sqlite3.Error: SQLite cannot open the file (the caller translates it with :func:`translate_error`).
    """
    options: dict[str, Any] = {"check_same_thread": False, "isolation_level": None}
    timeout = timeout_ms / 1000
    if not read_only:
        return sqlite3.connect(path, timeout=timeout, **options)
    conn = sqlite3.connect(_read_only_uri(path, immutable=False), timeout=timeout, uri=True, **options)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if error_kind(exc) not in ("READONLY", "CANTOPEN"):
            raise
    # A WAL file in a folder this process cannot write: SQLite cannot create the shared-memory file
    # that readers coordinate through, so the file is read as immutable. That reads the main file only,
    # as it is: pages still in the owner's WAL are not seen, and a writer of the owner's that checkpoints
    # meanwhile can make a search fail (IndexFormatError). The docs say to use it on files at rest.
    return sqlite3.connect(_read_only_uri(path, immutable=True), timeout=timeout, uri=True, **options)


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken with the write lock up front so concurrent writers queue cleanly.

    Any failure, the COMMIT's included (a full disk shows there), rolls everything back.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise


@contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One read transaction: every statement inside sees the same snapshot."""
    conn.execute("BEGIN")
    try:
        yield conn
    except BaseException:
        _rollback(conn)
        raise
    conn.execute("COMMIT")


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite may have rolled back by itself (it does on some full-disk and I/O errors); the error that
    # brought us here is the one to report, not a failed ROLLBACK.
    if conn.in_transaction:
        with suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
