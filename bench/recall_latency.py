"""Recall latency on the local runtime at 1k, 10k and 100k memories.

Memories are synthetic sentences (English and Chinese, drawn from a few thousand
words) written with the real store SQL; their vectors are random unit vectors of the
bundled embedder's width, because the search cost does not depend on what a vector
means and embedding 100k texts would take most of an hour. Queries are embedded with the
real bundled embedder. Printed: p50/p95/max of ``Recall.run`` (k=10, no bookkeeping)
with the query embedding (hybrid) and without it (lexical only).

    .venv/bin/python bench/recall_latency.py [--sizes 1000 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.clock import iso
from companion_memory.memory.models import Memory
from companion_memory.ports import VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from companion_memory.store.memories import MemoryStore
from companion_memory.memory.vector_mirror import vector_metadata

PEOPLE = ["she", "he", "my sister", "her mother", "Mei", "Tom", "the neighbour", "her boss", "my friend Ana", "Grandpa"]
VERBS = ["likes", "hates", "visited", "bought", "cooked", "talked about", "is afraid of", "wants", "lost", "painted"]
THINGS = (
    "coffee tea hiking swimming guitar piano cats dogs rain winter summer Kyoto Lisbon Berlin books films pottery "
    "yoga running chess noodles dumplings cake chocolate spiders thunder trains flights museums gardens roses "
    "tulips mountains beaches camping photography painting knitting sushi ramen pizza jazz opera podcasts exams "
    "hospital night-shifts bakery startup interview promotion wedding birthday vacation marathon bicycle scooter"
).split()
CN = ["我", "她", "妈妈", "朋友", "同事", "老板", "小咪", "哥哥"]
CN_VERBS = ["喜欢", "讨厌", "害怕", "想去", "买了", "做了", "聊到", "梦见"]
CN_THINGS = ["咖啡", "爬山", "下雨", "京都", "火锅", "猫", "打雷", "考试", "医院", "蛋糕", "钢琴", "游泳", "奶茶", "樱花"]


def sentence(rng: random.Random, serial: int) -> str:
    if rng.random() < 0.3:
        return f"{rng.choice(CN)}{rng.choice(CN_VERBS)}{rng.choice(CN_THINGS)}，还有{rng.choice(CN_THINGS)}（第{serial}条）"
    extra = " and ".join(rng.sample(THINGS, 2))
    return f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)}, also {extra} (note {serial} w{rng.randrange(5000)})"


async def populate(runtime: Runtime, count: int, rng: random.Random) -> None:
    dims = runtime.embedder.dimensions
    now = iso(runtime.clock.now())
    generator = np.random.default_rng(7)
    for start in range(0, count, 1000):
        memories = [
            Memory(id=f"m{i:07d}", namespace="default", type=rng.choice(["fact", "preference", "event", "habit"]),
                   content=sentence(rng, i), fact_key=f"k{i}", created_at=now, updated_at=now)
            for i in range(start, min(count, start + 1000))
        ]
        await runtime.db.batch([MemoryStore.insert(m) for m in memories])
        vectors = generator.standard_normal((len(memories), dims)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        await runtime.vectors.upsert([VectorRecord(m.id, v.tolist(), vector_metadata(m)) for m, v in zip(memories, vectors)])


async def measure(runtime: Runtime, queries: list[str], vector: bool) -> tuple[float, float, float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        await runtime.recall.run(query, k=10, vector=vector)
        timings.append(1000 * (time.perf_counter() - started))
    timings.sort()
    return timings[len(timings) // 2], timings[int(len(timings) * 0.95)], timings[-1]


async def main(sizes: list[int], query_count: int) -> None:
    rng = random.Random(42)
    queries = [sentence(rng, rng.randrange(10**6)).split("(")[0].split("（")[0] for _ in range(query_count)]
    print(f"{'memories':>9}  {'mode':<14}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as directory:
            runtime = await build_local_runtime(Settings(), Path(directory))
            await populate(runtime, size, random.Random(size))
            await runtime.recall.run("warm up", k=10)
            for label, vector in (("hybrid", True), ("lexical only", False)):
                p50, p95, worst = await measure(runtime, queries, vector)
                print(f"{size:>9}  {label:<14}{p50:>8.1f}{p95:>8.1f}{worst:>8.1f}")
            runtime.db.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.sizes, arguments.queries))
