"""The page retriever's PostgreSQL schema: creating and checking it, and translating psycopg's errors into
the project's.

``PostgresPageRetriever`` (in :mod:`.postgres`) holds the connection pool; everything here works on a
connection or an error it is given. Needs the ``[postgres]`` extra (psycopg 3).
"""

from __future__ import annotations

import re

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..errors import (
    IndexFormatError,
    InvalidOptionError,
    PageIndexError,
    RetrieverConnectionError,
    RetrieverError,
)

__all__ = ["OWN_CONFIG", "SCHEMA_VERSION", "connection_lost", "prepare_schema", "redacted", "translate_error"]

#: The layout of the retriever's tables; a schema holding another is refused, never altered.
SCHEMA_VERSION = "1"
#: The advisory lock that serialises schema creation between processes and machines ("pi" + 1).
_SETUP_LOCK = 0x7069_0001
_TABLES = ("pi_meta", "pi_docs", "pi_pages")


def redacted(dsn: str) -> str:
    """The connection string without its password, for messages and ``repr``.

    Raises:
        InvalidOptionError: ``dsn`` is no connection string PostgreSQL's client can read.
    """
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        # libpq quotes the part it could not read, which may be (part of) the password: never repeated.
        problem = re.sub(r'"[^"]*"', '"..."', str(exc).replace(dsn, "...") if dsn else str(exc)).strip()
        raise InvalidOptionError(
            f"The PostgreSQL connection string cannot be read: {problem}. Pass a URL such as "
            "'postgresql://user@host:5432/dbname' or 'host=... dbname=... user=...'."
        ) from None
    params.pop("password", None)
    return make_conninfo("", **{key: value for key, value in params.items() if value is not None})


def connection_lost(exc: BaseException) -> bool:
    """Whether an error says the connection itself failed (a retry on a new connection may work)."""
    return isinstance(exc, psycopg.OperationalError) and not isinstance(exc, psycopg.errors.QueryCanceled)


def translate_error(exc: BaseException, action: str, *, where: str) -> PageIndexError:
    """The project's error for a psycopg (or psycopg_pool) error met while doing ``action``.

    Args:
        exc: What psycopg raised.
        action: What was being done, as it reads after "Cannot" ("connect to", "read", "write to").
        where: The server and schema, as messages name them.
    """
    from psycopg_pool import PoolTimeout

    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
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
    if connection_lost(exc):
        return RetrieverConnectionError(
            f"Cannot {action} {where}: {first_line}. Check the connection string, that the server is up "
            "and reachable, and that the user may log in to the database."
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
    conn.execute(
        sql.SQL(
            "CREATE TABLE {}.pi_docs (doc_key bytea PRIMARY KEY, page_count integer NOT NULL, "
            "indexed_at double precision NOT NULL)"
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
