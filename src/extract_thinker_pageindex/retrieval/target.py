"""A retriever named by one string, as the command line takes it: a PostgreSQL connection URL or the path
of an SQLite file."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidOptionError

__all__ = ["is_postgres_url", "open_retriever"]

_POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: str) -> bool:
    """Whether ``target`` is a PostgreSQL connection URL (``postgresql://`` or ``postgres://``)."""
    return target.lower().startswith(_POSTGRES_SCHEMES)


def open_retriever(target: str, *, schema: str | None = None) -> Any:
    """Open the retriever ``target`` names.

    Args:
        target: ``postgresql://user@host:5432/db`` (a :class:`PostgresPageRetriever`; the password may come
            from ``PGPASSWORD`` or ``~/.pgpass`` rather than the URL), or the path of an SQLite file (a
            :class:`SQLitePageRetriever`, created if missing).
        schema: The PostgreSQL schema (default ``"public"``); only with a PostgreSQL URL.

    Raises:
        InvalidOptionError: an empty target, or ``schema`` with an SQLite file.
        ImportError: a PostgreSQL URL without the ``[postgres]`` extra installed.
        RetrieverError: the index cannot be opened (its subclasses say why).
    """
    if not isinstance(target, str) or not target.strip():
        raise InvalidOptionError(f"The retriever must be a PostgreSQL URL or an SQLite file; got {target!r}.")
    if is_postgres_url(target):
        from .postgres import PostgresPageRetriever

        return PostgresPageRetriever(target, schema=schema or "public")
    if schema is not None:
        raise InvalidOptionError(
            f"A schema belongs to a PostgreSQL index; {target!r} is an SQLite file (a PostgreSQL index is "
            "named by a postgresql:// URL)."
        )
    from .sqlite import SQLitePageRetriever

    return SQLitePageRetriever(target)
