"""Recall latency on the local runtime at 1k, 10k and 100k memories.

Memory texts are LoCoMo dialog turns (../shared/data/locomo-dev.json; Maharana et al.,
ACL 2024; CC BY-NC 4.0), cycled with a serial number to reach each size, and the
queries are LoCoMo questions: real conversational vocabulary for the full-text index.
The stored vectors are random unit vectors of the bundled embedder's width, because the
search cost does not depend on what a vector means and embedding 100k texts would take
most of an hour; every query is embedded with the real bundled embedder. Printed:
p50/p95/max of ``Recall.run`` (k=10, no bookkeeping) with the query embedding (hybrid)
and without it (lexical only). With ``--people N``, the LoCoMo speakers (whom most
questions name) and fillers up to N are registered as people first, so each recall also
resolves names and searches the named people's other names (memory/people.py).

    .venv/bin/python bench/recall_latency.py [--sizes 1000 10000 100000] [--queries 200] [--people 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.clock import iso
from companion_memory.domain.memory import Memory
from companion_memory.memory.vector_mirror import vector_metadata
from companion_memory.ports import VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from companion_memory.store.memories import MemoryStore

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


def corpus(data: Path) -> tuple[list[str], list[str], list[str]]:
    turns, questions, speakers = [], [], []
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        speakers += [conversation["speaker_a"], conversation["speaker_b"]]
        number = 1
        while f"session_{number}" in conversation:
            date = conversation[f"session_{number}_date_time"]
            turns += [f'({date}) {t["speaker"]} said, "{t["text"]}"' for t in conversation[f"session_{number}"]]
            number += 1
        questions += [qa["question"] for qa in sample["qa"]]
    return turns, questions, list(dict.fromkeys(speakers))


async def register(runtime: Runtime, count: int, speakers: list[str]) -> None:
    names = speakers[:count] + [f"Filler Person {i}" for i in range(max(0, count - len(speakers)))]
    for index, name in enumerate(names):
        await runtime.people.upsert("default", name, aliases=[f"{name[:4]}{index}"], relation="friend")


async def populate(runtime: Runtime, count: int, texts: list[str]) -> None:
    dims = runtime.embedder.dimensions
    now = iso(runtime.clock.now())
    generator = np.random.default_rng(7)
    for start in range(0, count, 1000):
        memories = [
            Memory(
                id=f"m{i:07d}",
                namespace="default",
                type=("fact", "preference", "event", "habit")[i % 4],
                content=f"{texts[i % len(texts)]} #{i}",
                fact_key=f"k{i}",
                created_at=now,
                updated_at=now,
            )
            for i in range(start, min(count, start + 1000))
        ]
        await runtime.db.batch([MemoryStore.insert(m) for m in memories])
        vectors = generator.standard_normal((len(memories), dims)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        await runtime.vectors.upsert(
            [VectorRecord(m.id, v.tolist(), vector_metadata(m)) for m, v in zip(memories, vectors, strict=False)]
        )


async def measure(runtime: Runtime, queries: list[str], vector: bool) -> tuple[float, float, float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        await runtime.recall.run(query, k=10, vector=vector)
        timings.append(1000 * (time.perf_counter() - started))
    timings.sort()
    return timings[len(timings) // 2], timings[int(len(timings) * 0.95)], timings[-1]


async def main(sizes: list[int], query_count: int, people: int) -> None:
    texts, questions, speakers = corpus(DATA)
    queries = random.Random(42).sample(questions, min(query_count, len(questions)))
    print(f"{'memories':>9}  {'mode':<14}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as directory:
            runtime = await build_local_runtime(Settings(), Path(directory))
            await populate(runtime, size, texts)
            await register(runtime, people, speakers)
            await runtime.recall.run("warm up", k=10)
            for label, vector in (("hybrid", True), ("lexical only", False)):
                p50, p95, worst = await measure(runtime, queries, vector)
                print(f"{size:>9}  {label:<14}{p50:>8.1f}{p95:>8.1f}{worst:>8.1f}")
            runtime.db.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--people", type=int, default=0, help="people registered before measuring")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.sizes, arguments.queries, arguments.people))
