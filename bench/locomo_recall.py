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

``--via ingest``: nothing is written as a memory. Each session is sent as chat messages
through ``POST /v1/ingest/messages`` (the REST surface, in process), one conversation per
session, with its real date and time (in DREAM_TIME_ZONE, 30 s between turns), the first
speaker as the user and the second as the assistant, each message named by its speaker
(OpenAI's ``name``); the episodes are embedded from the outbox as the background would,
and recall answers with the clock an hour after the conversation's last turn (so all but
its last session are archived episodes, found by their words). A hit is the episode of an
evidence turn. ``--dream`` first runs the embedded dream (no model) over every day of each
conversation and approves every candidate it proposes, as an owner accepting the whole
Review would: memories and episodes are then recalled together, and a memory counts as
the turns it was made from.

``--ann-threshold N`` sets VECTOR_ANN_THRESHOLD (0: the HNSW graph from the first
vector, and every query through it, the namespace filter leaving more than 0 rows); the
questions are then asked a second time with exact search over the same index, and the
difference is printed: the graph must not cost recall.

    .venv/bin/python bench/locomo_recall.py [--data PATH] [--conversations N] [--no-relations]
        [--ann-threshold N] [--via memories|ingest] [--dream]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.api.app import create_app
from companion_memory.clock import FixedClock, local_date, zone
from companion_memory.errors import ServiceError
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.memory.episode_recall import evidence_ids as sources_of
from companion_memory.memory.recall.hits import Hit
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ACTOR = Actor("bench")
OWNER_KEY = "bench-owner"
TURN_SECONDS = 30
# Which turns a hit stands for: a turn's memory or episode, or the turns a memory was made from.
Covered = dict[str, set[str]]


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


async def index_conversation(runtime: Runtime, sample: dict[str, Any], relations: bool, covered: Covered) -> int:
    namespace = f"locomo-{sample['sample_id']}"
    written = 0
    for date, turns in sessions(sample["conversation"]):
        previous: str | None = None
        for turn in turns:
            draft = MemoryDraft(content=turn_text(date, turn), fact_key=turn["dia_id"], type="event", source="locomo")
            memory_id = (await runtime.writer.upsert(namespace, draft, ACTOR)).memory.id
            covered[memory_id] = {turn["dia_id"]}
            if relations and previous:
                await runtime.writer.relate(previous, memory_id, "same_thread", 1.0, ACTOR)
            previous = memory_id
            written += 1
    return written


def said_at(date: str, time_zone: str) -> datetime:
    """A LoCoMo session's time ("1:56 pm on 8 May, 2023"), as said in ``time_zone``."""
    return datetime.strptime(date, "%I:%M %p on %d %B, %Y").replace(tzinfo=zone(time_zone))


def conversation_end(sample: dict[str, Any], time_zone: str) -> datetime:
    date, turns = sessions(sample["conversation"])[-1]
    return said_at(date, time_zone) + timedelta(seconds=TURN_SECONDS * len(turns))


def after(clock: FixedClock, sample: dict[str, Any], time_zone: str) -> None:
    """The clock an hour after the conversation's last turn."""
    clock.advance(seconds=(conversation_end(sample, time_zone) + timedelta(hours=1) - clock.now()).total_seconds())


async def ingest_conversation(http: httpx.AsyncClient, sample: dict[str, Any], time_zone: str, covered: Covered) -> int:
    """Every session through /v1/ingest/messages, as a chat client would send it."""
    namespace, user = f"locomo-{sample['sample_id']}", sample["conversation"]["speaker_a"]
    sent = 0
    for number, (date, turns) in enumerate(sessions(sample["conversation"]), start=1):
        start = said_at(date, time_zone)
        messages = [
            {
                "role": "user" if turn["speaker"] == user else "assistant",
                "name": turn["speaker"],
                "content": turn["text"] + (f" [shares {turn['blip_caption']}]" if turn.get("blip_caption") else ""),
                "created_at": (start + timedelta(seconds=TURN_SECONDS * index)).isoformat(),
                "id": f"{namespace}:{turn['dia_id']}",
            }
            for index, turn in enumerate(turns)
        ]
        body = {"namespace": namespace, "conversation_id": f"{namespace}:{number}", "messages": messages}
        answer = await http.post("/v1/ingest/messages", json=body)
        answer.raise_for_status()
        for turn, stored in zip(turns, answer.json()["messages"], strict=True):
            covered[stored["id"]] = {turn["dia_id"]}
        sent += len(turns)
    return sent


async def embed_all(runtime: Runtime) -> None:
    """What the background does: the outbox drained until nothing is left."""
    while True:
        report = await runtime.mirror.drain(limit=500)
        if report.failed:
            raise RuntimeError(f"{report.failed} embeddings failed")
        if not report.synced:
            return


async def dream_and_approve(runtime: Runtime, sample: dict[str, Any], time_zone: str, covered: Covered) -> int:
    """The embedded dream over every day of the conversation; every candidate approved.
    Each memory then stands for the turns it was made from."""
    namespace = f"locomo-{sample['sample_id']}"
    days = sorted({local_date(said_at(date, time_zone), time_zone) for date, _ in sessions(sample["conversation"])})
    for day in days:
        await runtime.dream.run(namespace, day)
    approved = 0
    while True:
        pending, _ = await runtime.candidates.store.page(namespace, "pending", limit=100, cursor=None)
        if not pending:
            return approved
        for candidate in pending:
            try:
                memory = (await runtime.candidates.approve(candidate.id, "bench")).memory
            except ServiceError:  # one the writer refuses (a hand-written target, say) is let go
                await runtime.candidates.discard(candidate.id, "bench")
                continue
            if memory is not None:
                covered[memory.id] = {turn for source in sources_of(memory) for turn in covered.get(source, set())}
                approved += 1


def turns_of(hits: list[Hit], covered: Covered) -> list[set[str]]:
    return [covered.get(hit.memory.id, set()) for hit in hits]


async def ask(runtime: Runtime, sample: dict[str, Any], timings: list[float], covered: Covered) -> list[dict[str, Any]]:
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
        ranked = turns_of(result.hits, covered)
        first = next((rank for rank, turns in enumerate(ranked, start=1) if turns & evidence), None)
        results.append(
            {
                "category": qa["category"],
                "r5": len(evidence & set().union(*ranked[:5])) / len(evidence),
                "r10": len(evidence & set().union(*ranked[:10])) / len(evidence),
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


async def main(
    data: Path, limit: int | None, relations: bool, ann_threshold: int | None, via: str, dream: bool
) -> None:
    samples = json.loads(data.read_text(encoding="utf-8"))[:limit]
    options: dict[str, Any] = {
        "CHATBOX_API_KEY": OWNER_KEY,
        # The bundled model's graph, built once for every run.
        "EMBEDDER_MODEL_DIR": str(Path(__file__).resolve().parents[1] / ".bench-cache" / "models"),
    }
    if ann_threshold is not None:
        options["VECTOR_ANN_THRESHOLD"] = ann_threshold
    settings = Settings(**options)
    time_zone = settings.DREAM_TIME_ZONE
    clock = FixedClock(datetime.now(UTC))
    exact_rows: list[dict[str, Any]] = []
    covered: Covered = {}
    approved = 0
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(settings, Path(directory), clock=clock)
        transport = httpx.ASGITransport(app=create_app(runtime))
        headers = {"Authorization": f"Bearer {OWNER_KEY}"}
        started = time.perf_counter()
        turns = 0
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", headers=headers) as http:
            for sample in samples:
                if via == "ingest":
                    # The store as it stands an hour after the conversation's last turn.
                    after(clock, sample, time_zone)
                    turns += await ingest_conversation(http, sample, time_zone, covered)
                    await embed_all(runtime)
                    if dream:
                        approved += await dream_and_approve(runtime, sample, time_zone, covered)
                        await embed_all(runtime)
                else:
                    turns += await index_conversation(runtime, sample, relations, covered)
        indexing = time.perf_counter() - started
        timings: list[float] = []
        rows: list[dict[str, Any]] = []
        for sample in samples:
            if via == "ingest":
                after(clock, sample, time_zone)
            rows += await ask(runtime, sample, timings, covered)
        if ann_threshold is not None:
            # The same index, every filter now under the threshold: exact search.
            runtime.vectors.ann_threshold = 2**62  # type: ignore[attr-defined]
            for sample in samples:
                exact_rows += await ask(runtime, sample, [], covered)
    written = (
        f"via ingest (episodes{f', the dream approved: {approved} memories' if dream else ''})"
        if via == "ingest"
        else f"as memories, relations {'same_thread' if relations else 'none'}"
    )
    print(
        f"LoCoMo: {len(samples)} conversations, {turns} turns, {len(rows)} questions; "
        f"embedder {runtime.embedder.model}, reranker {runtime.reranker.model if runtime.reranker else 'none'}; "
        f"turns {written}"
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
    parser.add_argument(
        "--via", choices=("memories", "ingest"), default="memories", help="turns written as memories, or ingested"
    )
    parser.add_argument("--dream", action="store_true", help="with --via ingest: dream every day, approve it all")
    arguments = parser.parse_args()
    if arguments.dream and arguments.via != "ingest":
        parser.error("--dream goes with --via ingest")
    asyncio.run(
        main(
            arguments.data,
            arguments.conversations,
            not arguments.no_relations,
            arguments.ann_threshold,
            arguments.via,
            arguments.dream,
        )
    )
