"""How well the embedded dream (no DREAM_MODEL) proposes: precision of what it puts in the
review queue, and recall of explicit requests, over the labelled set
tests/data/dream_labels.json.

The product path a user takes: a local runtime on a SQLite file with the bundled embedder,
the REST API in process. Every turn of the labelled LoCoMo conversations goes in through
``POST /v1/ingest/messages`` with its real date (LoCoMo's session times read in
DREAM_TIME_ZONE, turns 20 s apart), once with each speaker as the owner (role user) and the
other as the assistant, one namespace each way; then each day is dreamt in its night
(``POST /v1/dream/run`` for the day, the clock at 04:10 the next morning, as the nightly job
runs). The hand-written English and Chinese cases follow, one namespace each, dreamt the
night after their day. A proposal is a pending candidate (``GET /v1/candidates``), traced to
the turn its evidence quotes; it is right when that turn's label calls for one of its kind
quoting the same sentence (the cases: in the same words), and only the first time.

Data: ../shared/data/locomo-dev.json, LoCoMo (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", ACL 2024; snap-research/LoCoMo; CC BY-NC 4.0,
non-commercial use, attribution required).

Printed: per source and way round, the turns, proposals, right, wrong and repeated ones and
the precision; per kind, labelled / proposed / right; recall of explicit requests and of
plans; the hand cases per category; every wrong proposal; and, with ``--show N``, N
proposals of each source. ``--conversations`` may name any LoCoMo conversation: one without
labels is dreamt and its proposals listed, unscored. ``--now`` dreams every day at the real
time instead (as ``companion-memory dream --date D`` does today, long after the dates):
plans whose day has passed are then dropped.

    .venv/bin/python bench/dream_precision.py [--data PATH] [--conversations conv-26,conv-30,conv-41]
        [--show N] [--now]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

# The labelled set's helpers live beside the tests (tests/dream_labels.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.api.app import create_app
from companion_memory.clock import FixedClock, SystemClock
from companion_memory.settings import Settings
from tests.dream_labels import (
    Proposal,
    Score,
    Turn,
    case_expectations,
    case_turns,
    conversation_turns,
    dream_each_night,
    load,
    locomo_expectations,
    proposals,
    send,
)

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
KEY = "bench-owner-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}


class NowClock(FixedClock):
    """The real time, whatever a night asks for: the dream run long after the dates."""

    def __init__(self) -> None:
        super().__init__(SystemClock().now())

    def now(self) -> datetime:
        return SystemClock().now()


def row(label: str, score: Score, turns: int | None = None) -> str:
    return (
        f"{label:<26}{'' if turns is None else turns:>7}{score.proposed:>10}{len(score.correct):>7}{len(score.wrong):>7}"
        f"{len(score.repeated):>9}{score.precision:>11.3f}"
    )


def example(proposal: Proposal) -> str:
    until = f" (until {proposal.valid_to})" if proposal.valid_to else ""
    return f"  {proposal.namespace} {proposal.ref}: [{proposal.kind}] {proposal.content}{until}"


async def dream_locomo(
    client: httpx.AsyncClient, clock: FixedClock, samples: list[dict[str, Any]], time_zone: str, now: bool
) -> tuple[list[Turn], list[Proposal], list[dict[str, Any]]]:
    turns = [t for sample in samples for owner in ("a", "b") for t in conversation_turns(sample, owner, time_zone)]
    by_id = await send(client, turns, HEADERS)
    if now:
        reports = []
        for day in sorted({t.said_at.astimezone(ZoneInfo(time_zone)).date() for t in turns}):
            answer = await client.post("/v1/dream/run", json={"date": day.isoformat()}, headers=HEADERS)
            reports += answer.json()["runs"]
    else:
        reports = await dream_each_night(client, clock, turns, time_zone, HEADERS)
    found = await proposals(client, dict.fromkeys(t.namespace for t in turns), by_id, HEADERS)
    return turns, found, reports


async def dream_cases(
    client: httpx.AsyncClient, clock: FixedClock, cases: dict[str, Any], time_zone: str, now: bool
) -> tuple[list[Turn], list[Proposal], list[dict[str, Any]]]:
    turns = case_turns(cases, time_zone)
    by_id = await send(client, turns, HEADERS)
    if not now:
        # The evening after their day: the plans said for "tomorrow" are still ahead.
        evening = datetime.combine(
            date.fromisoformat(cases["said_on"]) + timedelta(days=1), time(20), ZoneInfo(time_zone)
        )
        clock.advance(seconds=(evening - clock.now()).total_seconds())
    runs = []
    for day in sorted({t.said_at.astimezone(ZoneInfo(time_zone)).date() for t in turns}):
        answer = await client.post("/v1/dream/run", json={"date": day.isoformat()}, headers=HEADERS)
        runs += answer.json()["runs"]
    found = await proposals(client, [case["id"] for case in cases["list"]], by_id, HEADERS)
    return turns, found, runs


def report(
    labels: dict[str, Any],
    locomo: tuple[list[Turn], list[Proposal], list[dict[str, Any]]],
    cases: tuple[list[Turn], list[Proposal], list[dict[str, Any]]],
    show: int,
) -> None:
    (turns, found, runs), (case_turns_, case_found, case_runs) = locomo, cases
    extractors = Counter(run["extractor"] for run in [*runs, *case_runs])
    labelled = labels["locomo"]["conversations"]
    print(f"extractor: {dict(extractors)}; DREAM_TIME_ZONE turns and nights; {len(runs) + len(case_runs)} dream runs")
    print(f"{'source':<26}{'turns':>7}{'proposed':>10}{'right':>7}{'wrong':>7}{'repeated':>9}{'precision':>11}")
    scores: list[Score] = []
    unscored: list[Proposal] = []
    for namespace in dict.fromkeys(t.namespace for t in turns):
        mine = [t for t in turns if t.namespace == namespace]
        theirs = [p for p in found if p.namespace == namespace]
        sample_id = namespace.removeprefix("locomo-")[:-2]
        if sample_id not in labelled:
            unscored += theirs
            owner = sum(t.role == "user" for t in mine)
            print(f"{namespace:<26}{owner:>7}{len(theirs):>10}      (no labels)")
            continue
        score = Score.of(theirs, locomo_expectations(labels, mine))
        scores.append(score)
        print(row(namespace, score, sum(t.role == "user" for t in mine)))
    scored = [p for p in found if p not in unscored]
    locomo_all = Score.of(scored, [e for s in scores for e in s.expected])
    owners = sum(t.role == "user" and t.namespace.removeprefix("locomo-")[:-2] in labelled for t in turns)
    if scores:
        print(row("LoCoMo, both ways", locomo_all, owners))
    hand = Score.of(case_found, case_expectations(labels["cases"]))
    print(row("hand cases (en, zh)", hand, sum(t.role == "user" for t in case_turns_)))
    overall = Score.of([*scored, *case_found], [*locomo_all.expected, *hand.expected])
    print(row("all", overall))

    print(f"\n{'kind':<10}{'labelled':>10}{'proposed':>10}{'right':>7}{'recall':>8}")
    for kind, (wanted, proposed, right) in overall.by_kind().items():
        print(f"{kind:<10}{wanted:>10}{proposed:>10}{right:>7}{overall.recall(kind):>8.3f}")

    print(f"\n{'hand case category':<20}{'cases':>6}{'expected':>10}{'proposed':>10}{'right':>7}")
    categories: dict[str, list[dict[str, Any]]] = {}
    for case in labels["cases"]["list"]:
        categories.setdefault(case["category"], []).append(case)
    for category, members in categories.items():
        ids = {case["id"] for case in members}
        score = Score.of(
            [p for p in case_found if p.namespace in ids], [e for e in hand.expected if e.namespace in ids]
        )
        print(f"{category:<20}{len(members):>6}{len(score.expected):>10}{score.proposed:>10}{len(score.correct):>7}")

    duplicates = sum(run["counts"].get("duplicates", 0) for run in [*runs, *case_runs])
    print(f"\nleft out as proposed already (this night or waiting in review): {duplicates}")
    print(
        f"precision {overall.precision:.3f} (target >= 0.9), explicit requests found "
        f"{overall.recall('request'):.3f} (target 1.0)"
    )
    for title, wrong in (("wrong", overall.wrong), ("repeated", overall.repeated)):
        if wrong:
            print(f"\n{title} ({len(wrong)}):")
            print("\n".join(example(p) for p in wrong))
    missed = overall.missed("request")
    if missed:
        print("\nrequests missed:\n" + "\n".join(f"  {e.namespace}: {e.content or e.quote}" for e in missed))
    if show:
        for title, shown in (("LoCoMo", found), ("hand cases", case_found)):
            print(f"\n{title}: {len(shown)} proposals, the first {min(show, len(shown))}:")
            print("\n".join(example(p) for p in shown[:show]))


async def main(data: Path, conversations: list[str] | None, show: int, now: bool) -> None:
    labels = load()
    wanted = conversations or list(labels["locomo"]["conversations"])
    samples = [s for s in json.loads(data.read_text(encoding="utf-8")) if s["sample_id"] in wanted]
    # One namespace each way round and one per case: a night's budget of batches for all.
    settings = Settings(CHATBOX_API_KEY=KEY, DREAM_MAX_RUNS=100_000)
    clock: FixedClock = NowClock() if now else FixedClock(datetime(2000, 1, 1, tzinfo=UTC))
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(settings, Path(directory), clock=clock)
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            zone = settings.DREAM_TIME_ZONE
            locomo = await dream_locomo(client, clock, samples, zone, now)
            cases = await dream_cases(client, clock, labels["cases"], zone, now)
    print(
        f"LoCoMo {', '.join(s['sample_id'] for s in samples)}: {len(locomo[0])} turns sent both ways; "
        f"{len(labels['cases']['list'])} hand cases; nights {'at the real time' if now else 'after each day'}"
    )
    report(labels, locomo, cases, show)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=lambda text: text.split(","), default=None)
    parser.add_argument("--show", type=int, default=0, help="list this many proposals of each source")
    parser.add_argument("--now", action="store_true", help="dream every day at the real time")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.data, arguments.conversations, arguments.show, arguments.now))
