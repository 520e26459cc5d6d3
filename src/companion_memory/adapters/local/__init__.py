"""Adapters for the local server: sqlite3, an in-process vector index, a bundled embedder."""
