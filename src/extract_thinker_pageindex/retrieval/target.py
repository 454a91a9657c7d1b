"""A retriever named by one string, as the command line takes it: a PostgreSQL connection string (a URL or
``key=value`` pairs) or the path of an SQLite file."""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidOptionError

__all__ = ["open_retriever", "postgres_dsn"]

# "postgresql://...", "postgres://...", and SQLAlchemy's "postgresql+psycopg://...".
_URL = re.compile(r"([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
# libpq's key=value form starts with one of its connection keywords.
_KEYWORDS = re.compile(
    r"(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|options|application_name|"
    r"connect_timeout|target_session_attrs|require_auth|sslrootcert|sslcert|sslkey)\s*=",
    re.IGNORECASE,
)


def postgres_dsn(target: str) -> str | None:
    """The PostgreSQL connection string ``target`` is, normalised for libpq (the scheme in lower case, a
    driver suffix dropped), or ``None`` when it is no connection string (then it is a file path).

    Raises:
        InvalidOptionError: a URL of another scheme (``mysql://``, ``sqlite://``), named without the rest
            of it (it may hold a password).
    """
    text = target.strip()
    url = _URL.match(text)
    if url is not None:
        scheme = url.group(1).lower()
        if scheme.split("+", 1)[0] not in ("postgresql", "postgres"):
            raise InvalidOptionError(
                f"A retriever is named by a postgresql:// URL or the path of an SQLite file; a {scheme}:// "
                "URL is neither."
            )
        return "postgresql://" + text[url.end() :]
    if _KEYWORDS.match(text):
        return text
    return None


def open_retriever(target: str, *, schema: str | None = None, read_only: bool = False) -> Any:
    """Open the retriever ``target`` names.

    Args:
        target: A PostgreSQL connection string — ``postgresql://user@host:5432/db`` or
            ``host=... dbname=... user=...`` — for a :class:`PostgresPageRetriever` (the password may come
            from ``PGPASSWORD`` or ``~/.pgpass`` rather than the string), or the path of an SQLite file for a
            :class:`SQLitePageRetriever` (created if missing, unless ``read_only``).
        schema: The PostgreSQL schema (default ``"public"``); only with a PostgreSQL connection string.
        read_only: Open an existing index for searching only: nothing is created.

    Raises:
        InvalidOptionError: an empty target, a URL of another database, ``schema`` with an SQLite file, or
            ``read_only`` naming no index.
        ImportError: a PostgreSQL connection string without the ``[postgres]`` extra installed.
        RetrieverError: the index cannot be opened (its subclasses say why).
    """
    if not isinstance(target, str) or not target.strip():
        raise InvalidOptionError(f"The retriever must be a PostgreSQL URL or an SQLite file; got {target!r}.")
    dsn = postgres_dsn(target)
    if dsn is not None:
        from .postgres import PostgresPageRetriever

        return PostgresPageRetriever(dsn, schema=schema or "public", read_only=read_only)
    if schema is not None:
        raise InvalidOptionError(
            f"A schema belongs to a PostgreSQL index; {target!r} is an SQLite file (a PostgreSQL index is "
            "named by a postgresql:// URL or host=... dbname=... pairs)."
        )
    from .sqlite import SQLitePageRetriever

    return SQLitePageRetriever(target.strip(), read_only=read_only)
