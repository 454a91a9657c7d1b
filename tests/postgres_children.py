"""Targets of the PostgreSQL tests' spawned processes, in a module of their own: a spawned process imports
the module of its target, and this one imports no more than the retriever (not the framework and litellm)."""

from __future__ import annotations

import pickle
import traceback
from typing import Any


def search_in_child(payload: bytes, queue: Any) -> None:
    try:
        retriever = pickle.loads(payload)
        with retriever:
            queue.put(("ok", [match.page_number for match in retriever.search("doc", "dividend")]))
    except Exception:
        queue.put(("error", traceback.format_exc()))


def open_and_index(dsn: str, schema: str, owner: int, start: Any, queue: Any) -> None:
    try:
        start.wait(timeout=60)
        from extract_thinker_pageindex import PostgresPageRetriever

        with PostgresPageRetriever(dsn, schema=schema) as retriever:
            retriever.index(f"doc{owner}", [f"page of process {owner} about topic{owner}"])
        queue.put((owner, "ok"))
    except Exception:
        queue.put((owner, traceback.format_exc()))
