"""A Vectorize-shaped index persisted in SQLite and searched in memory with numpy.

The index is a mirror of the memories table: it can be deleted and rebuilt at any
time, so it lives in its own file beside the database.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ...ports import VectorFilterValue, VectorIndexError, VectorMatch, VectorRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
  id TEXT PRIMARY KEY,
  vector BLOB NOT NULL,
  metadata TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS index_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class DimensionMismatch(VectorIndexError, ValueError):
    """A vector of another width than the index's (a ValueError too, as it always was)."""


@contextmanager
def _stored() -> Iterator[None]:
    """The index file's failures (locked, full, read-only, corrupt) as the port's error."""
    try:
        yield
    except sqlite3.Error as error:
        raise VectorIndexError(f"local vector index: {type(error).__name__}: {error}") from error


class LocalVectorIndex:
    """``dimensions`` is what a new, empty index takes; a file that already holds
    vectors keeps its own until it is emptied (a reindex does that)."""

    def __init__(self, path: Path | str, dimensions: int) -> None:
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        if str(path) != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        stored = self._db.execute("SELECT value FROM index_info WHERE key = 'dimensions'").fetchone()
        self.dimensions = int(stored[0]) if stored else dimensions
        # One BLAS thread: a matrix-vector product this size gains nothing from more, and
        # idle BLAS threads spinning between queries steal the cores the embedder's
        # OpenMP threads need (measured: query embedding 17 ms instead of 46 ms).
        threadpool_limits(limits=1, user_api="blas")
        self._ids: list[str] = []
        self._metadata: list[dict[str, Any]] = []
        self._position: dict[str, int] = {}
        # Metadata values by key, as arrays for filtering, as long as the storage; kept in
        # step by _put and _remove (rebuilt on every change, each query after a write
        # cost O(index size) in Python).
        self._columns: dict[str, np.ndarray] = {}
        self._storage = np.zeros((0, self.dimensions), dtype=np.float32)
        for id_, blob, metadata in self._db.execute("SELECT id, vector, metadata FROM vectors"):
            self._put(id_, np.frombuffer(blob, dtype=np.float32), json.loads(metadata))
        if not self._ids:
            self._set_dimensions(dimensions)

    def close(self) -> None:
        self._db.close()

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if records and not self._ids:
            self._set_dimensions(len(records[0].values))
        rows = []
        for record in records:
            vector = np.asarray(record.values, dtype=np.float32)
            if vector.shape != (self.dimensions,):
                raise DimensionMismatch(f"vector {record.id} has {vector.size} dimensions, index has {self.dimensions}")
            rows.append((record.id, vector.tobytes(), json.dumps(dict(record.metadata))))
        with _stored():
            self._write("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
        for record, (_, blob, _) in zip(records, rows, strict=False):
            self._put(record.id, np.frombuffer(blob, dtype=np.float32), dict(record.metadata))

    async def query(
        self, vector: Sequence[float], *, top_k: int, filter: Mapping[str, VectorFilterValue] | None = None
    ) -> list[VectorMatch]:
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self.dimensions,):
            raise DimensionMismatch(f"query has {query.size} dimensions, index has {self.dimensions}")
        if not self._ids or top_k <= 0:
            return []
        allowed = np.flatnonzero(self._mask(filter or {}))
        if allowed.size == 0:
            return []
        scores = (
            self._matrix[allowed] @ query if allowed.size < len(self._ids) // 2 else (self._matrix @ query)[allowed]
        )
        best = np.argpartition(-scores, top_k - 1)[:top_k] if scores.size > top_k else np.arange(scores.size)
        best = best[np.argsort(-scores[best])]
        return [
            VectorMatch(id=self._ids[allowed[i]], score=float(scores[i]), metadata=dict(self._metadata[allowed[i]]))
            for i in best
        ]

    async def get(self, ids: Sequence[str]) -> list[VectorRecord]:
        found = [self._position[i] for i in ids if i in self._position]
        return [VectorRecord(self._ids[p], self._matrix[p].tolist(), dict(self._metadata[p])) for p in found]

    async def delete(self, ids: Sequence[str]) -> None:
        present = [i for i in ids if i in self._position]
        if not present:
            return
        with _stored():
            self._write("DELETE FROM vectors WHERE id = ?", [(i,) for i in present])
        for id_ in present:
            self._remove(id_)

    async def count(self) -> int:
        return len(self._ids)

    def _write(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """All rows or none: a failed write leaves the file (and so the index) as it was."""
        self._db.execute("BEGIN")
        try:
            self._db.executemany(sql, rows)
        except BaseException:  # broad on purpose: undone, then raised again as it was
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _mask(self, filter: Mapping[str, VectorFilterValue]) -> np.ndarray:
        """Vectorize's metadata filter over the whole index at once."""
        mask = np.ones(len(self._ids), dtype=bool)
        for key, condition in filter.items():
            column = self._column(key)
            for op, operand in condition.items() if isinstance(condition, Mapping) else [("$eq", condition)]:
                if op in ("$eq", "$ne"):
                    hit = column == operand
                elif op in ("$in", "$nin") and isinstance(operand, (list, tuple)):
                    hit = np.zeros(len(self._ids), dtype=bool)
                    for value in operand:
                        hit |= column == value
                else:
                    raise ValueError(f"unsupported vector filter operator {op!r}")
                mask &= ~hit if op in ("$ne", "$nin") else hit
        return mask

    def _column(self, key: str) -> np.ndarray:
        column = self._columns.get(key)
        if column is None:
            column = np.empty(self._storage.shape[0], dtype=object)
            column[: len(self._ids)] = [m.get(key) for m in self._metadata]
            self._columns[key] = column
        return column[: len(self._ids)]

    def _set_dimensions(self, dimensions: int) -> None:
        """Only while empty: an emptied index takes the new embedder's width."""
        self.dimensions = dimensions
        self._storage = np.zeros((0, dimensions), dtype=np.float32)
        with _stored():
            self._db.execute("INSERT OR REPLACE INTO index_info VALUES ('dimensions', ?)", (str(dimensions),))

    def _put(self, id_: str, vector: np.ndarray, metadata: dict[str, Any]) -> None:
        position = self._position.get(id_)
        if position is None:
            position = len(self._ids)
            if position == self._storage.shape[0]:
                # Grow by doubling so that appends stay amortised O(dimensions).
                grown = np.zeros((max(64, position * 2), self.dimensions), dtype=np.float32)
                grown[:position] = self._storage
                self._storage = grown
                for key, column in self._columns.items():
                    self._columns[key] = np.empty(grown.shape[0], dtype=object)
                    self._columns[key][:position] = column[:position]
            self._position[id_] = position
            self._ids.append(id_)
            self._metadata.append(metadata)
        else:
            self._metadata[position] = metadata
        self._storage[position] = vector
        for key, column in self._columns.items():
            column[position] = metadata.get(key)

    def _remove(self, id_: str) -> None:
        # Move the last row into the hole so that removal stays O(dimensions).
        position = self._position.pop(id_)
        last = len(self._ids) - 1
        if position != last:
            moved = self._ids[last]
            self._ids[position] = moved
            self._metadata[position] = self._metadata[last]
            self._storage[position] = self._storage[last]
            self._position[moved] = position
            for column in self._columns.values():
                column[position] = column[last]
        self._ids.pop()
        self._metadata.pop()

    @property
    def _matrix(self) -> np.ndarray:
        return self._storage[: len(self._ids)]
