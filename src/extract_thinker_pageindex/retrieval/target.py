"""A retriever named by one string, as the command line takes it: a PostgreSQL connection string (a URL or
``key=value`` pairs) or the path of an SQLite file."""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidOptionError

__all__ = ["open_retriever", "postgres_dsn"]

# "postgresql://...", "postgres://...", and SQLAlchemy's "postgresql+psycopg://...".
_URL = re.compile(r"([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
# libpq's connection keywords (as of libpq 18): key=value pairs naming one of them are a connection string
# (which may hold a password), never a file name to create and to print in messages.
_KEYWORD_NAMES = (
    "application_name|channel_binding|client_encoding|connect_timeout|dbname|fallback_application_name|"
    "gssdelegation|gssencmode|gsslib|host|hostaddr|keepalives|keepalives_count|keepalives_idle|"
    "keepalives_interval|krbsrvname|load_balance_hosts|max_protocol_version|min_protocol_version|"
    "oauth_client_id|oauth_client_secret|oauth_issuer|oauth_scope|options|passfile|password|port|"
    "replication|require_auth|requirepeer|scram_client_key|scram_server_key|service|"
    "ssl_max_protocol_version|ssl_min_protocol_version|sslcert|sslcertmode|sslcompression|sslcrl|"
    "sslcrldir|sslkey|sslkeylogfile|sslmode|sslnegotiation|sslpassword|sslrootcert|sslsni|"
    "target_session_attrs|tcp_user_timeout|user"
)
_KEYWORDS = re.compile(rf"({_KEYWORD_NAMES})\s*=", re.IGNORECASE)
# key=value pairs: a first word followed by "=", and one of libpq's keywords among the words.
_PAIRS = re.compile(rf"[a-z_][a-z0-9_]*\s*=(.*\s)?({_KEYWORD_NAMES})\s*=", re.IGNORECASE | re.DOTALL)
# "postgresql:u:pw@host/db", "postgres:/host": a URL whose "//" went missing, not a file name.
_BROKEN_URL = re.compile(r"postgres(ql)?(\+[a-z0-9]+)?:(?!//)", re.IGNORECASE)


def postgres_dsn(target: str) -> str | None:
    """The PostgreSQL connection string ``target`` is, normalised for libpq (the scheme in lower case, a
    driver suffix dropped), or ``None`` when it is no connection string (then it is a file path).

    Args:
        target: What ``--retriever`` was given.

    Returns:
        The connection string; ``None`` for a file path.

    Raises:
        InvalidOptionError: a URL of another scheme (``mysql://``, ``sqlite://``), or a PostgreSQL URL
            without its ``//``, named without the rest of it (it may hold a password).
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
    if _BROKEN_URL.match(text):
        raise InvalidOptionError(
            "The retriever reads like a PostgreSQL URL without the '//' after its scheme; write it as "
            "'postgresql://user@host:5432/dbname' (it is not repeated here: it may hold a password)."
        )
    if _KEYWORDS.match(text) or _PAIRS.match(text):
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
