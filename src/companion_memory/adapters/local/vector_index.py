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

The graph and the matrix are saved beside the file (``vector_graph.py``) so that a start
loads them instead of building the graph again; rows changed since the save are applied
on load. Every stored row has a key that only grows (AUTOINCREMENT), which is what makes
that catch-up a comparison of two key lists.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from ...ports import VECTOR_QUERY_MAX_TOP_K, VectorFilterValue, VectorIndexError, VectorMatch, VectorRecord
from ...vector_filter import parse
from .vector_columns import FilterMask, MetadataColumn, grown
from .vector_file import Row, VectorFile
from .vector_graph import EXPANSION_SEARCH, GraphFiles, SavedGraph, add_to_graph, new_graph

log = logging.getLogger("companion_memory.vector_index")

# Below this many vectors an exact search is at the embedding's floor (measured: 20k
# float32 rows of 384 dims take about 2 ms), so the graph is not worth its build.
DEFAULT_ANN_THRESHOLD = 20_000
# Candidates taken from the graph per match wanted, before they are scored again.
_CANDIDATES_PER_MATCH = 2
# Filters whose masks are kept at once (recall's, search's, a type-filtered tool's).
_MASKS_KEPT = 8
# The graph is saved again after this share of the index has changed (at least
# _SAVE_AFTER_MIN changes), so that a start after a crash has no more to catch up with;
# a save writes the whole graph, so a smaller share costs more writing while it grows.
_SAVE_AFTER_SHARE = 0.1
_SAVE_AFTER_MIN = 10_000


class DimensionMismatch(VectorIndexError, ValueError):
    """A vector of another width than the index's (a ValueError too, as it always was)."""


class LocalVectorIndex:
    """``dimensions`` is what a new, empty index takes; a file that already holds
    vectors keeps its own until it is emptied (a reindex does that). ``ann_threshold``
    is the size past which the index searches approximately (VECTOR_ANN_THRESHOLD)."""

    def __init__(self, path: Path | str, dimensions: int, *, ann_threshold: int = DEFAULT_ANN_THRESHOLD) -> None:
        self._file = VectorFile(str(path))
        self.dimensions = self._file.dimensions or dimensions
        self._graph_files = None if str(path) == ":memory:" else GraphFiles(Path(path), self._file.name)
        self.ann_threshold = ann_threshold
        # One BLAS thread: a matrix-vector product this size gains nothing from more, and
        # idle BLAS threads spinning between queries steal the cores the embedder's
        # OpenMP threads need (measured: query embedding 17 ms instead of 46 ms).
        threadpool_limits(limits=1, user_api="blas")
        self._reset()
        if not self._load_saved():
            self._load_rows(self._file.rows())
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
        self._file.close()

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
        keys = self._file.write(latest)
        replaced = [self._keys[self._position[i]] for i in latest if i in self._position]
        if self._ann is not None and replaced:
            self._ann.remove(np.asarray(replaced, dtype=np.uint64))
        for key, (id_, (vector, metadata)) in zip(keys, latest.items(), strict=True):
            self._put(key, id_, vector, metadata)
        if self._ann is not None and keys:
            add_to_graph(self._ann, np.asarray(keys, dtype=np.uint64), np.stack([v for v, _ in latest.values()]))
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
            vectors = self._file.vectors(self._keys[found].tolist())
        return [
            VectorRecord(self._ids[p], vector.tolist(), self._metadata(p))
            for p, vector in zip(found, vectors, strict=True)
        ]

    async def delete(self, ids: Sequence[str]) -> None:
        present = list(dict.fromkeys(i for i in ids if i in self._position))
        if not present:
            return
        self._file.delete(present)
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
            self._ann.expansion_search = max(EXPANSION_SEARCH, wanted)
            found = self._ann.search(query, wanted, threads=1)
            positions = self._key_position[found.keys[: len(found)].astype(np.int64)]
            positions = positions[mask[positions]]
            if positions.size >= top_k * _CANDIDATES_PER_MATCH or len(found) < wanted:
                return self._best(positions, self._vectors(positions) @ query, top_k)
            wanted *= 4
        return self._exact(query, mask, allowed, top_k)

    def _mask(self, filter: Mapping[str, VectorFilterValue]) -> tuple[np.ndarray, int]:
        """Vectorize's metadata filter over the whole index at once, and how many rows
        pass it (the mask may run past the rows, never true there). Kept, and brought up
        to date row by row as rows are put: recall asks with the same filter turn after
        turn, and a mask over a million rows takes milliseconds to make."""
        name = json.dumps(filter, sort_keys=True, default=repr)
        known = self._masks.get(name)
        if known is None:
            if len(self._masks) >= _MASKS_KEPT:
                self._masks.clear()
            known = self._masks[name] = FilterMask(self._columns, parse(filter), len(self._ids), self._keys.size)
        return known.mask, known.count

    # -- storage ------------------------------------------------------------

    def _reset(self) -> None:
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._keys = np.zeros(0, dtype=np.int64)
        # Position of each stored key (-1: gone); the graph answers with keys.
        self._key_position = np.zeros(0, dtype=np.int64)
        self._columns: dict[str, MetadataColumn] = {}
        # Filter → its mask (see _mask), until a row is removed.
        self._masks: dict[str, FilterMask] = {}
        self._storage = np.zeros((0, self.dimensions), dtype=np.float32)
        self._ann: Any = None
        self._unsaved = 0
        self._ann_missing = False

    def _set_dimensions(self, dimensions: int) -> None:
        """Only while empty: an emptied index takes the new embedder's width."""
        self.dimensions = dimensions
        self._reset()
        self._remove_saved()
        self._file.set_dimensions(dimensions)

    def _column(self, key: str) -> MetadataColumn:
        column = self._columns.get(key)
        if column is None:
            column = self._columns[key] = MetadataColumn(self._keys.size)
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
        self._keys = grown(self._keys, capacity)
        storage = np.zeros((capacity, self.dimensions), dtype=self._storage.dtype)
        storage[: len(self._ids)] = self._matrix
        self._storage = storage
        for column in self._columns.values():
            column.grow(capacity)
        for mask in self._masks.values():
            mask.grow(capacity)

    def _index_key(self, key: int, position: int) -> None:
        if key >= self._key_position.size:
            grown = np.full(max(64, key + 1, self._key_position.size * 2), -1, dtype=np.int64)
            grown[: self._key_position.size] = self._key_position
            self._key_position = grown
        self._key_position[key] = position

    def _put(self, key: int, id_: str, vector: np.ndarray, metadata: Mapping[str, Any]) -> None:
        """One row in memory (the graph is the caller's: it adds in batches)."""
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
        for kept in self._masks.values():
            kept.put(position, metadata)

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

    def _load_rows(self, rows: Iterator[Row]) -> None:
        """Rows from the file into memory, and into the graph when it is in use or the
        rows make the index outgrow ``ann_threshold``."""
        batch: list[Row] = []
        for row in rows:
            batch.append(row)
            if len(batch) == 10_000:
                self._load_batch(batch)
                batch = []
        if batch:
            self._load_batch(batch)

    def _load_batch(self, rows: list[Row]) -> None:
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.dimensions)
        for (key, id_, _, metadata), vector in zip(rows, vectors, strict=True):
            self._put(key, id_, vector, json.loads(metadata))
        if self._ann is not None:
            add_to_graph(self._ann, np.asarray([r[0] for r in rows], dtype=np.uint64), vectors)
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
        ann = new_graph(self.dimensions)
        if ann is None:
            log.warning("usearch is not installed: %d vectors are searched exactly", len(self._ids))
            self._ann_missing = True
            return
        log.info("building the vector graph over %d vectors", len(self._ids))
        add_to_graph(ann, self._keys[: len(self._ids)], self._matrix)
        self._ann = ann
        self._storage = self._storage.astype(np.float16)
        self._unsaved = len(self._ids)

    # -- the saved graph ----------------------------------------------------

    def _save(self) -> None:
        if self._graph_files is None or self._ann is None:
            return
        size = len(self._ids)
        self._graph_files.save(SavedGraph(self._ann, self._ids, self._keys[:size], self._matrix, self._columns))
        self._unsaved = 0

    def _remove_saved(self) -> None:
        if self._graph_files is not None:
            self._graph_files.remove()

    def _load_saved(self) -> bool:
        """The saved graph and matrix, brought up to date with the file; False when there
        are none or they cannot be used (then the rows are loaded, the graph built again)."""
        saved = None if self._graph_files is None else self._graph_files.load(self.dimensions)
        if saved is None:
            return False
        keys = saved.keys
        self._ann = saved.ann
        self._ids = saved.ids
        self._position = {id_: p for p, id_ in enumerate(saved.ids)}
        self._keys = keys
        self._storage = saved.vectors
        self._columns = saved.columns
        if keys.size:
            self._key_position = np.full(int(keys.max()) + 1, -1, dtype=np.int64)
            self._key_position[keys] = np.arange(keys.size)
        stored = self._file.keys()
        gone = np.setdiff1d(keys, stored, assume_unique=True)
        if gone.size:
            self._forget(self._key_position[gone].tolist())
        newest = int(keys.max()) if keys.size else 0
        self._load_rows(self._file.rows(after=newest))
        self._unsaved = int(gone.size) + int(np.count_nonzero(stored > newest))
        return True
