"""Where a recall's time goes, channel by channel, on recall_latency's corpus: 100k
memories and 300k episodes by default (``--memories``, ``--episodes``). The store is
filled once into ``--dir`` and reused, so that a change to the code is measured on the
same data (delete the directory to fill it again).

Each part is timed around its own call; the vector and word channels run side by side,
so their parts overlap and do not add up to ``recall.run``. The vector index's queries
are split by the ``kind`` they ask for. Also printed: the share of the exact vector top 10
(memories) that the index finds.

    .venv/bin/python bench/recall_split.py [--dir D] [--memories N] [--episodes N] [--queries 100]

Figures from a contended machine mean little: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
import recall_latency as corpus_bench

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.domain.search_text import embedding_text
from companion_memory.memory.recall.relations import Related
from companion_memory.settings import Settings

# The parts of recall timed, by the attribute of Recall that holds each (memory/recall/).
RECALL_PARTS = (
    ("channels", "vector"),
    ("channels", "words"),
    ("channels", "_lexical"),
    ("channels", "_substring"),
    ("fusion", "pool"),
)
STORE_PARTS = ("lexical_search", "substring_search")


def timed(timings: dict[str, list[float]], name: str, call: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    @functools.wraps(call)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await call(*args, **kwargs)
        finally:
            timings[name].append(1000 * (time.perf_counter() - started))

    return wrapper


async def fill(directory: Path, settings: Settings, memories: int, episodes: int, questions: list[str]) -> None:
    texts, said, _ = corpus_bench.corpus(corpus_bench.DATA)
    runtime = await build_local_runtime(settings, directory / "ours")
    turns = await corpus_bench.embed_turns(runtime.embedder, texts)
    queries = await runtime.embedder.embed([embedding_text(q) for q in questions], kind="query")
    started = time.perf_counter()
    truth = await corpus_bench.populate(runtime, memories, texts, turns, np.asarray(queries, dtype=np.float32))
    await corpus_bench.add_episodes(runtime, episodes, said, turns)
    print(f"filled in {time.perf_counter() - started:.0f} s", flush=True)
    (directory / "truth.json").write_text(json.dumps({"questions": questions, "truth": [sorted(t) for t in truth]}))
    runtime.vectors.close()  # type: ignore[attr-defined]
    runtime.db.close()  # type: ignore[attr-defined]


async def main(directory: Path, memories: int, episodes: int, query_count: int) -> None:
    settings = Settings(EMBEDDER_QUERY_CACHE_SECONDS=0)
    if not (directory / "truth.json").exists():
        _, _, questions = corpus_bench.corpus(corpus_bench.DATA)
        chosen = random.Random(42).sample(questions, min(query_count, len(questions)))
        directory.mkdir(parents=True, exist_ok=True)
        await fill(directory, settings, memories, episodes, chosen)
    saved = json.loads((directory / "truth.json").read_text())
    questions, truth = saved["questions"], [set(t) for t in saved["truth"]]
    started = time.perf_counter()
    runtime = await build_local_runtime(settings, directory / "ours")
    print(f"start {time.perf_counter() - started:.1f} s", flush=True)
    recall, index = runtime.recall, runtime.vectors
    await recall.run("warm up", k=10)
    vectors = await runtime.embedder.embed([embedding_text(q) for q in questions], kind="query")
    found = 0
    for vector, exact in zip(vectors, truth, strict=True):
        matches = await index.query(vector, top_k=10, filter=corpus_bench.FILTER)
        found += len(exact & {m.id for m in matches})
    print(f"vector R@10 (memories) {found / (10 * len(questions)):.3f}")

    timings: dict[str, list[float]] = defaultdict(list)
    for owner, name in RECALL_PARTS:
        part = getattr(recall, owner)
        setattr(part, name, timed(timings, f"{owner}.{name}", getattr(part, name)))
    # A Related is made per recall: its class is timed.
    Related.expand = timed(timings, "related.expand", Related.expand)  # type: ignore[method-assign]
    episode_search = recall.channels.episode_search
    for name in STORE_PARTS:
        setattr(recall.memories, name, timed(timings, f"memories.{name}", getattr(recall.memories, name)))
        setattr(episode_search, name, timed(timings, f"episodes.{name}", getattr(episode_search, name)))
    runtime.embedder.embed = timed(timings, "embed", runtime.embedder.embed)  # type: ignore[method-assign]
    query = index.query

    async def query_by_kind(vector: Any, *, top_k: int, filter: Any = None) -> Any:
        return await timed(timings, f"vector query kind={(filter or {}).get('kind')}", query)(
            vector, top_k=top_k, filter=filter
        )

    index.query = query_by_kind  # type: ignore[method-assign]
    total = timed(timings, "recall.run", recall.run)
    for question in questions:
        await total(question, k=10)

    print(f"{'part':<34} {'p50':>6} {'p95':>6} {'mean':>6} {'calls':>6}")
    for name, values in sorted(timings.items(), key=lambda item: -sum(item[1])):
        ordered = sorted(values)
        p50, p95 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)]
        print(f"{name:<34} {p50:>6.1f} {p95:>6.1f} {sum(ordered) / len(ordered):>6.1f} {len(ordered):>6}")
    index.close()  # type: ignore[attr-defined]
    runtime.db.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/recall-split"))
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--episodes", type=int, default=300_000)
    parser.add_argument("--queries", type=int, default=100)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.dir, arguments.memories, arguments.episodes, arguments.queries))
