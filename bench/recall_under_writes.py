"""Recall latency while writers hammer upserts, on the local runtime with the bundled embedder.

Seeds the store through ``MemoryWriter.upsert`` (so every memory has a real vector),
then measures ``Recall.run`` (k=10, the full hybrid pipeline with the query embedding)
one query after another: first idle, then while ``--writers`` concurrent tasks upsert
memories (new content under their own fact keys, each one embedded as a passage) as
fast as they can. Printed: p50/p95/max of recall idle and under writes, the p95 ratio,
and how many upserts the writers managed per second.

``--big`` makes one of the writers store 20,000-character memories (alternately ASCII
and emoji), the case where one long memory used to hold the embedder for seconds.

    .venv/bin/python bench/recall_under_writes.py [--writers 32] [--queries 100] [--seed 300] [--big]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from companion_memory.adapters.local.embedder import BundledEmbedder
from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings

SENTENCES = [
    "She takes her coffee with oat milk and no sugar",
    "他每周六早上去公园跑步五公里",
    "Prefers to be called Mei, not Meiling",
    "我们约好明年春天一起去京都看樱花",
    "Works as a nurse on night shifts at the city hospital",
    "不喜欢香菜，也不吃太辣的菜",
    "Her sister Lena moved to Lisbon last autumn and teaches piano there",
    "Is allergic to penicillin; keeps an epipen in the blue backpack",
]
QUERIES = [
    "how does she take her coffee",
    "what does he do on Saturday mornings",
    "what name should I use for her",
    "where are we going in spring",
    "what is her job",
    "food she dislikes",
    "where does her sister live",
    "any allergies",
]
BIG_ASCII = ("We talked for hours about the old house by the river, the garden, the dog and the neighbours. " * 220)[
    :20_000
]
BIG_EMOJI = "😀🌸🍵" * (20_000 // 3)

# The bundled embedder's int8 graph, built once.
MODELS = Path(__file__).resolve().parents[1] / ".bench-cache" / "models"


async def measure(runtime: Runtime, count: int) -> list[float]:
    timings = []
    for i in range(count):
        started = time.perf_counter()
        await runtime.recall.run(QUERIES[i % len(QUERIES)], k=10)
        timings.append(1000 * (time.perf_counter() - started))
    return sorted(timings)


def figures(timings: list[float]) -> tuple[float, float, float]:
    return timings[len(timings) // 2], timings[int(len(timings) * 0.95)], timings[-1]


async def writer(runtime: Runtime, number: int, stop: asyncio.Event, done: list[int], big: bool) -> None:
    actor = Actor(f"bench-writer-{number}")
    rng = random.Random(number)
    i = 0
    while not stop.is_set():
        if big:
            content = f"{(BIG_ASCII, BIG_EMOJI)[i % 2]} #{i}"
        else:
            content = f"{rng.choice(SENTENCES)} (writer {number}, version {i})"
        # Half the writes update one of the writer's keys, half create a new one.
        key = f"w{number}.k{i // 2 if i % 2 else i}"
        await runtime.writer.upsert("default", MemoryDraft(content=content, fact_key=key, type="fact"), actor)
        done[0] += 1
        i += 1


async def main(writers: int, queries: int, seed: int, big: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(Settings(), Path(directory), embedder=BundledEmbedder(models=MODELS))
        actor = Actor("bench")
        for i in range(seed):
            draft = MemoryDraft(content=f"{SENTENCES[i % len(SENTENCES)]} #{i}", fact_key=f"seed.{i}", type="fact")
            await runtime.writer.upsert("default", draft, actor)
        await measure(runtime, 5)  # warm up

        idle = figures(await measure(runtime, queries))

        stop = asyncio.Event()
        done = [0]
        tasks = [asyncio.create_task(writer(runtime, n, stop, done, big and n == 0)) for n in range(writers)]
        await asyncio.sleep(1.0)  # let every writer get going
        started, before = time.perf_counter(), done[0]
        loaded = figures(await measure(runtime, queries))
        rate = (done[0] - before) / (time.perf_counter() - started)
        stop.set()
        await asyncio.gather(*tasks)
        runtime.db.close()  # type: ignore[attr-defined]

    label = f"under {writers} writers" + (" (one writes 20k-char memories)" if big else "")
    print(f"{'recall':<48}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>9}")
    print(f"{'idle':<48}{idle[0]:>8.1f}{idle[1]:>8.1f}{idle[2]:>9.1f}")
    print(f"{label:<48}{loaded[0]:>8.1f}{loaded[1]:>8.1f}{loaded[2]:>9.1f}")
    print(f"p95 under writes / idle p95: {loaded[1] / idle[1]:.1f}x   (upserts during the run: {rate:.0f}/s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=300, help="memories stored before measuring")
    parser.add_argument("--big", action="store_true", help="one writer stores 20,000-character memories")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.writers, arguments.queries, arguments.seed, arguments.big))
