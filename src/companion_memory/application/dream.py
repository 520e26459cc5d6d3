"""The dream (a day's messages → a diary entry and candidate memories) and the nightly
job it is the first step of."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, Field, JsonValue

from ..domain.counts import MAX_COUNT
from ..domain.scopes import MEMORY_READ, OWNER
from ..nightly.backfill import DayEstimate
from ..runtime import Runtime
from .fields import Day, Namespace, ShortText
from .principal import Principal
from .records import EvidenceRecord
from .use_case import Input, Output, use_case


class DreamCounts(BaseModel):
    batches: int
    rejected_no_evidence: int
    rejected_sensitive: int
    rejected_unknown_target: int
    with_target: int
    applied_world_facts: int
    contradictions: int = Field(0, description="Candidates that contradict a live memory (kind contradiction).")
    contradictions_dismissed: int = Field(
        0, description="Contradictions the rules suspected and DREAM_MODEL said were none."
    )
    moods_logged: int = Field(0, description="Entries written to the mood timeline (never candidates).")
    rejected_moods: int = Field(0, description="Moods whose label or whose the vocabulary does not know.")
    people_proposals: int = Field(0, description="New people, new names and merges proposed for review.")
    people_mentioned: int = Field(0, description="People named in the messages (their familiarity grew).")
    duplicates: int = Field(
        0, description="Additions left out: proposed already this night, or waiting in review in the same words."
    )


class DreamCandidate(BaseModel):
    """A candidate as a run reports it; the review queue holds the whole row."""

    id: str
    type: str
    content: str
    evidence: list[EvidenceRecord]
    target_memory_id: str | None


class DreamReport(BaseModel):
    """One namespace's day."""

    id: str
    namespace: str
    date: str
    dry_run: bool
    status: str = Field(description="succeeded or failed.")
    messages_read: int
    candidates_created: int
    error: str | None
    extractor: str
    counts: DreamCounts
    started_at: str
    finished_at: str
    candidates: list[DreamCandidate]
    more_to_read: bool = Field(description="The day has messages left for the next run (DREAM_MAX_RUNS).")


class DreamRun(Input):
    date: Annotated[Day | None, Field(description="The day to dream; without it, every recent day not dreamt yet.")] = (
        None
    )
    dry_run: Annotated[bool, Field(description="Write nothing; say what would be written.")] = False


class DreamAnswer(Output):
    date: str
    runs: list[DreamReport]


class DreamRunRecord(BaseModel):
    """A run as recorded (dry runs are not)."""

    id: str
    namespace: str
    date: str
    status: str
    dry_run: int = Field(description="0: dry runs are not recorded.")
    messages_read: int
    candidates_created: int
    counts: str = Field(description="The run's counts and extractor, as JSON text.")
    error: str | None
    started_at: str
    finished_at: str | None


class StepBrief(BaseModel):
    ok: bool
    result: JsonValue = None
    error: str | None = None


class NightlySummary(BaseModel):
    trigger: str
    started_at: str
    finished_at: str
    ok: bool
    steps: dict[str, StepBrief] = Field(description="Step name → its result (without the dream's candidates) or error.")


class StatusScope(Input):
    namespace: Namespace = "default"


class DreamStatus(Output):
    runs: list[DreamRunRecord]
    pending_candidates: int
    last_nightly: NightlySummary | None


class NightlyTrigger(Input):
    trigger: Annotated[ShortText, Field(description="What started the run: schedule, cli, cron …")] = "schedule"


class NightlyStep(BaseModel):
    name: str
    ok: bool
    result: JsonValue = Field(None, description="What the step returned.")
    error: str | None = None

    def describe(self) -> str:
        """A line's worth: the result as JSON, or the error."""
        return self.error if self.error is not None else json.dumps(self.result, ensure_ascii=False)


class NightlyReport(Output):
    trigger: str
    started_at: str
    finished_at: str
    ok: bool
    steps: list[NightlyStep]


@use_case("dream.run", OWNER)
async def dream(runtime: Runtime, _: Principal, run: DreamRun) -> DreamAnswer:
    """Dream a day now; without ``date``, every recent day with messages not dreamt yet
    (as the nightly job does). ``dry_run`` writes nothing."""
    reports = await runtime.dream.night(run.date, dry_run=run.dry_run)
    day = run.date or runtime.dream.yesterday()
    return DreamAnswer.model_validate({"date": day.isoformat(), "runs": reports})


class BackfillRange(Input):
    since: Annotated[Day | None, Field(description="The first day; without it, the first day with messages.")] = None
    until: Annotated[
        Day | None, Field(description="The last day; without it (or after it), yesterday in DREAM_TIME_ZONE.")
    ] = None
    namespace: Annotated[Namespace | None, Field(description="One namespace; without it, every namespace.")] = None
    budget_tokens: Annotated[
        int | None,
        Field(
            ge=1,
            le=MAX_COUNT,
            description="Plan the days, oldest first, up to the one whose tokens would pass this many.",
        ),
    ] = None


class BackfillDay(BaseModel):
    namespace: str
    date: datetime.date
    messages: int = Field(description="Messages not dreamt yet.")
    batches: int = Field(description="Calls to DREAM_MODEL: DREAM_MAX_MESSAGES messages each.")
    tokens: int = Field(description="About how many tokens DREAM_MODEL reads: the messages and the prompt.")


class BackfillTotals(BaseModel):
    days: int
    messages: int
    batches: int
    tokens: int

    @classmethod
    def of(cls, days: Sequence[DayEstimate]) -> BackfillTotals:
        return cls(
            days=len(days),
            messages=sum(d.messages for d in days),
            batches=sum(d.batches for d in days),
            tokens=sum(d.tokens for d in days),
        )


class BackfillEstimate(Output):
    dream_model: str = Field(description="DREAM_MODEL, as configured.")
    calls_model: bool = Field(description="DREAM_MODEL is configured; without it the embedded extractor dreams.")
    max_output_tokens: int = Field(description="DREAM_MAX_TOKENS: the most a batch's answer may take.")
    budget_tokens: int | None
    days: list[BackfillDay] = Field(description="Every day with messages not dreamt yet, oldest first.")
    total: BackfillTotals
    planned: BackfillTotals = Field(description="The days, from the oldest, that fit the budget.")
    left: BackfillTotals = Field(description="The days after them, for the next run.")


class BackfillDayRun(Input):
    namespace: Namespace = "default"
    date: Day


@use_case("dream.backfill_estimate", OWNER)
async def backfill_estimate(runtime: Runtime, _: Principal, scope: BackfillRange) -> BackfillEstimate:
    """What dreaming past days would take: every day up to yesterday with messages not
    dreamt yet (imported history too, which the nightly run does not reach), their
    messages, batches and tokens, and how many fit ``budget_tokens``. Writes nothing."""
    estimate = await runtime.backfill.estimate(scope.since, scope.until, scope.namespace, scope.budget_tokens)
    return BackfillEstimate(
        dream_model=runtime.settings.DREAM_MODEL,
        calls_model=runtime.dream_model is not None,
        max_output_tokens=runtime.settings.DREAM_MAX_TOKENS,
        budget_tokens=scope.budget_tokens,
        days=[
            BackfillDay(namespace=d.namespace, date=d.day, messages=d.messages, batches=d.batches, tokens=d.tokens)
            for d in estimate.days
        ],
        total=BackfillTotals.of(estimate.days),
        planned=BackfillTotals.of(estimate.planned_days),
        left=BackfillTotals.of(estimate.left_days),
    )


@use_case("dream.backfill_day", OWNER)
async def backfill_day(runtime: Runtime, _: Principal, run: BackfillDayRun) -> DreamAnswer:
    """Dream one namespace's past day whole: every message not dreamt yet, whatever
    DREAM_MAX_RUNS says (the backfill's budget bounds it instead)."""
    report = await runtime.backfill.dream_day(run.namespace, run.date)
    return DreamAnswer.model_validate({"date": run.date.isoformat(), "runs": [report]})


@use_case("dream.status", MEMORY_READ)
async def status(runtime: Runtime, principal: Principal, scope: StatusScope) -> DreamStatus:
    """The latest dream runs, the candidates waiting in ``namespace``, and the last nightly job."""
    runs = await runtime.dream.store.recent_runs(20)
    return DreamStatus.model_validate(
        {
            # Of every namespace: a key bound to namespaces sees those of its own.
            "runs": [run for run in runs if principal.readable(run.namespace)],
            "pending_candidates": await runtime.candidates.store.count(scope.namespace, "pending"),
            "last_nightly": await runtime.nightly.last_run(),
        },
        from_attributes=True,
    )


@use_case("nightly.run", OWNER)
async def nightly(runtime: Runtime, _: Principal, run: NightlyTrigger) -> NightlyReport:
    """The whole nightly job: dream, retention, GitHub pull, rollups, the vector outbox."""
    report = await runtime.nightly.run(trigger=run.trigger)
    return NightlyReport(
        trigger=report.trigger,
        started_at=report.started_at,
        finished_at=report.finished_at,
        ok=report.ok,
        steps=[
            # As the run's record keeps it: a value JSON cannot hold reads as its text.
            NightlyStep(name=s.name, ok=s.ok, result=json.loads(json.dumps(s.result, default=str)), error=s.error)
            for s in report.steps
        ],
    )
