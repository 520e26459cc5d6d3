"""The nightly job, in the reference's order: dream, retention, the GitHub daily pull,
weekly and monthly rollups; then a pass over the vector outbox as a safety net for a
lost queue message. A step that fails is recorded and the others still run. The
Worker's Cron trigger (``10 20 * * *`` UTC) and the local server's scheduler both call
``run``; the last run is kept for ``GET /v1/dream/status``."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, time, timedelta
from typing import Any

from ..clock import iso, zone
from ..ports import Clock, Database
from ..store.cursors import CursorStore
from .dream import Dream
from .github_daily import GithubDaily
from .retention import Retention
from .rollups import Rollups
from .tasks import MirrorTask, TaskRunner

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


class Nightly:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        dream: Dream,
        retention: Retention,
        github: GithubDaily,
        rollups: Rollups,
        tasks: TaskRunner,
    ) -> None:
        self.db = db
        self.clock = clock
        self.cursors = CursorStore(db)
        self.steps: tuple[tuple[str, Callable[[], Awaitable[Any]]], ...] = (
            ("dream", dream.night),
            ("retention", retention.run),
            ("github_daily", github.pull),
            ("weekly_rollup", rollups.weekly),
            ("monthly_rollup", rollups.monthly),
            ("vector_mirror", lambda: tasks.run(MirrorTask(task="vector_mirror"))),
        )

    async def run(self, trigger: str = "schedule") -> dict[str, Any]:
        started = iso(self.clock.now())
        steps: dict[str, Any] = {}
        for name, step in self.steps:
            try:
                result = await step()
                # A step that ran but could not do all of its work (the GitHub pull with
                # a refused token) reports errors rather than raising.
                failed = isinstance(result, dict) and bool(result.get("errors"))
                steps[name] = {"ok": not failed, "result": result}
            except Exception as error:
                log.exception("nightly step %s failed", name)
                steps[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        run = {
            "trigger": trigger,
            "started_at": started,
            "finished_at": iso(self.clock.now()),
            "ok": all(s["ok"] for s in steps.values()),
            "steps": steps,
        }
        try:
            summary = {**run, "steps": {name: _brief(step) for name, step in steps.items()}}
            finished_at = str(run["finished_at"])
            await self.db.batch([CursorStore.put("nightly", "*", json.dumps(summary, default=str), finished_at)])
        except Exception:  # the job itself is done; only its record is lost
            log.exception("could not record the nightly run")
        return run

    async def last_run(self) -> dict[str, Any] | None:
        text = await self.cursors.get("nightly")
        return json.loads(text) if text else None


def _brief(step: dict[str, Any]) -> dict[str, Any]:
    """A step's record without the dream's candidate lists (they are in the review queue)."""
    result = step.get("result")
    if isinstance(result, list):
        result = [{k: v for k, v in r.items() if k != "candidates"} if isinstance(r, dict) else r for r in result]
    return {**step, "result": result} if "result" in step else step
