"""The approximate-search libraries the local vector index could use, measured side by side.

The local index (``adapters/local/vector_index.py``) searches a graph once it holds more
than ``VECTOR_ANN_THRESHOLD`` vectors. This bench is how its library was chosen, and how to
check that choice again: usearch (what we ship), faiss-cpu, hnswlib and sqlite-vec, each on
the same store and queries, with the same HNSW parameters where the library has a graph
(connectivity 16, 128 candidates while adding and while searching).

Stored vectors are LoCoMo turns (../shared/data/locomo-dev.json; Maharana et al., ACL 2024;
CC BY-NC 4.0) embedded with the bundled embedder and cycled to size with a little noise,
as ``recall_latency.py`` does; queries are LoCoMo questions, embedded for real. Each
library runs in a process of its own, so its RSS is its own. Printed per library: the time
to build the index, the RSS it adds, query p50/p95 at k=50 (recall's ``MEMORY_TOP_K``) on
one thread, the share of the exact top 10 it finds, whether it can remove a vector, its
installed size and licence, and with ``--wheels`` whether PyPI has a wheel for Linux
x86_64, Linux aarch64 and macOS arm64 (asks the package index; nothing is installed).

Only usearch is a dependency (the ``local`` extra); the others are measured when present:

    .venv/bin/pip install faiss-cpu hnswlib sqlite-vec
    .venv/bin/python bench/ann_libraries.py [--size 100000] [--queries 200] [--wheels]

Figures from a contended machine mean little: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from recall_latency import DATA, batches, corpus, embed_turns, percentiles, rss_mb

from companion_memory.adapters.local.embedder import BundledEmbedder
from companion_memory.domain.search_text import embedding_text
from companion_memory.settings import Settings

CACHE = Path(__file__).resolve().parents[1] / ".bench-cache"
MODELS = CACHE / "models"  # the bundled embedder's int8 graph, built once
CONNECTIVITY, EXPANSION = 16, 128
TOP_K = 50
LIBRARIES = {"usearch": "usearch", "faiss": "faiss-cpu", "hnswlib": "hnswlib", "sqlite_vec": "sqlite-vec"}
PLATFORMS = {
    "linux x86_64": "manylinux_2_28_x86_64",
    "linux aarch64": "manylinux_2_28_aarch64",
    "macOS arm64": "macosx_14_0_arm64",
}


class Usearch:
    removes = True

    def __init__(self, vectors: np.ndarray) -> None:
        from usearch.index import Index

        self.index = Index(
            ndim=vectors.shape[1],
            metric="cos",
            dtype="f16",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION,
            expansion_search=EXPANSION,
        )
        self.index.add(np.arange(len(vectors), dtype=np.uint64), vectors, threads=0)

    def search(self, query: np.ndarray) -> np.ndarray:
        return self.index.search(query, TOP_K, threads=1).keys.astype(np.int64)


class Faiss:
    # IndexHNSWFlat cannot remove a vector (remove_ids is not implemented for HNSW).
    removes = False

    def __init__(self, vectors: np.ndarray) -> None:
        import faiss

        self.index = faiss.IndexHNSWFlat(vectors.shape[1], CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = EXPANSION
        self.index.add(vectors)
        self.index.hnsw.efSearch = EXPANSION
        faiss.omp_set_num_threads(1)

    def search(self, query: np.ndarray) -> np.ndarray:
        return self.index.search(query[None, :], TOP_K)[1][0].astype(np.int64)


class Hnswlib:
    # mark_deleted hides a vector from searches; its slot stays until it is reused.
    removes = True

    def __init__(self, vectors: np.ndarray) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=vectors.shape[1])
        self.index.init_index(max_elements=len(vectors), M=CONNECTIVITY, ef_construction=EXPANSION)
        self.index.add_items(vectors, np.arange(len(vectors)), num_threads=os.cpu_count() or 1)
        self.index.set_ef(EXPANSION)
        self.index.set_num_threads(1)

    def search(self, query: np.ndarray) -> np.ndarray:
        return self.index.knn_query(query, k=TOP_K)[0][0].astype(np.int64)


class SqliteVec:
    # vec0 is an exact scan: no graph, so its figures are brute force in SQLite.
    removes = True

    def __init__(self, vectors: np.ndarray) -> None:
        import sqlite3

        import sqlite_vec

        self.db = sqlite3.connect(":memory:")
        if not hasattr(self.db, "enable_load_extension"):
            raise RuntimeError("this Python's sqlite3 was built without extension loading")
        self.db.enable_load_extension(True)
        sqlite_vec.load(self.db)
        self.db.execute(
            f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{vectors.shape[1]}] distance_metric=cosine)"
        )
        with self.db:
            self.db.executemany(
                "INSERT INTO v (rowid, embedding) VALUES (?, ?)", ((i, v.tobytes()) for i, v in enumerate(vectors))
            )

    def search(self, query: np.ndarray) -> np.ndarray:
        sql = "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ? ORDER BY distance"
        return np.asarray([r[0] for r in self.db.execute(sql, (query.tobytes(), TOP_K))], dtype=np.int64)


KINDS: dict[str, Any] = {"usearch": Usearch, "faiss": Faiss, "hnswlib": Hnswlib, "sqlite_vec": SqliteVec}


def measure(library: str, size: int, turns: np.ndarray, queries: np.ndarray, truth: np.ndarray) -> dict[str, Any]:
    """In the child process: one library's build, RSS, query times and recall."""
    vectors = np.concatenate([v for _, v in batches(size, turns)])
    before = rss_mb()
    started = time.perf_counter()
    index = KINDS[library](vectors)
    build = time.perf_counter() - started
    added = rss_mb() - before
    timings, found = [], 0
    for query, exact in zip(queries, truth, strict=True):
        started = time.perf_counter()
        got = index.search(query)
        timings.append(1000 * (time.perf_counter() - started))
        found += len(set(exact.tolist()) & set(got[:10].tolist()))
    p50, p95 = percentiles(timings)
    return {
        "build": build,
        "rss": added,
        "p50": p50,
        "p95": p95,
        "recall": found / truth.size,
        "removes": index.removes,
    }


def installed(distribution: str) -> tuple[float, str]:
    """Installed megabytes (the files its RECORD lists) and the licence it declares."""
    dist = importlib.metadata.distribution(distribution)
    size = sum(os.path.getsize(p) for f in dist.files or [] if os.path.exists(p := str(f.locate())))
    meta = dist.metadata
    licence = meta.get("License-Expression") or ""
    if not licence:
        classifiers = [c.rsplit(" :: ", 1)[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
        licence = ", ".join(classifiers) or (meta.get("License") or "not declared").splitlines()[0][:30]
    return size / 2**20, licence


def wheels(distribution: str) -> str:
    """Which of PLATFORMS the package index has a CPython 3.11 wheel for."""
    have = []
    for name, platform in PLATFORMS.items():
        with tempfile.TemporaryDirectory() as target:
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"]
            command += ["--platform", platform, "--python-version", "3.11", "-d", target, distribution]
            if subprocess.run(command, capture_output=True).returncode == 0:
                have.append(name)
    return ", ".join(have) or "none (source only)"


async def query_vectors(embedder: BundledEmbedder, questions: list[str]) -> np.ndarray:
    return np.asarray(await embedder.embed([embedding_text(q) for q in questions], kind="query"), dtype=np.float32)


def main(size: int, query_count: int, check_wheels: bool) -> None:
    texts, _, questions = corpus(DATA)
    questions = random.Random(42).sample(questions, min(query_count, len(questions)))
    CACHE.mkdir(exist_ok=True)
    turn_file = CACHE / f"locomo-dev-turns-{BundledEmbedder.model}.npy"
    embedder = BundledEmbedder(settings=Settings(), models=MODELS)
    if not turn_file.exists():
        np.save(turn_file, asyncio.run(embed_turns(embedder, texts)))
    turns = np.load(turn_file)
    queries = asyncio.run(query_vectors(embedder, questions))
    vectors = np.concatenate([v for _, v in batches(size, turns)])
    scores = queries @ vectors.T
    truth = np.argsort(-scores, axis=1)[:, :10]
    del vectors, scores
    with tempfile.TemporaryDirectory() as name:
        np.save(Path(name) / "queries.npy", queries)
        np.save(Path(name) / "truth.npy", truth)
        print(f"{size} vectors of {turns.shape[1]} dims, {len(queries)} queries, k={TOP_K}, {os.cpu_count()} CPUs")
        print(
            f"{'library':<11} {'version':>8} {'build s':>8} {'RSS +MB':>8} {'query p50 / p95 ms':>19}"
            f" {'R@10':>6} {'removes':>8} {'installed MB':>12}  licence; wheels"
        )
        for library, distribution in LIBRARIES.items():
            try:
                version = importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                print(f"{library:<11} not installed (pip install {distribution})")
                continue
            child = subprocess.run(
                [sys.executable, __file__, "--child", library, "--size", str(size), "--work", name],
                capture_output=True,
                text=True,
            )
            if child.returncode:
                print(f"{library:<11} failed: {child.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(child.stdout.strip().splitlines()[-1])
            megabytes, licence = installed(distribution)
            line = (
                f"{library:<11} {version:>8} {r['build']:>8.1f} {r['rss']:>8.0f} {r['p50']:>9.2f} / {r['p95']:>6.2f}"
                f" {r['recall']:>6.3f} {'yes' if r['removes'] else 'no':>8} {megabytes:>12.1f}  {licence}"
            )
            if check_wheels:
                line += f"; {wheels(distribution)}"
            print(line, flush=True)
    print(f"command: .venv/bin/python bench/ann_libraries.py --size {size} --queries {query_count}", end="")
    print(" --wheels" if check_wheels else "")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--wheels", action="store_true", help="ask the package index which platforms have wheels")
    parser.add_argument("--child", choices=sorted(KINDS), help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        turns = np.load(CACHE / f"locomo-dev-turns-{BundledEmbedder.model}.npy")
        queries = np.load(arguments.work / "queries.npy")
        truth = np.load(arguments.work / "truth.npy")
        print(json.dumps(measure(arguments.child, arguments.size, turns, queries, truth)))
    else:
        main(arguments.size, arguments.queries, arguments.wheels)
