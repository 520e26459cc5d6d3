"""The local vector index's SQLite file (``vectors.sqlite3``), the truth of the mirror:
a row per vector under a key that only grows (AUTOINCREMENT), so that what changed since
a saved graph is a comparison of two key lists. Its failures (locked, full, read-only,
corrupt) are the port's ``VectorIndexError``."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...ports import VectorIndexError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  vector BLOB NOT NULL,
  metadata TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS index_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Files made before keys existed held one table without them; its rows move over once.
_MIGRATE = """
INSERT INTO entries (id, vector, metadata) SELECT id, vector, metadata FROM vectors;
DROP TABLE vectors;
"""

Row = tuple[int, str, bytes, str]


@contextmanager
def _stored() -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as error:
        raise VectorIndexError(f"local vector index: {type(error).__name__}: {error}") from error


class VectorFile:
    """``path`` is a file, or ``:memory:``."""

    def __init__(self, path: str) -> None:
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone():
            self._db.executescript(f"BEGIN; {_MIGRATE} COMMIT;")
        stored = self._db.execute("SELECT value FROM index_info WHERE key = 'dimensions'").fetchone()
        self.dimensions = int(stored[0]) if stored else None
        # Names this file in the saved graph: a graph saved from a file since deleted
        # and made anew (whose keys start again at 1) is not taken for this one's.
        self._db.execute("INSERT OR IGNORE INTO index_info VALUES ('file', ?)", (secrets.token_hex(8),))
        self.name = str(self._db.execute("SELECT value FROM index_info WHERE key = 'file'").fetchone()[0])

    def close(self) -> None:
        self._db.close()

    def set_dimensions(self, dimensions: int) -> None:
        with _stored():
            self._db.execute("INSERT OR REPLACE INTO index_info VALUES ('dimensions', ?)", (str(dimensions),))
        self.dimensions = dimensions

    def write(self, rows: Mapping[str, tuple[np.ndarray, Mapping[str, Any]]]) -> list[int]:
        """Stores the rows (id → vector and metadata), all or none; their new keys."""
        keys: list[int] = []
        with _stored(), self._transaction():
            for id_, (vector, metadata) in rows.items():
                row = self._db.execute(
                    "INSERT OR REPLACE INTO entries (id, vector, metadata) VALUES (?, ?, ?) RETURNING key",
                    (id_, vector.tobytes(), json.dumps(metadata)),
                ).fetchone()
                keys.append(int(row[0]))
        return keys

    def delete(self, ids: Sequence[str]) -> None:
        with _stored(), self._transaction():
            self._db.executemany("DELETE FROM entries WHERE id = ?", [(i,) for i in ids])

    def vectors(self, keys: Sequence[int]) -> list[np.ndarray]:
        """The float32 vectors stored under ``keys``, in their order."""
        blobs: dict[int, bytes] = {}
        with _stored():
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                blobs.update(self._db.execute(f"SELECT key, vector FROM entries WHERE key IN ({marks})", chunk))
        return [np.frombuffer(blobs[k], dtype=np.float32) for k in keys]

    def keys(self) -> np.ndarray:
        return np.fromiter((k for (k,) in self._db.execute("SELECT key FROM entries")), dtype=np.int64)

    def rows(self, after: int = 0) -> Iterator[Row]:
        """The rows whose key is past ``after``, oldest first."""
        return self._db.execute("SELECT key, id, vector, metadata FROM entries WHERE key > ? ORDER BY key", (after,))

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """All rows or none: a failed write leaves the file (and so the index) as it was."""
        self._db.execute("BEGIN")
        try:
            yield
        except BaseException:  # broad on purpose: undone, then raised again as it was
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
