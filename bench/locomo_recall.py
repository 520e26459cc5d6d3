"""Retrieval quality on LoCoMo, through the real store, embedder and recall pipeline.

Data: ../shared/data/locomo-dev.json — five conversations of LoCoMo (Maharana et al.,
"Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024;
snap-research/LoCoMo; CC BY-NC 4.0, non-commercial use, attribution required).

Every dialog turn becomes a memory, one namespace per conversation, written as
``(<session date>) <speaker> said, "<text> [shares <caption>]"``. Consecutive turns of a
session are linked by ``same_thread`` relations, as a conversation importer links them
(``--no-relations`` leaves them out). Every question of categories 1–4 then goes through
``Recall.run`` (no injection bookkeeping, default floors); the pipeline never sees
answers or evidence ids. Printed: R@5 and R@10 (mean fraction of a question's evidence
turns in the top k), MRR (first evidence turn within the top 10), per category and
overall, plus indexing and query time.

``--ann-threshold N`` sets VECTOR_ANN_THRESHOLD (0: the HNSW graph from the first
vector, and every query through it, the namespace filter leaving more than 0 rows); the
questions are then asked a second time with exact search over the same index, and the
difference is printed: the graph must not cost recall.

    .venv/bin/python bench/locomo_recall.py [--data PATH] [--conversations N] [--no-relations]
        [--ann-threshold N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.memory.writes import Actor, MemoryDraft
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ACTOR = Actor("bench")


def evidence_ids(raw: list[Any]) -> list[str]:
    """Normalise LoCoMo's few malformed ids ("D8:6; D9:17", "D:11:26", "D30:05")."""
    found = []
    for item in raw:
        for part in re.split(r"[;,]\s*", str(item)):
            match = re.match(r"D:?(\d+):0*(\d+)", part.strip())
            if match:
                found.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return found


def sessions(conversation: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    out = []
    number = 1
    while f"session_{number}" in conversation:
        out.append((conversation[f"session_{number}_date_time"], conversation[f"session_{number}"]))
        number += 1
    return out


def turn_text(date: str, turn: dict[str, Any]) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return f'({date}) {turn["speaker"]} said, "{text}"'


async def index_conversation(runtime: Runtime, sample: dict[str, Any], relations: bool) -> int:
    namespace = f"locomo-{sample['sample_id']}"
    written = 0
    for date, turns in sessions(sample["conversation"]):
        previous: str | None = None
        for turn in turns:
            draft = MemoryDraft(content=turn_text(date, turn), fact_key=turn["dia_id"], type="event", source="locomo")
            memory_id = (await runtime.writer.upsert(namespace, draft, ACTOR)).memory.id
            if relations and previous:
                await runtime.writer.relate(previous, memory_id, "same_thread", 1.0, ACTOR)
            previous = memory_id
            written += 1
    return written


async def ask(runtime: Runtime, sample: dict[str, Any], timings: list[float]) -> list[dict[str, Any]]:
    namespace = f"locomo-{sample['sample_id']}"
    results = []
    for qa in sample["qa"]:
        if qa["category"] not in CATEGORIES:
            continue
        evidence = set(evidence_ids(qa.get("evidence", [])))
        if not evidence:
            continue
        started = time.perf_counter()
        result = await runtime.recall.run(qa["question"], namespace=namespace, k=10)
        timings.append(time.perf_counter() - started)
        ranked = [hit.memory.fact_key for hit in result.hits]
        first = next((rank for rank, key in enumerate(ranked, start=1) if key in evidence), None)
        results.append(
            {
                "category": qa["category"],
                "r5": len(evidence & set(ranked[:5])) / len(evidence),
                "r10": len(evidence & set(ranked[:10])) / len(evidence),
                "rr": 1 / first if first else 0.0,
            }
        )
    return results


def overall(rows: list[dict[str, Any]]) -> tuple[float, float]:
    return statistics.mean(r["r5"] for r in rows), statistics.mean(r["r10"] for r in rows)


def report(rows: list[dict[str, Any]]) -> None:
    print(f"{'category':<14}{'questions':>10}{'R@5':>8}{'R@10':>8}{'MRR':>8}")
    groups = [(f"{c} {name}", [r for r in rows if r["category"] == c]) for c, name in CATEGORIES.items()]
    for label, group in [*groups, ("overall", rows)]:
        if group:
            print(
                f"{label:<14}{len(group):>10}{statistics.mean(r['r5'] for r in group):>8.3f}"
                f"{statistics.mean(r['r10'] for r in group):>8.3f}{statistics.mean(r['rr'] for r in group):>8.3f}"
            )


async def main(data: Path, limit: int | None, relations: bool, ann_threshold: int | None) -> None:
    samples = json.loads(data.read_text(encoding="utf-8"))[:limit]
    models = str(Path(__file__).resolve().parents[1] / ".bench-cache" / "models")  # built once
    threshold = {} if ann_threshold is None else {"VECTOR_ANN_THRESHOLD": ann_threshold}
    settings = Settings(EMBEDDER_MODEL_DIR=models, **threshold)
    exact_rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(settings, Path(directory))
        started = time.perf_counter()
        turns = 0
        for sample in samples:
            turns += await index_conversation(runtime, sample, relations)
        indexing = time.perf_counter() - started
        timings: list[float] = []
        rows: list[dict[str, Any]] = []
        for sample in samples:
            rows += await ask(runtime, sample, timings)
        if ann_threshold is not None:
            # The same index, every filter now under the threshold: exact search.
            runtime.vectors.ann_threshold = 2**62  # type: ignore[attr-defined]
            for sample in samples:
                exact_rows += await ask(runtime, sample, [])
    print(
        f"LoCoMo: {len(samples)} conversations, {turns} turns, {len(rows)} questions; "
        f"embedder {runtime.embedder.model}, reranker {runtime.reranker.model if runtime.reranker else 'none'}, "
        f"relations {'same_thread' if relations else 'none'}"
    )
    if ann_threshold is not None:
        print(f"VECTOR_ANN_THRESHOLD={ann_threshold}, graph in use: {getattr(runtime.vectors, 'approximate', False)}")
    report(rows)
    if exact_rows:
        (r5, r10), (e5, e10) = overall(rows), overall(exact_rows)
        print(
            f"exact search: R@5 {e5:.3f}  R@10 {e10:.3f}; graph minus exact: R@5 {r5 - e5:+.3f}  R@10 {r10 - e10:+.3f}"
        )
    timings.sort()
    print(f"indexing: {indexing:.1f} s ({1000 * indexing / turns:.1f} ms per turn, embedding included)")
    print(
        f"query: p50 {1000 * timings[len(timings) // 2]:.1f} ms, p95 {1000 * timings[int(len(timings) * 0.95)]:.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--no-relations", action="store_true", help="write no same_thread relations")
    parser.add_argument("--ann-threshold", type=int, default=None, help="VECTOR_ANN_THRESHOLD, then compare with exact")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.data, arguments.conversations, not arguments.no_relations, arguments.ann_threshold))
