"""Write throughput on the local runtime (file-backed SQLite in WAL mode, local vector index).

Prints messages ingested per second and memory upserts per second, with the bundled
embedder and with a constant embedder (so storage time and model time can be told
apart), at each table size.

    .venv/bin/python bench/write_throughput.py            # 1k and 10k rows
    .venv/bin/python bench/write_throughput.py --sizes 1000
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from companion_memory.adapters.local.embedder import BundledEmbedder
from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.memory.ingest import IncomingMessage
from companion_memory.ports import EmbeddingKind
from companion_memory.settings import Settings

INGEST_BATCH = 100
SENTENCES = [
    "She takes her coffee with oat milk and no sugar",
    "他每周六早上去公园跑步五公里",
    "Prefers to be called Mei, not Meiling",
    "我们约好明年春天一起去京都看樱花",
    "Works as a nurse on night shifts at the city hospital",
    "不喜欢香菜，也不吃太辣的菜",
]

# The bundled embedder's int8 graph, built once.
MODELS = Path(__file__).resolve().parents[1] / ".bench-cache" / "models"


class ConstantEmbedder:
    """Same unit vector for every text: measures everything but the model."""

    model = "constant"
    similarity_range = (0.0, 1.0)

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = dimensions
        self._vector = [1.0 / dimensions**0.5] * dimensions

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        return [self._vector for _ in texts]


async def ingest_rate(rows: int) -> float:
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(Settings(), Path(directory), embedder=ConstantEmbedder())
        batches = [
            [
                IncomingMessage(
                    role="user" if i % 2 else "assistant", content=f"{SENTENCES[i % len(SENTENCES)]} #{start + i}"
                )
                for i in range(INGEST_BATCH)
            ]
            for start in range(0, rows, INGEST_BATCH)
        ]
        started = time.perf_counter()
        for number, batch in enumerate(batches):
            await runtime.ingestor.ingest("default", batch, conversation_id=f"c{number // 10}")
        elapsed = time.perf_counter() - started
        runtime.db.close()  # type: ignore[attr-defined]
        return rows / elapsed


async def upsert_rate(rows: int, embedder_name: str) -> tuple[float, float]:
    """Returns (creates per second, updates per second): first every key is new, then
    every key is written again with new content (update in place, re-embed)."""
    embedder = BundledEmbedder(models=MODELS) if embedder_name == "bundled" else ConstantEmbedder()
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(Settings(), Path(directory), embedder=embedder)
        actor = Actor("bench")
        rates = []
        for round_ in ("v1", "v2"):
            started = time.perf_counter()
            for i in range(rows):
                text = f"{SENTENCES[i % len(SENTENCES)]} ({round_} {i})"
                await runtime.writer.upsert(
                    "default", MemoryDraft(content=text, fact_key=f"fact.{i}", type="fact"), actor
                )
            rates.append(rows / (time.perf_counter() - started))
        assert await runtime.vectors.count() == rows
        runtime.db.close()  # type: ignore[attr-defined]
        return rates[0], rates[1]


async def main(sizes: list[int], with_model: bool) -> None:
    print(f"{'measure':<44}{'rows':>8}{'per second':>14}")
    for rows in sizes:
        print(f"{'messages ingested (batches of 100)':<44}{rows:>8}{await ingest_rate(rows):>14,.0f}")
        create, update = await upsert_rate(rows, "constant")
        print(f"{'memory upserts, new keys, constant embedder':<44}{rows:>8}{create:>14,.0f}")
        print(f"{'memory upserts, same keys, constant embedder':<44}{rows:>8}{update:>14,.0f}")
        if with_model:
            create, update = await upsert_rate(rows, "bundled")
            print(f"{'memory upserts, new keys, bundled embedder':<44}{rows:>8}{create:>14,.0f}")
            print(f"{'memory upserts, same keys, bundled embedder':<44}{rows:>8}{update:>14,.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--no-model", action="store_true", help="skip the runs with the bundled embedder")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.sizes, not arguments.no_model))
