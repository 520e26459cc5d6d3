"""The local vector index's HNSW graph (usearch): how it is built, and how it is saved
beside the index's file and loaded back, so that a start need not build it again.

The graph and the matrix are saved as ``vectors.sqlite3.hnsw-<token>`` and
``vectors.sqlite3.hnsw.npz`` (ids, keys, metadata and vectors, and the name of the graph
file); the ``.npz`` is renamed into place last, so a crash leaves the old pair whole.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .vector_columns import MetadataColumn

log = logging.getLogger("companion_memory.vector_index")

# HNSW parameters: usearch's defaults for connectivity, a wider search than its default
# (64) for recall at k=50 (recall's MEMORY_TOP_K). float16, not int8: usearch's int8
# (a plain ×127) found 0.86 of the exact top 10 of LoCoMo queries at 20k vectors, float16
# 0.99 (bench figures in issue 21's report).
_CONNECTIVITY = 16
_EXPANSION_ADD = 128
EXPANSION_SEARCH = 128
_GRAPH_DTYPE = "f16"


def _usearch_index() -> Any:
    """usearch's ``Index`` class; ImportError when usearch is not installed.

    onnxruntime (the bundled embedder's engine) is loaded first where it is installed:
    loaded after usearch 2.26, onnxruntime 1.32 crashes the process at its import
    (SIGSEGV in libstdc++'s codecvt, from its module's initialisation). The server
    builds its embedder before its index, but a process that opens a large index first
    (a test, a CLI command, a bench) would die."""
    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


def new_graph(dimensions: int) -> Any:
    """An empty graph, or None when usearch is not installed."""
    try:
        index = _usearch_index()
    except ImportError:
        return None
    return index(
        ndim=dimensions,
        metric="ip",
        dtype=_GRAPH_DTYPE,
        connectivity=_CONNECTIVITY,
        expansion_add=_EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def add_to_graph(ann: Any, keys: np.ndarray, vectors: np.ndarray) -> None:
    """On one thread: usearch's threads insert a batch in whatever order they are
    scheduled, so the same rows made a different graph each time (the share of the exact
    top 10 found moved between 0.967 and 0.98 from one build to the next), and a search
    answered differently after a rebuild. One thread builds the same graph from the same
    rows, and on 2 cores was no slower (5k vectors of 384 dimensions: about 1.1 s either
    way; more cores would be faster at an import's batch or a first build, not at a write)."""
    ann.add(keys.astype(np.uint64, copy=False), vectors, threads=1)


@dataclass
class SavedGraph:
    """A graph and the rows it was saved with, as the index holds them in memory."""

    ann: Any
    ids: list[str]
    keys: np.ndarray
    vectors: np.ndarray
    columns: dict[str, MetadataColumn]


class GraphFiles:
    """The saved graph of the index file ``path``; ``source`` names that file, so a graph
    saved from a file since deleted and made anew (whose keys start again at 1) is not
    taken for this one's."""

    def __init__(self, path: Path, source: str) -> None:
        self._path = path
        self._source = source
        self._prefix = path.name + ".hnsw-"
        self._sidecar = path.with_name(path.name + ".hnsw.npz")

    def save(self, saved: SavedGraph) -> None:
        """The graph, then ids, keys, metadata and vectors; each written aside and the
        ``.npz`` renamed last, naming its graph file."""
        graph = self._path.with_name(self._prefix + secrets.token_hex(4))
        saved.ann.save(str(graph))
        arrays: dict[str, Any] = {
            "graph": np.array(graph.name),
            "source": np.array(self._source),
            "ids": np.array(saved.ids, dtype=str),
            "keys": saved.keys,
            "vectors": saved.vectors,
            "columns": np.array(json.dumps({name: column.values[1:] for name, column in saved.columns.items()})),
        }
        for number, column in enumerate(saved.columns.values()):
            arrays[f"codes_{number}"] = column.codes[: len(saved.ids)]
        temporary = self._sidecar.with_name(self._sidecar.name + ".tmp.npz")
        np.savez(temporary, **arrays)
        os.replace(temporary, self._sidecar)
        for old in self._path.parent.glob(self._prefix + "*"):
            if old != graph:
                old.unlink(missing_ok=True)

    def remove(self) -> None:
        for old in [*self._path.parent.glob(self._prefix + "*"), self._sidecar]:
            old.unlink(missing_ok=True)

    def load(self, dimensions: int) -> SavedGraph | None:
        """The saved graph and its rows; None when there is none or it cannot be used."""
        if not self._sidecar.exists():
            return None
        try:
            index = _usearch_index()
            with np.load(self._sidecar, allow_pickle=False) as saved:
                graph = self._path.with_name(str(saved["graph"]))
                if str(saved["source"]) != self._source:
                    raise ValueError("saved from another vectors file")
                ids = saved["ids"].tolist()
                keys = saved["keys"].astype(np.int64)
                vectors = saved["vectors"]
                values = json.loads(str(saved["columns"]))
                codes = [saved[f"codes_{number}"] for number in range(len(values))]
            ann = index.restore(str(graph))
        except (OSError, ValueError, KeyError, ImportError, RuntimeError) as error:
            log.warning("rebuilding the vector graph: the saved one cannot be used (%s)", error)
            return None
        if ann is None or len(ann) != len(ids) or ann.ndim != dimensions or vectors.shape[1:] != (ann.ndim,):
            log.warning("rebuilding the vector graph: the saved one does not match its ids")
            return None
        columns = {}
        for (name, known), column_codes in zip(values.items(), codes, strict=True):
            column = columns[name] = MetadataColumn(keys.size)
            for value in known:
                column.code(value)
            column.codes[:] = column_codes
        return SavedGraph(ann, ids, keys, vectors.astype(np.float16, copy=False), columns)
