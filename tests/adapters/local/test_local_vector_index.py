"""The local vector index: its metadata filter stays right as vectors are added, changed
and removed; past its threshold the HNSW graph finds what an exact search finds, with
selective filters too; the graph is saved and a start catches up with the file; and it
answers as Vectorize does (filter semantics, topK cap)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest

from companion_memory.adapters.cloudflare.vectorize import VectorizeIndex
from companion_memory.adapters.local.vector_index import LocalVectorIndex
from companion_memory.ports import VectorRecord
from tests.fakes.d1 import FakeJsException
from tests.fakes.vectorize import FakeVectorize


async def test_the_filter_follows_every_change() -> None:
    index = LocalVectorIndex(":memory:", 2)

    async def active() -> set[str]:
        return {m.id for m in await index.query([1.0, 0.0], top_k=500, filter={"status": "active"})}

    def record(id_: str, status: str) -> VectorRecord:
        return VectorRecord(id_, [1.0, 0.0], {"namespace": "default", "status": status})

    await index.upsert([record("a", "active"), record("b", "archived")])
    assert await active() == {"a"}  # the column is built here, then kept in step
    # Past the first allocation (64 rows): the columns grow with the storage.
    await index.upsert([record(f"n{i}", "active" if i % 2 else "archived") for i in range(100)])
    expected = {"a"} | {f"n{i}" for i in range(100) if i % 2}
    assert await active() == expected
    await index.upsert([record("a", "archived"), record("b", "active")])
    expected = (expected - {"a"}) | {"b"}
    assert await active() == expected  # a row put again moves in or out of the kept mask
    await index.delete(["n1", "n0"])  # a hole filled by the last row
    assert await active() == expected - {"n1"}
    await index.upsert([record("n1", "archived"), record("n0", "active")])
    assert await active() == expected - {"n1"} | {"n0"}


# -- past the threshold: the HNSW graph -----------------------------------------------


def test_a_process_that_opens_a_graph_first_can_still_load_the_embedder(tmp_path: Path) -> None:
    # onnxruntime loaded after usearch used to kill the process at its import (SIGSEGV).
    program = (
        "import asyncio\n"
        "from companion_memory.adapters.local.vector_index import LocalVectorIndex\n"
        "from companion_memory.ports import VectorRecord\n"
        f"index = LocalVectorIndex({str(tmp_path / 'v.sqlite3')!r}, 2, ann_threshold=1)\n"
        "asyncio.run(index.upsert([VectorRecord(f'm{i}', [1.0, float(i)], {}) for i in range(3)]))\n"
        "assert index.approximate\n"
        "import onnxruntime\n"
        "print(onnxruntime.get_device())\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "CPU"


DIMS = 32


def clustered(count: int, seed: int = 3) -> np.ndarray:
    """Unit vectors around a few dozen centres, as embeddings of related texts are."""
    generator = np.random.default_rng(seed)
    centres = generator.standard_normal((40, DIMS))
    vectors = centres[generator.integers(0, 40, count)] + 0.4 * generator.standard_normal((count, DIMS))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def metadata(i: int) -> dict[str, str | bool]:
    # "small" holds 1 in 100 rows (searched exactly), "mid" 1 in 8 (through the graph,
    # over-fetched), "default" the rest; "rare" is 1 in 50 rows' type.
    namespace = "small" if i % 100 == 0 else "mid" if i % 8 == 1 else "default"
    return {"namespace": namespace, "status": "active", "type": "rare" if i % 50 == 7 else "fact", "pinned": i % 2 == 0}


FILTERS: list[dict] = [
    {},
    {"namespace": "default", "status": "active"},
    {"namespace": "mid"},
    {"namespace": "small"},
    {"namespace": {"$in": ["small", "mid"]}, "type": {"$nin": ["rare"]}},
    {"type": "rare"},
    {"pinned": True, "namespace": {"$ne": "default"}},
]


async def filled(index: LocalVectorIndex, vectors: np.ndarray) -> LocalVectorIndex:
    for start in range(0, len(vectors), 500):
        await index.upsert(
            [
                VectorRecord(f"v{i}", vectors[i].tolist(), metadata(i))
                for i in range(start, min(len(vectors), start + 500))
            ]
        )
    return index


async def recall_against_exact(approximate: LocalVectorIndex, exact: LocalVectorIndex, queries: np.ndarray) -> dict:
    """Per filter: the mean share of the exact top 10 that the graph finds, and whether
    every answer passes the filter and is full (10, or all that pass)."""
    found = {}
    for number, where in enumerate(FILTERS):
        shares = []
        for query in queries:
            truth = await exact.query(query.tolist(), top_k=10, filter=where)
            got = await approximate.query(query.tolist(), top_k=10, filter=where)
            assert len(got) == len(truth)
            assert all(exact_match(m.metadata, where) for m in got)
            shares.append(len({m.id for m in truth} & {m.id for m in got}) / len(truth))
        found[number] = sum(shares) / len(shares)
    return found


def exact_match(meta: Mapping[str, object], where: Mapping[str, object]) -> bool:
    """FILTERS' operators, over one row's metadata (every row here has every key)."""
    for key, condition in where.items():
        value = meta[key]
        for op, operand in condition.items() if isinstance(condition, Mapping) else [("$eq", condition)]:
            if op in ("$eq", "$ne"):
                passes = (value == operand) == (op == "$eq")
            else:
                passes = (value in operand) == (op == "$in")  # type: ignore[operator]
            if not passes:
                return False
    return True


async def test_the_graph_finds_what_an_exact_search_finds_whatever_the_filter(tmp_path: Path) -> None:
    vectors = clustered(6000)
    queries = clustered(30, seed=11)
    exact = await filled(LocalVectorIndex(":memory:", DIMS, ann_threshold=100_000), vectors)
    approximate = await filled(LocalVectorIndex(tmp_path / "v.sqlite3", DIMS, ann_threshold=200), vectors)
    assert approximate.approximate and not exact.approximate
    found = await recall_against_exact(approximate, exact, queries)
    # Selective filters (1 %, 2 %, 12 %) do at least as well as none.
    assert min(found.values()) >= 0.97, found
    # Scores are the exact cosine, to float16's precision.
    query = queries[0].tolist()
    got = await approximate.query(query, top_k=5)
    truth = {m.id: m.score for m in await exact.query(query, top_k=50)}
    assert all(abs(m.score - truth[m.id]) < 2e-3 for m in got)


async def test_a_start_loads_the_saved_graph_and_catches_up_with_the_file(tmp_path: Path) -> None:
    vectors = clustered(3000)
    path = tmp_path / "vectors.sqlite3"
    index = await filled(LocalVectorIndex(path, DIMS, ann_threshold=200), vectors)
    index.close()
    graphs = sorted(p.name for p in tmp_path.glob("vectors.sqlite3.hnsw-*"))
    assert len(graphs) == 1

    # Written after the save, and the process stops without closing (a crash).
    index = LocalVectorIndex(path, DIMS, ann_threshold=200)
    assert index.approximate and await index.count() == 3000
    await index.delete(["v0", "v1"])
    await index.upsert([VectorRecord("v2", vectors[2].tolist(), {"namespace": "moved", "status": "active"})])
    await index.upsert([VectorRecord("new", (-vectors[5]).tolist(), {"namespace": "default", "status": "active"})])
    assert sorted(p.name for p in tmp_path.glob("vectors.sqlite3.hnsw-*")) == graphs  # not saved again yet

    reopened = LocalVectorIndex(path, DIMS, ann_threshold=200)
    assert reopened.approximate and await reopened.count() == 2999
    assert sorted(p.name for p in tmp_path.glob("vectors.sqlite3.hnsw-*")) == graphs  # loaded, not rebuilt
    assert [r.id for r in await reopened.get(["v0", "v1", "v2", "new"])] == ["v2", "new"]
    assert [m.id for m in await reopened.query(vectors[2].tolist(), top_k=3, filter={"namespace": "moved"})] == ["v2"]
    assert (await reopened.query((-vectors[5]).tolist(), top_k=1))[0].id == "new"
    assert "v0" not in {m.id for m in await reopened.query(vectors[0].tolist(), top_k=10)}
    reopened.close()


async def test_a_damaged_saved_graph_is_built_again_from_the_file(tmp_path: Path) -> None:
    vectors = clustered(1000)
    path = tmp_path / "vectors.sqlite3"
    (await filled(LocalVectorIndex(path, DIMS, ann_threshold=200), vectors)).close()
    for graph in tmp_path.glob("vectors.sqlite3.hnsw-*"):
        graph.write_bytes(b"not a graph")
    index = LocalVectorIndex(path, DIMS, ann_threshold=200)
    assert index.approximate and await index.count() == 1000
    assert (await index.query(vectors[7].tolist(), top_k=1))[0].id == "v7"


async def test_an_emptied_index_drops_its_graph_and_takes_a_new_width(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    index = await filled(LocalVectorIndex(path, DIMS, ann_threshold=200), clustered(500))
    index.close()
    index = LocalVectorIndex(path, DIMS, ann_threshold=200)
    await index.delete([f"v{i}" for i in range(500)])  # a reindex empties the index first
    await index.upsert([VectorRecord("x", [1.0, 0.0, 0.0])])
    assert not index.approximate and index.dimensions == 3
    assert not list(tmp_path.glob("vectors.sqlite3.hnsw*"))
    assert [m.id for m in await index.query([1.0, 0.0, 0.0], top_k=5)] == ["x"]


async def test_a_file_from_before_keys_keeps_its_vectors(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE vectors (id TEXT PRIMARY KEY, vector BLOB NOT NULL, metadata TEXT NOT NULL);"
        "CREATE TABLE index_info (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO index_info VALUES ('dimensions', '2');"
    )
    old.execute(
        "INSERT INTO vectors VALUES ('a', ?, ?)", (np.array([0.0, 1.0], np.float32).tobytes(), '{"status": "x"}')
    )
    old.commit()
    old.close()
    index = LocalVectorIndex(path, 5)
    assert index.dimensions == 2
    assert [(m.id, dict(m.metadata)) for m in await index.query([0.0, 1.0], top_k=1)] == [("a", {"status": "x"})]


# -- Vectorize parity -------------------------------------------------------------------

PARITY_FILTERS: list[dict] = [
    {"pinned": True},
    {"pinned": 1},  # JSON: true is not 1
    {"importance": {"$gte": 0.5}},
    {"importance": {"$lt": 1}, "namespace": {"$ne": "b"}},
    {"namespace": {"$gt": "a"}},
    {"kind": {"$nin": ["memory"]}},  # rows without the key pass $nin
    {"kind": {"$ne": "memory"}},
    {"kind": "memory"},
    {"namespace": {"$in": ["a", "c"]}, "importance": {"$lte": 0.5}},
]


@pytest.mark.parametrize("ann_threshold", [100_000, 0])
async def test_the_local_index_answers_as_vectorize_does(ann_threshold: int) -> None:
    fake = FakeVectorize(4, metadata_indexes=None, result_style="python")
    remote = VectorizeIndex(fake, dimensions=4)
    local = LocalVectorIndex(":memory:", 4, ann_threshold=ann_threshold)
    generator = np.random.default_rng(5)
    records = []
    for i in range(150):
        meta: dict[str, str | int | float | bool] = {
            "namespace": "abc"[i % 3],
            "pinned": i % 4 == 0,
            "importance": round(float(generator.random()), 2),
        }
        if i % 5:
            meta["kind"] = "memory"
        # Unit vectors, as embedders make: Vectorize's cosine is then the local dot product.
        vector = generator.standard_normal(4)
        records.append(VectorRecord(f"r{i}", (vector / np.linalg.norm(vector)).tolist(), meta))
    await remote.upsert(records)
    await local.upsert(records)
    query = generator.standard_normal(4).tolist()
    for where in PARITY_FILTERS:
        expected = [m.id for m in await remote.query(query, top_k=20, filter=where)]
        assert [m.id for m in await local.query(query, top_k=20, filter=where)] == expected, where
    # topK is capped as Vectorize caps it.
    assert len(await local.query(query, top_k=150)) == len(await remote.query(query, top_k=150)) == 100


async def test_a_saved_graph_is_only_used_with_the_file_it_was_saved_from(tmp_path: Path) -> None:
    vectors = clustered(600)
    (await filled(LocalVectorIndex(tmp_path / "vectors.sqlite3", DIMS, ann_threshold=200), vectors)).close()
    other = LocalVectorIndex(tmp_path / "other.sqlite3", DIMS, ann_threshold=200)
    await other.upsert([VectorRecord(f"o{i}", (-vectors[i]).tolist(), {"n": i}) for i in range(600)])
    other._file.close()
    # Another file of the same size and keys put in its place (a copy from elsewhere).
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"vectors.sqlite3{suffix}").unlink(missing_ok=True)
        if (tmp_path / f"other.sqlite3{suffix}").exists():
            (tmp_path / f"other.sqlite3{suffix}").rename(tmp_path / f"vectors.sqlite3{suffix}")
    index = LocalVectorIndex(tmp_path / "vectors.sqlite3", DIMS, ann_threshold=200)
    assert [m.id for m in await index.query((-vectors[3]).tolist(), top_k=1)] == ["o3"]


REFUSED_FILTERS: list[dict] = [
    {"type": {"$regex": "f.*"}},
    {"$and": [{"type": "fact"}]},
    {"type": {"$in": "fact"}},  # a list, not a string
    {"type": {}},
    {"namespace": {"$in": [f"namespace-{i}" for i in range(200)]}},  # over 2048 bytes of JSON
]


@pytest.mark.parametrize("where", REFUSED_FILTERS)
async def test_the_local_index_refuses_the_filters_vectorize_refuses(where: dict) -> None:
    # Else a filter that works on the local server would fail on the Worker.
    fake = FakeVectorize(2, metadata_indexes=None, result_style="python")
    with pytest.raises(FakeJsException, match="invalid filter"):
        await fake.query([1.0, 0.0], {"filter": where})
    with pytest.raises(ValueError):
        await VectorizeIndex(fake, dimensions=2).query([1.0, 0.0], top_k=3, filter=where)
    local = LocalVectorIndex(":memory:", 2)
    await local.upsert([VectorRecord("a", [1.0, 0.0], {"type": "fact"})])
    with pytest.raises(ValueError):
        await local.query([1.0, 0.0], top_k=3, filter=where)
