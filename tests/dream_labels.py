"""The labelled set of what the embedded dream should propose (tests/data/dream_labels.json),
sent as a user sends it, and the dream's proposals scored against it. The test
(tests/nightly/test_dream_precision.py) and the benchmark (bench/dream_precision.py) share it.

A day's messages go in through ``POST /v1/ingest/messages`` with the time they were said;
``POST /v1/dream/run`` dreams; the proposals are what ``GET /v1/candidates`` then holds,
each traced back to the turn it quotes."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from companion_memory.clock import FixedClock
from companion_memory.domain.search_text import normalised

LABELS = Path(__file__).parent / "data" / "dream_labels.json"
# What a candidate's type says it is.
KINDS = {"note": "request", "boundary": "rule", "plan": "plan"}


def load() -> dict[str, Any]:
    labels: dict[str, Any] = json.loads(LABELS.read_text(encoding="utf-8"))
    return labels


@dataclass(frozen=True)
class Turn:
    """A message to send: ``ref`` names its turn (LoCoMo) or its case."""

    namespace: str
    ref: str
    role: str
    content: str
    said_at: datetime


@dataclass(frozen=True)
class Expected:
    """A proposal the labels call for: of this kind, in the namespace, on the turn (or case)
    ``ref``, in these words (``content``; case and punctuation aside) or quoting this sentence
    (``quote``)."""

    namespace: str
    ref: str
    kind: str
    content: str | None = None
    quote: str | None = None
    valid_to: str | None = None

    def matches(self, proposal: Proposal) -> bool:
        if (proposal.namespace, proposal.ref, proposal.kind) != (self.namespace, self.ref, self.kind):
            return False
        if self.content is not None:
            return normalised(proposal.content) == normalised(self.content) and proposal.valid_to == self.valid_to
        said, quoted = normalised(self.quote or ""), normalised(proposal.quote)
        return bool(said and quoted) and (said in quoted or quoted in said)


@dataclass(frozen=True)
class Proposal:
    namespace: str
    ref: str
    kind: str
    content: str
    quote: str
    valid_to: str | None


def case_turns(cases: dict[str, Any], time_zone: str) -> list[Turn]:
    """Each hand-written case in a namespace of its own, said at 11:00 on its day."""
    said_on = date.fromisoformat(cases["said_on"])
    turns = []
    for case in cases["list"]:
        for index, message in enumerate(case["messages"]):
            day = said_on + timedelta(days=message.get("day", 0))
            at = datetime.combine(day, time(11, 0, index), ZoneInfo(time_zone))
            turns.append(Turn(case["id"], case["id"], message["role"], message["content"], at))
    return turns


def case_expectations(cases: dict[str, Any]) -> list[Expected]:
    return [
        Expected(case["id"], case["id"], e["kind"], content=e["content"], valid_to=e.get("valid_to"))
        for case in cases["list"]
        for e in case["expect"]
    ]


def session_time(text: str, time_zone: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023", in ``time_zone``."""
    return datetime.strptime(text, "%I:%M %p on %d %B, %Y").replace(tzinfo=ZoneInfo(time_zone))


def session_turns(
    sample_id: str, speaker_a: str, date_time: str, turns: list[dict[str, Any]], owner: str, time_zone: str
) -> list[Turn]:
    """A session's turns, 20 seconds apart from its start; the ``owner`` speaker ("a" or
    "b") speaks as the user, the other as the assistant."""
    start = session_time(date_time, time_zone)
    namespace = f"locomo-{sample_id}-{owner}"
    return [
        Turn(
            namespace,
            f"{sample_id} {turn['dia_id']}",
            "user" if (turn["speaker"] == speaker_a) == (owner == "a") else "assistant",
            turn["text"],
            start + timedelta(seconds=20 * index),
        )
        for index, turn in enumerate(turns)
    ]


def conversation_turns(sample: dict[str, Any], owner: str, time_zone: str) -> list[Turn]:
    conversation = sample["conversation"]
    found: list[Turn] = []
    number = 1
    while f"session_{number}" in conversation:
        found += session_turns(
            sample["sample_id"],
            conversation["speaker_a"],
            conversation[f"session_{number}_date_time"],
            conversation[f"session_{number}"],
            owner,
            time_zone,
        )
        number += 1
    return found


def locomo_expectations(labels: dict[str, Any], turns: list[Turn]) -> list[Expected]:
    """What the owner's turns among ``turns`` should propose."""
    proposed = {
        f"{sample_id} {dia_id}": found
        for sample_id, conversation in labels["locomo"]["conversations"].items()
        for dia_id, found in conversation["propose"].items()
    }
    return [
        Expected(t.namespace, t.ref, label["kind"], quote=label["quote"])
        for t in turns
        if t.role == "user"
        for label in proposed.get(t.ref, [])
    ]


async def dream_each_night(
    client: httpx.AsyncClient, clock: FixedClock, turns: list[Turn], time_zone: str, headers: dict[str, str]
) -> list[dict[str, Any]]:
    """Each day the turns were said, dreamt in its night (04:10 the next morning, when the
    nightly job runs), oldest first; the runs' reports."""
    zone = ZoneInfo(time_zone)
    reports = []
    for day in sorted({t.said_at.astimezone(zone).date() for t in turns}):
        night = datetime.combine(day + timedelta(days=1), time(4, 10), zone)
        clock.advance(seconds=(night - clock.now()).total_seconds())
        answer = await client.post("/v1/dream/run", json={"date": day.isoformat()}, headers=headers)
        assert answer.status_code == 200, answer.text
        reports += answer.json()["runs"]
    return reports


async def send(client: httpx.AsyncClient, turns: list[Turn], headers: dict[str, str]) -> dict[str, Turn]:
    """Ingest the turns, a namespace at a time; the stored message id of each."""
    by_id: dict[str, Turn] = {}
    for namespace in dict.fromkeys(t.namespace for t in turns):
        mine = [t for t in turns if t.namespace == namespace]
        for start in range(0, len(mine), 500):
            part = mine[start : start + 500]
            body = {
                "namespace": namespace,
                "conversation_id": namespace,
                "messages": [{"role": t.role, "content": t.content, "created_at": t.said_at.isoformat()} for t in part],
            }
            answer = await client.post("/v1/ingest/messages", json=body, headers=headers)
            assert answer.status_code == 200, answer.text
            by_id.update(zip((m["id"] for m in answer.json()["messages"]), part, strict=True))
    return by_id


async def proposals(
    client: httpx.AsyncClient, namespaces: Iterable[str], by_id: dict[str, Turn], headers: dict[str, str]
) -> list[Proposal]:
    """Every pending candidate of the namespaces, oldest first, traced to the turn it quotes."""
    found: list[Proposal] = []
    for namespace in namespaces:
        rows: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params = {"namespace": namespace, "limit": "200", **({"cursor": cursor} if cursor else {})}
            page = (await client.get("/v1/candidates", params=params, headers=headers)).json()
            rows += page["candidates"]
            cursor = page["next_cursor"]
            if not cursor:
                break
        for row in sorted(rows, key=lambda r: r["created_at"]):
            evidence = row["evidence"][0]
            found.append(
                Proposal(
                    namespace,
                    by_id[evidence["message_id"]].ref,
                    KINDS.get(row["type"], row["type"]),
                    row["content"],
                    evidence["quote"],
                    row["valid_to"],
                )
            )
    return found


@dataclass
class Score:
    """Proposals against labels: each label is met once; a proposal that meets none (or
    one met already) is wrong."""

    expected: list[Expected]
    correct: list[tuple[Proposal, Expected]] = field(default_factory=list)
    wrong: list[Proposal] = field(default_factory=list)
    repeated: list[Proposal] = field(default_factory=list)

    @classmethod
    def of(cls, found: list[Proposal], expected: list[Expected]) -> Score:
        score = cls(expected)
        met: set[int] = set()
        for proposal in found:
            matching = [i for i, e in enumerate(expected) if e.matches(proposal)]
            fresh = [i for i in matching if i not in met]
            if fresh:
                met.add(fresh[0])
                score.correct.append((proposal, expected[fresh[0]]))
            else:
                (score.repeated if matching else score.wrong).append(proposal)
        return score

    @property
    def proposed(self) -> int:
        return len(self.correct) + len(self.wrong) + len(self.repeated)

    @property
    def precision(self) -> float:
        return len(self.correct) / self.proposed if self.proposed else 1.0

    def missed(self, kind: str | None = None) -> list[Expected]:
        met = {id(e) for _, e in self.correct}
        return [e for e in self.expected if id(e) not in met and kind in (None, e.kind)]

    def recall(self, kind: str) -> float:
        wanted = [e for e in self.expected if e.kind == kind]
        return 1 - len(self.missed(kind)) / len(wanted) if wanted else 1.0

    def by_kind(self) -> dict[str, tuple[int, int, int]]:
        """kind → (labelled, proposed, correct)."""
        labelled = Counter(e.kind for e in self.expected)
        proposed = Counter(p.kind for p in [*(p for p, _ in self.correct), *self.wrong, *self.repeated])
        correct = Counter(p.kind for p, _ in self.correct)
        return {k: (labelled[k], proposed[k], correct[k]) for k in ("request", "rule", "plan")}
