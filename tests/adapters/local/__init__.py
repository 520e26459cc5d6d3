"""The local adapters: SQLite, the vector index, the bundled embedder, the task queue, the server's time limits."""
