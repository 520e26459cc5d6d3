"""What week blocks add to a chat turn's <memories> block, on LoCoMo.

Data: ../shared/data/locomo-dev.json (LoCoMo, Maharana et al., ACL 2024; CC BY-NC 4.0),
as bench/locomo_recall.py reads it. Each conversation is sent through
``POST /v1/ingest/messages`` with its real dates (``--via ingest`` there), dreamt day by
day by the embedded dream (no model: each day gets its diary entry) with every proposal
approved, and rolled up into ISO weeks as the nightly job does, the clock an hour after
its last turn (so its last week or two have no summary yet, as in real life). Every
question of categories 1–4 is then asked as the gateway asks a user's message: recall
with the defaults (no accounting), and the block assembled twice from the same hits,
without week lines (``RECALL_WEEK_LINES=0``: before) and with ``--lines`` (after).

Printed: the block's characters per turn (mean, p50, p95, max) before and after, what
the week lines add, the share of turns that carry one, and the lines per such turn.

    .venv/bin/python bench/week_blocks.py [--data PATH] [--conversations N] [--lines N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import locomo_recall as locomo

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.api.app import create_app
from companion_memory.clock import FixedClock
from companion_memory.gateway.weeks import WeekBlocks
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings


async def blocks(runtime: Runtime, sample: dict[str, Any], lines: int) -> list[tuple[str, str]]:
    """Each question's block without and with week lines, from the same hits."""
    namespace = f"locomo-{sample['sample_id']}"
    context, pairs = runtime.context, []
    for qa in sample["qa"]:
        if qa["category"] not in locomo.CATEGORIES:
            continue
        result = await runtime.recall.run(qa["question"], namespace=namespace)
        standing = await context.standing(namespace)
        context.weeks = WeekBlocks(runtime.db, 0)
        before = (await context.for_turn(namespace, result, standing)).text
        context.weeks = WeekBlocks(runtime.db, lines)
        pairs.append((before, (await context.for_turn(namespace, result, standing)).text))
    return pairs


def percentile(values: list[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def report(pairs: list[tuple[str, str]]) -> None:
    before, after = [len(b) for b, _ in pairs], [len(a) for _, a in pairs]
    added = [a - b for b, a in zip(before, after, strict=True)]
    carrying = [a.count("\nWeek ") - b.count("\nWeek ") for b, a in pairs]
    print(f"{'chars per turn':<16}{'mean':>8}{'p50':>8}{'p95':>8}{'max':>8}")
    for label, values in (("before", before), ("after", after), ("added", added)):
        print(
            f"{label:<16}{statistics.mean(values):>8.0f}{percentile(values, 0.5):>8}"
            f"{percentile(values, 0.95):>8}{max(values):>8}"
        )
    with_lines = [n for n in carrying if n]
    share = len(with_lines) / len(pairs)
    per = statistics.mean(with_lines) if with_lines else 0.0
    print(f"turns with a week line: {share:.1%}; week lines in those: {per:.2f} on average")


async def main(data: Path, limit: int | None, lines: int) -> None:
    samples = json.loads(data.read_text(encoding="utf-8"))[:limit]
    settings = Settings(
        CHATBOX_API_KEY=locomo.OWNER_KEY,
        EMBEDDER_MODEL_DIR=str(Path(__file__).resolve().parents[1] / ".bench-cache" / "models"),
    )
    time_zone, clock = settings.DREAM_TIME_ZONE, FixedClock(datetime.now(UTC))
    pairs: list[tuple[str, str]] = []
    weeks = 0
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(settings, Path(directory), clock=clock)
        transport = httpx.ASGITransport(app=create_app(runtime))
        headers = {"Authorization": f"Bearer {locomo.OWNER_KEY}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", headers=headers) as http:
            for sample in samples:
                locomo.after(clock, sample, time_zone)
                await locomo.ingest_conversation(http, sample, time_zone, {})
                await locomo.embed_all(runtime)
                await locomo.dream_and_approve(runtime, sample, time_zone, {})
                await locomo.embed_all(runtime)
                weeks += await runtime.rollups.weekly()
                pairs += await blocks(runtime, sample, lines)
    print(
        f"LoCoMo: {len(samples)} conversations, {weeks} weeks summarised, {len(pairs)} questions; "
        f"RECALL_WEEK_LINES 0 (before) and {lines} (after), CONTEXT_BUDGET_TOKENS {settings.CONTEXT_BUDGET_TOKENS}"
    )
    report(pairs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--lines", type=int, default=Settings().RECALL_WEEK_LINES, help="RECALL_WEEK_LINES after")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.data, arguments.conversations, arguments.lines))
