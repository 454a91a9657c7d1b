"""Page retrieval: a local SQLite FTS5 index of page text, ranked by a per-document BM25."""
