"""The page retriever's PostgreSQL schema: creating and checking it, and translating psycopg's errors into
the project's.

``PostgresPageRetriever`` (in :mod:`.postgres`) holds the connection pool; everything here works on a
connection or an error it is given. Needs the ``[postgres]`` extra (psycopg 3).
"""

from __future__ import annotations

import psycopg
from psycopg import sql

from ..errors import (
    IndexFormatError,
    InvalidOptionError,
    PageIndexError,
    RetrieverConnectionError,
    RetrieverError,
)
from .pg_conninfo import ConnectionString

__all__ = ["OWN_CONFIG", "SCHEMA_VERSION", "connection_lost", "prepare_schema", "translate_error"]

#: The layout of the retriever's tables; a schema holding another is refused, never altered. 2 keys a
#: document by the SHA-256 of its id (an id of any length fits the primary key's btree; the id itself is
#: ``pi_docs.doc_id``) and keeps the words of a page too long for one ``tsvector`` in ``pi_parts``.
SCHEMA_VERSION = "2"
#: The advisory lock that serialises schema creation between processes and machines ("pi" + 1).
_SETUP_LOCK = 0x7069_0001
_TABLES = ("pi_meta", "pi_docs", "pi_pages", "pi_parts")


#: SQLSTATEs of a connection that went away: class 08 (connection exception), and the server shutting down
#: or starting (57P01 admin_shutdown, as ``pg_terminate_backend`` gives; 57P02 crash_shutdown; 57P03
#: cannot_connect_now). Only these (and psycopg's own errors of a broken connection, which have none)
#: are retried.
_LOST_STATES = ("57P01", "57P02", "57P03")


def connection_lost(exc: BaseException) -> bool:
    """Whether an error says the connection itself failed, so that a retry on a new connection may work.

    A refusal by the server — a value it cannot take (SQLSTATE class 22), one of its limits (class 54:
    "string is too long for tsvector", "index row size ... exceeds"), anything else with an SQLSTATE outside
    class 08 — is no lost connection, even where psycopg makes it an ``OperationalError``.
    """
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = getattr(exc, "sqlstate", None)
    if state is None:
        return True  # psycopg's or libpq's own: the connection could not be made, or broke
    return state.startswith("08") or state in _LOST_STATES


def translate_error(
    exc: BaseException, action: str, *, where: str, connection: ConnectionString
) -> PageIndexError:
    """The project's error for a psycopg (or psycopg_pool) error met while doing ``action``.

    Its message quotes the first line of ``exc``'s, scrubbed of what ``connection`` does not show (libpq
    quotes a value it could not use: ``invalid integer value "pa" for connection option "port"``). Its
    cause is ``exc``, unless ``exc``'s text holds such a value: then it has none, so that no traceback
    prints it. Raise it with a plain ``raise``.

    Args:
        exc: What psycopg raised.
        action: What was being done, as it reads after "Cannot" ("connect to", "read", "write to").
        where: The server and schema, as messages name them.
        connection: The retriever's connection string, which says what a message may show of it.

    Returns:
        The error to raise: ``RetrieverConnectionError`` for a connection that failed or was lost (the
        only kind worth a retry, see :func:`connection_lost`), ``RetrieverError`` for a refusal by the
        server (a right, a read-only server, a full disk, one of its limits, a value it cannot take),
        ``IndexFormatError`` for tables that are gone.
    """
    error = _translated(exc, action, where=where, connection=connection)
    error.__cause__ = None if connection.leaks(str(exc)) else exc
    error.__suppress_context__ = True
    return error


def _translated(
    exc: BaseException, action: str, *, where: str, connection: ConnectionString
) -> PageIndexError:
    from psycopg_pool import PoolTimeout

    text = connection.scrub(str(exc)).strip()
    first_line = text.splitlines()[0].strip() if text else type(exc).__name__
    state = getattr(exc, "sqlstate", None) or ""
    if isinstance(exc, PoolTimeout):
        return RetrieverConnectionError(
            f"Cannot {action} {where}: no connection to the server could be had in time ({first_line}). "
            "Check that the server is up and reachable, or pass a longer timeout or a larger pool_size."
        )
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return RetrieverError(
            f"Cannot {action} {where}: the database user may not ({first_line}). Grant it the rights on "
            "the schema, or use another schema."
        )
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return RetrieverError(
            f"Cannot {action} {where}: the server is read-only ({first_line}); write to the primary server."
        )
    if isinstance(exc, psycopg.errors.DiskFull):
        return RetrieverError(f"Cannot {action} {where}: the server's disk is full. Nothing was changed.")
    if isinstance(exc, psycopg.errors.UndefinedTable):
        return IndexFormatError(
            f"Cannot {action} {where}: its tables are gone ({first_line}); something dropped them. Open a "
            "new retriever to create them again."
        )
    if state.startswith("54"):
        return RetrieverError(
            f"Cannot {action} {where}: it is over a limit of PostgreSQL ({first_line}). Nothing was "
            "changed, and trying again will not help: send less at once."
        )
    if state.startswith("22"):
        return RetrieverError(
            f"Cannot {action} {where}: the server cannot take a value it was sent ({first_line}). Nothing "
            "was changed, and trying again will not help."
        )
    if connection_lost(exc):
        misread = (
            " (a password holding '/' or '@' must be percent-encoded in a URL: %2F, %40)"
            if connection.misread
            else ""
        )
        return RetrieverConnectionError(
            f"Cannot {action} {where}: {first_line}. Check the connection string{misread}, that the server "
            "is up and reachable, and that the user may log in to the database."
        )
    return RetrieverError(f"Cannot {action} {where}: {first_line}.")


def prepare_schema(
    conn: psycopg.Connection, schema: str, config: str | None, *, where: str, create: bool = True
) -> str:
    """Find the retriever's tables in ``schema``, or create them (the schema too) if none is there and
    ``create``.

    Creation runs under an advisory lock, so many processes opening a new schema at once create it once.

    Args:
        conn: A connection in autocommit mode.
        schema: The schema to keep the tables in.
        config: The text search configuration for a new index; ``None`` for the retriever's own
            (:data:`OWN_CONFIG`, made in the schema): Porter stems, no stop words, hyphenated words as
            their parts — the tokens FTS5's ``porter unicode61`` makes, so both backends rank alike.
        where: The server and schema, as messages name them.
        create: Create the index when there is none; otherwise that is an ``InvalidOptionError``.

    Returns:
        The text search configuration the index uses: the one it was created with.

    Raises:
        IndexFormatError: the schema holds tables named like the retriever's that are not its own, or an
            index of another schema version.
        InvalidOptionError: ``config`` is no text search configuration of the server.
        psycopg.Error: the server failed (the caller translates it).
    """
    with conn.transaction():
        if _existing(conn, schema) != set(_TABLES):
            if create:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_LOCK,))
            found = _existing(conn, schema)
            if found and "pi_meta" not in found:
                raise IndexFormatError(
                    f"{where} holds tables named like the page retriever's ({', '.join(sorted(found))}) "
                    "that are not its own; use another schema."
                )
            if not found and not create:
                raise InvalidOptionError(
                    f"read_only=True opens an existing index, and {where} holds none; check the schema "
                    "(and the database), or drop read_only to create one."
                )
            if not found:
                _create(conn, schema, config, where=where)
        return _check(conn, schema, where=where)


def _existing(conn: psycopg.Connection, schema: str) -> set[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = ANY(%s) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
        (schema, list(_TABLES)),
    ).fetchall()
    return {row[0] for row in rows}


def _create(conn: psycopg.Connection, schema: str, config: str | None, *, where: str) -> None:
    name = sql.Identifier(schema)
    exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    if config is None:
        if exists is None:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
            exists = (1,)
        config = _create_own_config(conn, schema)
    elif not _is_config(conn, config):
        raise InvalidOptionError(
            f"{config!r} is no text search configuration of the server at {where}; use one of "
            "SELECT cfgname FROM pg_ts_config (english, simple, german...)."
        )
    name = sql.Identifier(schema)
    exists = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    if exists is None:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
    conn.execute(sql.SQL("CREATE TABLE {}.pi_meta (key text PRIMARY KEY, value text NOT NULL)").format(name))
    conn.execute(
        sql.SQL("INSERT INTO {}.pi_meta VALUES ('schema_version', %s), ('text_search_config', %s)").format(
            name
        ),
        (SCHEMA_VERSION, config),
    )
    # One row per document: the SHA-256 of its id (UTF-8, surrogatepass) as the key, the id's bytes as given.
    conn.execute(
        sql.SQL(
            "CREATE TABLE {}.pi_docs (doc_key bytea PRIMARY KEY, doc_id bytea NOT NULL, "
            "page_count integer NOT NULL, indexed_at double precision NOT NULL)"
        ).format(name)
    )
    # One row per page: its text (for snippets), its facts, its length in tokens (BM25's normalisation)
    # and its tsvector: body weight D, heading path A, descriptions B (the weight letter names the column).
    conn.execute(
        sql.SQL(
            "CREATE TABLE {0}.pi_pages ("
            " doc_key bytea NOT NULL REFERENCES {0}.pi_docs (doc_key) ON DELETE CASCADE,"
            " page integer NOT NULL, body text NOT NULL, headings text NOT NULL, descriptions text NOT NULL,"
            " kind text, numeric real NOT NULL, length integer NOT NULL, tsv tsvector NOT NULL,"
            " PRIMARY KEY (doc_key, page))"
        ).format(name)
    )
    conn.execute(sql.SQL("CREATE INDEX pi_pages_tsv ON {}.pi_pages USING gin (tsv)").format(name))
    # The words of a page too long for one tsvector (its pi_pages.tsv is then empty): one row per part of
    # one column, its positions counted from ``start`` (the positions of the column's earlier parts).
    conn.execute(
        sql.SQL(
            "CREATE TABLE {0}.pi_parts ("
            " doc_key bytea NOT NULL, page integer NOT NULL, part integer NOT NULL, start integer NOT NULL,"
            " tsv tsvector NOT NULL, PRIMARY KEY (doc_key, page, part),"
            " FOREIGN KEY (doc_key, page) REFERENCES {0}.pi_pages (doc_key, page) ON DELETE CASCADE)"
        ).format(name)
    )
    conn.execute(sql.SQL("CREATE INDEX pi_parts_tsv ON {}.pi_parts USING gin (tsv)").format(name))


#: The name of the retriever's own text search configuration (and of its Porter dictionary), in its schema.
OWN_CONFIG = "pi_text"
#: The parser's token types of words, stemmed; the parts of a hyphenated word are, its whole is not indexed.
_WORD_TOKENS = "asciiword, word, hword_asciipart, hword_part"


def _create_own_config(conn: psycopg.Connection, schema: str) -> str:
    """Make the retriever's text search configuration in the schema; its name, schema-qualified."""
    dictionary = sql.Identifier(schema, "pi_porter")
    own = sql.Identifier(schema, OWN_CONFIG)
    conn.execute(
        sql.SQL("CREATE TEXT SEARCH DICTIONARY {} (TEMPLATE = snowball, Language = porter)").format(
            dictionary
        )
    )
    conn.execute(sql.SQL("CREATE TEXT SEARCH CONFIGURATION {} (COPY = simple)").format(own))
    conn.execute(
        sql.SQL("ALTER TEXT SEARCH CONFIGURATION {} ALTER MAPPING FOR " + _WORD_TOKENS + " WITH {}").format(
            own, dictionary
        )
    )
    conn.execute(
        sql.SQL("ALTER TEXT SEARCH CONFIGURATION {} DROP MAPPING FOR asciihword, hword, numhword").format(own)
    )
    return own.as_string(conn)


def _is_config(conn: psycopg.Connection, config: str) -> bool:
    """Whether the server has this text search configuration (tried in a savepoint)."""
    try:
        with conn.transaction():
            conn.execute("SELECT %s::regconfig", (config,))
    except (psycopg.errors.UndefinedObject, psycopg.errors.InvalidParameterValue, psycopg.errors.SyntaxError):
        return False
    return True


def _check(conn: psycopg.Connection, schema: str, *, where: str) -> str:
    rows: dict[str, str] = dict(
        conn.execute(sql.SQL("SELECT key, value FROM {}.pi_meta").format(sql.Identifier(schema))).fetchall()
    )
    version = rows.get("schema_version")
    if version is None:
        raise IndexFormatError(
            f"{where} holds a table pi_meta that is not the page retriever's (no schema_version row); "
            "use another schema."
        )
    if version != SCHEMA_VERSION:
        raise IndexFormatError(
            f"{where} holds a retriever index of schema version {version}; this version reads "
            f"{SCHEMA_VERSION}. Use another schema, or drop this one to rebuild the index."
        )
    config = rows.get("text_search_config", "english")
    if not _is_config(conn, config):
        raise IndexFormatError(
            f"{where} was indexed with the text search configuration {config!r}, which the server no "
            "longer has; create it again or rebuild the index in another schema."
        )
    return config
