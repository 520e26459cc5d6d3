"""The nightly job, in the reference's order: dream, retention, plans past their end
expired, memories moved between layers (nightly/layers.py), consolidation (nightly/consolidation.py), memories linked to the people they name
(memory/people/registry.py), the GitHub daily pull, weekly and monthly rollups; then a pass over the vector outbox as a safety net for a
lost queue message; last, when they are on, her night dreams (nightly/night_dreams.py), made of the
memories the night has written. A step that fails is recorded and the others still run. The
Worker's Cron trigger (``10 20 * * *`` UTC) and the local server's scheduler both call
``run``; the last run is kept for ``GET /v1/dream/status``."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from ..clock import iso, zone
from ..memory.people.registry import People
from ..memory.plans import Plans
from ..memory.retention import Retention
from ..memory.tasks import MirrorTask, TaskRunner
from ..ports import Clock, Database, DatabaseError
from ..store.cursors import CursorStore
from .consolidation import Consolidation
from .dream import Dream
from .layers import Layers
from .night_dreams import NightDreams
from .rollups import Rollups
from .sources.github_daily import GithubDaily

log = logging.getLogger("companion_memory.nightly")
# 20:10 UTC is 04:10 in Singapore, the reference's time zone: after the day is over.
LOCAL_RUN_TIME = time(4, 10)


def next_run(after: datetime, time_zone: str) -> datetime:
    """The next 04:10 in ``time_zone`` strictly after ``after``."""
    local = after.astimezone(zone(time_zone))
    candidate = datetime.combine(local.date(), LOCAL_RUN_TIME, tzinfo=local.tzinfo)
    if candidate <= local:
        candidate = datetime.combine(local.date() + timedelta(days=1), LOCAL_RUN_TIME, tzinfo=local.tzinfo)
    return candidate


@dataclass(frozen=True)
class StepOutcome:
    """One step of a night: what it returned, or why it failed."""

    name: str
    ok: bool
    result: Any = None
    error: str | None = None

    def brief(self) -> dict[str, Any]:
        """As recorded: without the dream's candidate lists (they are in the review queue)."""
        result = self.result
        if isinstance(result, list):
            result = [{k: v for k, v in r.items() if k != "candidates"} if isinstance(r, dict) else r for r in result]
        return {"ok": self.ok, "result": result} if self.error is None else {"ok": self.ok, "error": self.error}

    def describe(self) -> str:
        """A line's worth: the result as JSON, or the error."""
        if self.error is not None:
            return self.error
        return json.dumps(self.result, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class NightlyReport:
    trigger: str
    started_at: str
    finished_at: str
    steps: tuple[StepOutcome, ...]

    @property
    def ok(self) -> bool:
        return all(step.ok for step in self.steps)

    def summary(self) -> dict[str, Any]:
        """The JSON form kept for ``GET /v1/dream/status`` (``last_nightly``)."""
        return {
            "trigger": self.trigger,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "ok": self.ok,
            "steps": {step.name: step.brief() for step in self.steps},
        }


class Nightly:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        dream: Dream,
        retention: Retention,
        plans: Plans,
        layers: Layers,
        consolidation: Consolidation,
        people: People,
        github: GithubDaily,
        rollups: Rollups,
        tasks: TaskRunner,
        night_dreams: NightDreams,
    ) -> None:
        self.db = db
        self.clock = clock
        self.cursors = CursorStore(db)
        self.steps: tuple[tuple[str, Callable[[], Awaitable[Any]]], ...] = (
            ("dream", dream.night),
            ("retention", retention.run),
            ("plans", plans.expire),
            ("layers", layers.run),
            ("consolidate", consolidation.run),
            ("people", people.relink),
            ("github_daily", github.pull),
            ("weekly_rollup", rollups.weekly),
            ("monthly_rollup", rollups.monthly),
            ("imports", tasks.imports.tidy),
            ("vector_mirror", lambda: tasks.run(MirrorTask())),
            ("night_dreams", night_dreams.night),
        )

    async def run(self, trigger: str = "schedule") -> NightlyReport:
        started = iso(self.clock.now())
        steps: list[StepOutcome] = []
        for name, step in self.steps:
            try:
                result = await step()
            except Exception as error:  # broad on purpose: a failed step is recorded; the others still run
                log.exception("nightly step %s failed", name)
                steps.append(StepOutcome(name, ok=False, error=f"{type(error).__name__}: {error}"))
                continue
            # A step that ran but could not do all of its work (the GitHub pull with a
            # refused token) reports errors rather than raising.
            failed = isinstance(result, dict) and bool(result.get("errors"))
            steps.append(StepOutcome(name, ok=not failed, result=result))
        report = NightlyReport(trigger, started, iso(self.clock.now()), tuple(steps))
        try:
            record = json.dumps(report.summary(), default=str)
            await self.db.batch([CursorStore.put("nightly", "*", record, report.finished_at)])
        except DatabaseError:  # the job itself is done; only its record is lost
            log.exception("could not record the nightly run")
        return report

    async def last_run(self) -> dict[str, Any] | None:
        text = await self.cursors.get("nightly")
        return json.loads(text) if text else None
