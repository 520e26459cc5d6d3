"""How long a later start of the local server takes with many episodes.

A data dir is filled once with ``--episodes`` episodes (and ``--memories`` memories), each
with its vector in the index (random unit vectors: what the index holds, not what it
means, is measured) and its graph saved, as a server that stopped leaves it. Then the
server's start is timed ``--starts`` times: ``build_local_runtime`` (the database, its
migrations, the index and its graph, the bundled embedder) and ``catch_up_mirror`` (what
the queue worker does before its first task), each printed in seconds.

    .venv/bin/python bench/start_time.py [--episodes 200000] [--memories 1000] [--starts 3] [--data-dir DIR]

``--data-dir`` keeps the filled dir (filled only when it holds no database yet), so that
two versions of the code can be timed on the same one, e.g. with PYTHONPATH pointing at
another checkout's ``src``. Figures from a contended machine mean little.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from companion_memory.adapters.local.runtime import DATABASE_FILE, build_local_runtime
from companion_memory.clock import iso
from companion_memory.domain.episode import Episode
from companion_memory.domain.memory import Memory
from companion_memory.hosts.local_server import catch_up_mirror
from companion_memory.memory.vector_sources import episode_metadata, vector_metadata
from companion_memory.ports import VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from companion_memory.store.episodes import EpisodeStore
from companion_memory.store.memories import MemoryStore

BATCH = 2000
WORDS = ["tea", "garden", "sister", "bike", "harbour", "rain", "coffee", "exam", "promise", "river", "music", "dinner"]


def said(i: int) -> str:
    words = [WORDS[(i * 7 + n * 3) % len(WORDS)] for n in range(8)]
    return f"Turn {i}: I told you about the {' and the '.join(words[:3])}, then {' '.join(words[3:])}."


def vectors(generator: np.random.Generator, count: int, dimensions: int) -> np.ndarray:
    values = generator.standard_normal((count, dimensions)).astype(np.float32)
    return values / np.linalg.norm(values, axis=1, keepdims=True)


async def fill(runtime: Runtime, episodes: int, memories: int) -> None:
    await runtime.mirror.mismatch()  # claims the index for this embedder, as the first write does
    now = iso(runtime.clock.now())
    generator = np.random.default_rng(7)
    dimensions = runtime.embedder.dimensions
    for start in range(0, memories, BATCH):
        made = [
            Memory(id=f"m{i:07d}", namespace="default", type="fact", content=said(i), created_at=now, updated_at=now)
            for i in range(start, min(memories, start + BATCH))
        ]
        await runtime.db.batch([MemoryStore.insert(m) for m in made])
        values = vectors(generator, len(made), dimensions)
        await runtime.vectors.upsert(
            [VectorRecord(m.id, v.tolist(), vector_metadata(m)) for m, v in zip(made, values, strict=True)]
        )
    for start in range(0, episodes, BATCH):
        told = [
            Episode(
                id=f"e{i:08d}",
                namespace="default",
                conversation_id=f"c{i // 50}",
                role=("user", "assistant")[i % 2],
                source="ingest",
                content=said(i),
                created_at=now,
                stored_at=now,
            )
            for i in range(start, min(episodes, start + BATCH))
        ]
        await runtime.db.batch([EpisodeStore.insert_if_new(e) for e in told])
        values = vectors(generator, len(told), dimensions)
        await runtime.vectors.upsert(
            [VectorRecord(e.id, v.tolist(), episode_metadata(e)) for e, v in zip(told, values, strict=True)]
        )
        if start // BATCH % 25 == 0:
            print(f"  filled {start + len(told)} episodes", flush=True)


def close(runtime: Runtime) -> None:
    runtime.vectors.save()  # type: ignore[attr-defined]  # as the server does when it stops
    runtime.vectors.close()  # type: ignore[attr-defined]
    runtime.db.close()  # type: ignore[attr-defined]


async def main(episodes: int, memories: int, starts: int, data_dir: Path) -> None:
    settings = Settings()
    if not (data_dir / DATABASE_FILE).exists():
        started = time.perf_counter()
        runtime = await build_local_runtime(settings, data_dir)
        await fill(runtime, episodes, memories)
        close(runtime)
        print(f"filled {episodes} episodes and {memories} memories in {time.perf_counter() - started:.0f} s")
    builds, catch_ups = [], []
    for _ in range(starts):
        started = time.perf_counter()
        runtime = await build_local_runtime(settings, data_dir)
        built = time.perf_counter()
        await catch_up_mirror(runtime)
        caught_up = time.perf_counter()
        builds.append(built - started)
        catch_ups.append(caught_up - built)
        print(f"start: runtime {built - started:.2f} s, catch_up_mirror {caught_up - built:.2f} s", flush=True)
        runtime.vectors.close()  # type: ignore[attr-defined]
        runtime.db.close()  # type: ignore[attr-defined]
    build, catch_up = statistics.median(builds), statistics.median(catch_ups)
    print(
        f"median of {starts} later starts: runtime {build:.2f} s + catch_up_mirror {catch_up:.2f} s "
        f"= {build + catch_up:.2f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=200_000)
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--data-dir", type=Path)
    arguments = parser.parse_args()
    if arguments.data_dir:
        asyncio.run(main(arguments.episodes, arguments.memories, arguments.starts, arguments.data_dir))
    else:
        with tempfile.TemporaryDirectory() as name:
            asyncio.run(main(arguments.episodes, arguments.memories, arguments.starts, Path(name)))
