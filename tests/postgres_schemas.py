"""Schemas of the test PostgreSQL server for one test (fresh names, dropped after it by conftest's
``schemas`` fixture) and statements run on a connection of their own. Imported by the PostgreSQL test
modules after they check psycopg is there."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

__all__ = ["execute", "new_schema"]


def new_schema(schemas: list[str], prefix: str = "t") -> str:
    """A schema name no other test uses, dropped after the test by conftest's ``schemas`` fixture."""
    schema = f"{prefix}_{uuid.uuid4().hex[:16]}"
    schemas.append(schema)
    return schema


def execute(dsn: str, statement: Any, *params: Any) -> list[tuple[Any, ...]]:
    """Run one statement on a connection of its own; its rows, if it returns any."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(statement, params or None)
        return cursor.fetchall() if cursor.description else []
