"""How fast the background work runs locally: the durable task queue (send, deliver, ack)
and the nightly dream with the model-free extractor over a week of messages.

    .venv/bin/python bench/background_jobs.py [--tasks 5000] [--days 7 --per-day 500]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.adapters.local.task_queue import LocalTaskQueue
from companion_memory.clock import FixedClock
from companion_memory.memory.ingest import IncomingMessage
from companion_memory.ports import QueueMessage
from companion_memory.settings import Settings


class ConstantEmbedder:
    """Every text the same unit vector: the dream's duplicate check costs nothing here."""

    model = "constant"
    dimensions = 8
    similarity_range = (0.0, 1.0)

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        return [[1.0] + [0.0] * 7 for _ in texts]


async def queue_rate(directory: Path, count: int) -> tuple[float, float]:
    queue = LocalTaskQueue(SqliteDatabase.open(directory / "queue.sqlite3"), FixedClock(datetime.now(UTC)))
    await queue.prepare()
    started = time.perf_counter()
    for start in range(0, count, 100):
        await queue.send_batch([{"task": "retention", "n": i} for i in range(start, min(count, start + 100))])
    sent = time.perf_counter() - started

    async def ack(messages: Sequence[QueueMessage]) -> None:
        for message in messages:
            message.ack()

    started = time.perf_counter()
    while await queue.deliver(ack):
        pass
    return count / sent, count / (time.perf_counter() - started)


async def dream_rate(directory: Path, days: int, per_day: int) -> tuple[int, float, int]:
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    settings = Settings(DREAM_MAX_RUNS=1000, MESSAGES_RETENTION_DAYS=days + 1)
    runtime = await build_local_runtime(
        settings, directory / "data", embedder=ConstantEmbedder(), clock=FixedClock(now)
    )
    for day in range(1, days + 1):
        base = now - timedelta(days=day)
        await runtime.ingestor.ingest(
            "default",
            [
                IncomingMessage(
                    role="user" if i % 2 == 0 else "assistant",
                    content=(
                        f"remember that item {day}-{i} lives in drawer {i % 13}"
                        if i % 25 == 0
                        else f"just chatting about the weather on day {day}, message {i}"
                    ),
                    created_at=(base + timedelta(seconds=i)).isoformat(),
                )
                for i in range(per_day)
            ],
        )
    started = time.perf_counter()
    reports = await runtime.dream.night()
    elapsed = time.perf_counter() - started
    read = sum(r["messages_read"] for r in reports)
    return read, read / elapsed, sum(r["candidates_created"] for r in reports)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--per-day", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sent, delivered = await queue_rate(Path(tmp), args.tasks)
        print(f"local task queue: send {sent:,.0f} tasks/s, deliver+ack {delivered:,.0f} tasks/s ({args.tasks} tasks)")
        read, rate, created = await dream_rate(Path(tmp), args.days, args.per_day)
        print(
            f"dream (model-free extractor): {read} messages over {args.days} days at {rate:,.0f} messages/s, "
            f"{created} candidates"
        )


if __name__ == "__main__":
    asyncio.run(main())
