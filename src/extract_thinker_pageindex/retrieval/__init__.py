"""Page retrieval: a local SQLite FTS5 index of page text, ranked by a per-document BM25.

The names of ExtractThinker's own ``extract_thinker.retrieval`` are here too (``SQLitePageRetriever``,
``PageMatch``, ``DocumentLoaderRAG``), so that ``from extract_thinker.retrieval import ...`` becomes
``from extract_thinker_pageindex.retrieval import ...``. They load on first use: importing this package
loads neither SQLite's retriever nor ExtractThinker.

Its modules import only ``errors`` and ``inputs``; the loaders, the view, the command line and the package
root use them. This package's own ``__init__`` hands on ``DocumentLoaderRAG`` from ``loaders/`` (lazily,
for the framework's import path): the one import that runs up the layers (see docs/architecture.md).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DocumentLoaderRAG", "PageMatch", "SQLitePageRetriever"]

_WHERE = {
    "DocumentLoaderRAG": "..loaders.rag",
    "PageMatch": ".base",
    "SQLitePageRetriever": ".sqlite",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
