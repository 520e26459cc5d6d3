"""A Vectorize-shaped index persisted in SQLite and searched in memory.

The index is a mirror of the memories table: it can be deleted and rebuilt at any
time, so it lives in its own file beside the database (``vectors.sqlite3``), the truth
of the mirror. How it is searched depends on its size:

- Up to ``ann_threshold`` vectors: exactly, a numpy product over a float32 matrix.
- Past it: approximately. An HNSW graph (usearch, float16 vectors) finds candidates and
  the matrix, now float16 to halve its memory, scores them (``get`` still answers the
  float32 values, from the file). A query whose filter leaves
  at most ``ann_threshold`` candidates is still answered exactly over those candidates,
  so a selective filter (a small namespace, a rare type) never loses recall; otherwise
  the graph is asked for enough neighbours that ``top_k`` of them pass the filter, more
  if too few do, and an exact search if still too few.

The graph and the matrix are saved beside the file (``vectors.sqlite3.hnsw-<token>``,
and ``vectors.sqlite3.hnsw.npz`` with ids, keys, metadata and vectors) so that a start
loads them instead of building the graph again; rows changed since the save are applied
on load. Every stored row has a key that only grows (AUTOINCREMENT), which is what makes
that catch-up a comparison of two key lists.
"""

from __future__ import annotations

import json
import logging
import math
import os
import secrets
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ...ports import VECTOR_QUERY_MAX_TOP_K, VectorFilterValue, VectorIndexError, VectorMatch, VectorRecord
from ...vector_filter import holds, parse

log = logging.getLogger("companion_memory.vector_index")

# Below this many vectors an exact search is at the embedding's floor (measured: 20k
# float32 rows of 384 dims take about 2 ms), so the graph is not worth its build.
DEFAULT_ANN_THRESHOLD = 20_000
# HNSW parameters: usearch's defaults for connectivity, a wider search than its default
# (64) for recall at k=50 (recall's MEMORY_TOP_K). float16, not int8: usearch's int8
# (a plain ×127) found 0.86 of the exact top 10 of LoCoMo queries at 20k vectors, float16
# 0.99 (bench figures in issue 21's report).
_CONNECTIVITY = 16
_EXPANSION_ADD = 128
_EXPANSION_SEARCH = 128
_GRAPH_DTYPE = "f16"
# Candidates taken from the graph per match wanted, before they are scored again.
_CANDIDATES_PER_MATCH = 2
# Filters whose masks are kept at once (recall's, search's, a type-filtered tool's).
_MASKS_KEPT = 8
# The graph is saved again after this share of the index has changed (at least
# _SAVE_AFTER_MIN changes), so that a start after a crash has no more to catch up with;
# a save writes the whole graph, so a smaller share costs more writing while it grows.
_SAVE_AFTER_SHARE = 0.1
_SAVE_AFTER_MIN = 10_000

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


class DimensionMismatch(VectorIndexError, ValueError):
    """A vector of another width than the index's (a ValueError too, as it always was)."""


@contextmanager
def _stored() -> Iterator[None]:
    """The index file's failures (locked, full, read-only, corrupt) as the port's error."""
    try:
        yield
    except sqlite3.Error as error:
        raise VectorIndexError(f"local vector index: {type(error).__name__}: {error}") from error


class _Column:
    """One metadata key over every position: a code per row into its distinct values.
    Code 0 is "absent", so a filter is one lookup per distinct value, then one gather."""

    def __init__(self, capacity: int) -> None:
        self.codes = np.zeros(capacity, dtype=np.int32)
        self.values: list[Any] = [None]
        # Typed, or True and 1 would share a code.
        self._code: dict[tuple[type, Any], int] = {}

    def code(self, value: Any) -> int:
        if value is None:
            return 0
        key = (type(value), value)
        code = self._code.get(key)
        if code is None:
            code = self._code[key] = len(self.values)
            self.values.append(value)
        return code

    def grow(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=np.int32)
        grown[: self.codes.size] = self.codes
        self.codes = grown

    def where(self, op: str, operand: Any, size: int) -> np.ndarray:
        table = np.fromiter((holds(op, operand, v) for v in self.values), dtype=bool, count=len(self.values))
        return table[self.codes[:size]]


class LocalVectorIndex:
    """``dimensions`` is what a new, empty index takes; a file that already holds
    vectors keeps its own until it is emptied (a reindex does that). ``ann_threshold``
    is the size past which the index searches approximately (VECTOR_ANN_THRESHOLD)."""

    def __init__(self, path: Path | str, dimensions: int, *, ann_threshold: int = DEFAULT_ANN_THRESHOLD) -> None:
        self._path = None if str(path) == ":memory:" else Path(path)
        self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        if self._path is not None:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'vectors'").fetchone():
            self._db.executescript(f"BEGIN; {_MIGRATE} COMMIT;")
        stored = self._db.execute("SELECT value FROM index_info WHERE key = 'dimensions'").fetchone()
        self.dimensions = int(stored[0]) if stored else dimensions
        # Names this file in the saved graph: a graph saved from a file since deleted
        # and made anew (whose keys start again at 1) is not taken for this one's.
        self._db.execute("INSERT OR IGNORE INTO index_info VALUES ('file', ?)", (secrets.token_hex(8),))
        self._file = str(self._db.execute("SELECT value FROM index_info WHERE key = 'file'").fetchone()[0])
        self.ann_threshold = ann_threshold
        # One BLAS thread: a matrix-vector product this size gains nothing from more, and
        # idle BLAS threads spinning between queries steal the cores the embedder's
        # OpenMP threads need (measured: query embedding 17 ms instead of 46 ms).
        threadpool_limits(limits=1, user_api="blas")
        self._reset()
        if not self._load_saved():
            self._load_rows(self._db.execute("SELECT key, id, vector, metadata FROM entries ORDER BY key"))
            if self._ann is not None:
                self._save()
        if not self._ids:
            self._set_dimensions(dimensions)

    def save(self) -> None:
        """Saves the graph if it changed since it was last saved (the server does this
        when it stops), so that the next start has nothing to catch up with."""
        if self._ann is not None and self._unsaved:
            try:
                self._save()
            except OSError as error:  # the catch-up on the next start covers it
                log.warning("could not save the vector graph: %s", error)

    def close(self) -> None:
        self.save()
        self._db.close()

    @property
    def approximate(self) -> bool:
        """Whether the HNSW graph is in use (the index grew past ``ann_threshold``)."""
        return self._ann is not None

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        if records and not self._ids:
            self._set_dimensions(len(records[0].values))
        latest: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
        for record in records:
            vector = np.asarray(record.values, dtype=np.float32)
            if vector.shape != (self.dimensions,):
                raise DimensionMismatch(f"vector {record.id} has {vector.size} dimensions, index has {self.dimensions}")
            latest[record.id] = (vector, dict(record.metadata))
        keys: list[int] = []
        with _stored(), self._transaction():
            for id_, (vector, metadata) in latest.items():
                row = self._db.execute(
                    "INSERT OR REPLACE INTO entries (id, vector, metadata) VALUES (?, ?, ?) RETURNING key",
                    (id_, vector.tobytes(), json.dumps(metadata)),
                ).fetchone()
                keys.append(int(row[0]))
        replaced = [self._keys[self._position[i]] for i in latest if i in self._position]
        if self._ann is not None and replaced:
            self._ann.remove(np.asarray(replaced, dtype=np.uint64))
        for key, (id_, (vector, metadata)) in zip(keys, latest.items(), strict=True):
            self._put(key, id_, vector, metadata)
        if self._ann is not None and keys:
            # A write or two on one thread, beside the embedder's; an import's batch on all.
            threads = 0 if len(keys) >= 256 else 1
            self._ann.add(np.asarray(keys, dtype=np.uint64), np.stack([v for v, _ in latest.values()]), threads=threads)
        self._changed(len(keys))

    async def query(
        self, vector: Sequence[float], *, top_k: int, filter: Mapping[str, VectorFilterValue] | None = None
    ) -> list[VectorMatch]:
        """At most ``VECTOR_QUERY_MAX_TOP_K`` matches, best first, as Vectorize answers."""
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self.dimensions,):
            raise DimensionMismatch(f"query has {query.size} dimensions, index has {self.dimensions}")
        top_k = min(top_k, VECTOR_QUERY_MAX_TOP_K)
        size = len(self._ids)
        if not size or top_k <= 0:
            return []
        mask, allowed = self._mask(filter or {})
        if allowed == 0:
            return []
        if self._ann is None or allowed <= self.ann_threshold:
            positions, scores = self._exact(query, mask, allowed, top_k)
        else:
            positions, scores = self._approximate(query, mask, allowed, top_k)
        return [
            VectorMatch(id=self._ids[p], score=float(s), metadata=self._metadata(p))
            for p, s in zip(positions.tolist(), scores.tolist(), strict=True)
        ]

    async def get(self, ids: Sequence[str]) -> list[VectorRecord]:
        """The values as stored: from the file once the matrix is float16."""
        found = [self._position[i] for i in ids if i in self._position]
        if not found:
            return []
        if self._ann is None:
            vectors = list(self._vectors(np.asarray(found)))
        else:
            keys = self._keys[found].tolist()
            blobs: dict[int, bytes] = {}
            with _stored():
                for start in range(0, len(keys), 500):
                    chunk = keys[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    sql = f"SELECT key, vector FROM entries WHERE key IN ({marks})"
                    blobs.update(self._db.execute(sql, chunk).fetchall())
            vectors = [np.frombuffer(blobs[k], dtype=np.float32) for k in keys]
        return [
            VectorRecord(self._ids[p], vector.tolist(), self._metadata(p))
            for p, vector in zip(found, vectors, strict=True)
        ]

    async def delete(self, ids: Sequence[str]) -> None:
        present = list(dict.fromkeys(i for i in ids if i in self._position))
        if not present:
            return
        with _stored(), self._transaction():
            self._db.executemany("DELETE FROM entries WHERE id = ?", [(i,) for i in present])
        self._forget([self._position[i] for i in present])
        self._changed(len(present))

    async def count(self) -> int:
        return len(self._ids)

    # -- search -------------------------------------------------------------

    def _exact(self, query: np.ndarray, mask: np.ndarray, allowed: int, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        positions = np.flatnonzero(mask)
        if self._ann is None and allowed > len(self._ids) // 2:
            scores = (self._matrix @ query)[positions]
        else:
            scores = self._vectors(positions) @ query
        return self._best(positions, scores, top_k)

    @staticmethod
    def _best(positions: np.ndarray, scores: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        best = np.argpartition(-scores, top_k - 1)[:top_k] if scores.size > top_k else np.arange(scores.size)
        best = best[np.argsort(-scores[best], kind="stable")]
        return positions[best], scores[best]

    def _approximate(
        self, query: np.ndarray, mask: np.ndarray, allowed: int, top_k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Over-fetch by the filter's selectivity; when the filter passes fewer than
        ``top_k`` of the neighbours found, ask for four times as many, and past a quarter
        of the index an exact search is cheaper than the graph."""
        assert self._ann is not None
        size = len(self._ids)
        wanted = math.ceil(top_k * _CANDIDATES_PER_MATCH * size / allowed * 1.2)
        while wanted * 4 < size:
            self._ann.expansion_search = max(_EXPANSION_SEARCH, wanted)
            found = self._ann.search(query, wanted, threads=1)
            positions = self._key_position[found.keys[: len(found)].astype(np.int64)]
            positions = positions[mask[positions]]
            if positions.size >= top_k * _CANDIDATES_PER_MATCH or len(found) < wanted:
                return self._best(positions, self._vectors(positions) @ query, top_k)
            wanted *= 4
        return self._exact(query, mask, allowed, top_k)

    def _mask(self, filter: Mapping[str, VectorFilterValue]) -> tuple[np.ndarray, int]:
        """Vectorize's metadata filter over the whole index at once, and how many rows
        pass it. Kept until the next write: recall asks with the same filter turn after
        turn, and a mask over a million rows takes milliseconds to make."""
        name = json.dumps(filter, sort_keys=True, default=repr)
        known = self._masks.get(name)
        if known is not None:
            return known
        size = len(self._ids)
        mask = np.ones(size, dtype=bool)
        for key, condition in parse(filter).items():
            column = self._column(key)
            for op, operand in condition.items():
                mask &= column.where(op, operand, size)
        if len(self._masks) >= _MASKS_KEPT:
            self._masks.clear()
        known = self._masks[name] = (mask, int(np.count_nonzero(mask)))
        return known

    # -- storage ------------------------------------------------------------

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

    def _reset(self) -> None:
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._keys = np.zeros(0, dtype=np.int64)
        # Position of each stored key (-1: gone); the graph answers with keys.
        self._key_position = np.zeros(0, dtype=np.int64)
        self._columns: dict[str, _Column] = {}
        # Filter → (mask, rows passing it), until the next change (see _mask).
        self._masks: dict[str, tuple[np.ndarray, int]] = {}
        self._storage = np.zeros((0, self.dimensions), dtype=np.float32)
        self._ann: Any = None
        self._unsaved = 0
        self._ann_missing = False

    def _set_dimensions(self, dimensions: int) -> None:
        """Only while empty: an emptied index takes the new embedder's width."""
        self.dimensions = dimensions
        self._reset()
        self._remove_saved()
        with _stored():
            self._db.execute("INSERT OR REPLACE INTO index_info VALUES ('dimensions', ?)", (str(dimensions),))

    def _column(self, key: str) -> _Column:
        column = self._columns.get(key)
        if column is None:
            column = self._columns[key] = _Column(self._keys.size)
        return column

    def _metadata(self, position: int) -> dict[str, Any]:
        found = {}
        for key, column in self._columns.items():
            code = column.codes[position]
            if code:
                found[key] = column.values[code]
        return found

    def _vectors(self, positions: np.ndarray) -> np.ndarray:
        return self._storage[positions].astype(np.float32, copy=False)

    @property
    def _matrix(self) -> np.ndarray:
        return self._storage[: len(self._ids)]

    def _capacity(self, needed: int) -> None:
        """Grow by doubling so that appends stay amortised O(dimensions)."""
        if needed <= self._keys.size:
            return
        capacity = max(64, needed, self._keys.size * 2)
        keys = np.zeros(capacity, dtype=np.int64)
        keys[: self._keys.size] = self._keys
        self._keys = keys
        grown = np.zeros((capacity, self.dimensions), dtype=self._storage.dtype)
        grown[: len(self._ids)] = self._matrix
        self._storage = grown
        for column in self._columns.values():
            column.grow(capacity)

    def _index_key(self, key: int, position: int) -> None:
        if key >= self._key_position.size:
            grown = np.full(max(64, key + 1, self._key_position.size * 2), -1, dtype=np.int64)
            grown[: self._key_position.size] = self._key_position
            self._key_position = grown
        self._key_position[key] = position

    def _put(self, key: int, id_: str, vector: np.ndarray, metadata: Mapping[str, Any]) -> None:
        """One row in memory (the graph is the caller's: it adds in batches)."""
        self._masks.clear()
        position = self._position.get(id_)
        if position is None:
            position = len(self._ids)
            self._capacity(position + 1)
            self._position[id_] = position
            self._ids.append(id_)
        else:
            self._key_position[self._keys[position]] = -1
        self._keys[position] = key
        self._index_key(key, position)
        self._storage[position] = vector
        for name in metadata.keys() - self._columns.keys():
            self._column(name)
        for name, column in self._columns.items():
            column.codes[position] = column.code(metadata.get(name))

    def _forget(self, positions: list[int]) -> None:
        """Removes rows from memory and the graph, each hole filled by the last row so
        that removal stays O(dimensions)."""
        self._masks.clear()
        keys = self._keys[positions].copy()
        if self._ann is not None:
            self._ann.remove(keys.astype(np.uint64))
        for key in keys.tolist():
            position = int(self._key_position[key])
            self._key_position[key] = -1
            id_ = self._ids[position]
            del self._position[id_]
            last = len(self._ids) - 1
            if position != last:
                moved = self._ids[last]
                self._ids[position] = moved
                self._position[moved] = position
                self._keys[position] = self._keys[last]
                self._key_position[self._keys[position]] = position
                self._storage[position] = self._storage[last]
                for column in self._columns.values():
                    column.codes[position] = column.codes[last]
            self._ids.pop()

    def _load_rows(self, rows: Iterator[tuple[int, str, bytes, str]]) -> None:
        """Rows from the file into memory, and into the graph when it is in use or the
        rows make the index outgrow ``ann_threshold``."""
        batch: list[tuple[int, str, bytes, str]] = []
        for row in rows:
            batch.append(row)
            if len(batch) == 10_000:
                self._load_batch(batch)
                batch = []
        if batch:
            self._load_batch(batch)

    def _load_batch(self, rows: list[tuple[int, str, bytes, str]]) -> None:
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dimensions)
        for (key, id_, _, metadata), vector in zip(rows, vectors, strict=True):
            self._put(key, id_, vector, json.loads(metadata))
        if self._ann is not None:
            self._ann.add(np.asarray([r[0] for r in rows], dtype=np.uint64), vectors, threads=0)
        else:
            self._grow_graph_if_needed()

    def _changed(self, rows: int) -> None:
        self._grow_graph_if_needed()
        if self._ann is not None:
            self._unsaved += rows
            if self._unsaved >= max(_SAVE_AFTER_MIN, _SAVE_AFTER_SHARE * len(self._ids)):
                self.save()

    def _grow_graph_if_needed(self) -> None:
        """Builds the graph once the index outgrows the threshold; the matrix then turns
        float16 (scores and ``get`` to about 1e-3)."""
        if self._ann is not None or self._ann_missing or len(self._ids) <= self.ann_threshold:
            return
        try:
            from usearch.index import Index
        except ImportError:
            log.warning("usearch is not installed: %d vectors are searched exactly", len(self._ids))
            self._ann_missing = True
            return
        log.info("building the vector graph over %d vectors", len(self._ids))
        ann = Index(
            ndim=self.dimensions,
            metric="ip",
            dtype=_GRAPH_DTYPE,
            connectivity=_CONNECTIVITY,
            expansion_add=_EXPANSION_ADD,
            expansion_search=_EXPANSION_SEARCH,
        )
        ann.add(self._keys[: len(self._ids)].astype(np.uint64), self._matrix, threads=0)
        self._ann = ann
        self._storage = self._storage.astype(np.float16)
        self._unsaved = len(self._ids)

    # -- the saved graph ----------------------------------------------------

    def _saved_paths(self) -> tuple[str, Path] | None:
        """The graph files' prefix (a token follows it) and the ``.npz`` that names the
        current graph file."""
        if self._path is None:
            return None
        return self._path.name + ".hnsw-", self._path.with_name(self._path.name + ".hnsw.npz")

    def _save(self) -> None:
        """The graph, then ids, keys, metadata and vectors; each written aside and the
        ``.npz`` renamed last, naming its graph file, so a crash leaves the old pair whole."""
        paths = self._saved_paths()
        if paths is None or self._ann is None or self._path is None:
            return
        prefix, sidecar = paths
        graph = self._path.with_name(prefix + secrets.token_hex(4))
        self._ann.save(str(graph))
        size = len(self._ids)
        arrays: dict[str, Any] = {
            "graph": np.array(graph.name),
            "source": np.array(self._file),
            "ids": np.array(self._ids, dtype=str),
            "keys": self._keys[:size],
            "vectors": self._matrix,
            "columns": np.array(json.dumps({name: column.values[1:] for name, column in self._columns.items()})),
        }
        for number, column in enumerate(self._columns.values()):
            arrays[f"codes_{number}"] = column.codes[:size]
        temporary = sidecar.with_name(sidecar.name + ".tmp.npz")
        np.savez(temporary, **arrays)
        os.replace(temporary, sidecar)
        for old in self._path.parent.glob(prefix + "*"):
            if old != graph:
                old.unlink(missing_ok=True)
        self._unsaved = 0

    def _remove_saved(self) -> None:
        paths = self._saved_paths()
        if paths is not None and self._path is not None:
            for old in [*self._path.parent.glob(paths[0] + "*"), paths[1]]:
                old.unlink(missing_ok=True)

    def _load_saved(self) -> bool:
        """The saved graph and matrix, brought up to date with the file; False when there
        are none or they cannot be used (then the rows are loaded, the graph built again)."""
        paths = self._saved_paths()
        if paths is None or self._path is None or not paths[1].exists():
            return False
        try:
            from usearch.index import Index

            with np.load(paths[1], allow_pickle=False) as saved:
                graph = self._path.with_name(str(saved["graph"]))
                if str(saved["source"]) != self._file:
                    raise ValueError("saved from another vectors file")
                ids = saved["ids"].tolist()
                keys = saved["keys"].astype(np.int64)
                vectors = saved["vectors"]
                columns = json.loads(str(saved["columns"]))
                codes = [saved[f"codes_{number}"] for number in range(len(columns))]
            ann = Index.restore(str(graph))
        except (OSError, ValueError, KeyError, ImportError, RuntimeError) as error:
            log.warning("rebuilding the vector graph: the saved one cannot be used (%s)", error)
            return False
        if ann is None or len(ann) != len(ids) or ann.ndim != self.dimensions or vectors.shape[1:] != (ann.ndim,):
            log.warning("rebuilding the vector graph: the saved one does not match its ids")
            return False
        self._ann = ann
        self._ids = ids
        self._position = {id_: p for p, id_ in enumerate(ids)}
        self._keys = keys
        self._storage = vectors.astype(np.float16, copy=False)
        if keys.size:
            self._key_position = np.full(int(keys.max()) + 1, -1, dtype=np.int64)
            self._key_position[keys] = np.arange(keys.size)
        for (name, values), column_codes in zip(columns.items(), codes, strict=True):
            column = self._columns[name] = _Column(keys.size)
            for value in values:
                column.code(value)
            column.codes[:] = column_codes
        stored = np.fromiter((k for (k,) in self._db.execute("SELECT key FROM entries")), dtype=np.int64)
        gone = np.setdiff1d(keys, stored, assume_unique=True)
        if gone.size:
            self._forget(self._key_position[gone].tolist())
        newest = int(keys.max()) if keys.size else 0
        self._load_rows(self._db.execute("SELECT key, id, vector, metadata FROM entries WHERE key > ?", (newest,)))
        self._unsaved = int(gone.size) + int(np.count_nonzero(stored > newest))
        return True
