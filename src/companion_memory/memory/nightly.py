"""The nightly job, in the reference's order: dream, retention, weekly and monthly
rollups. A step that fails is recorded and the others still run. The Worker's Cron
trigger (``10 20 * * *`` UTC) and the local server's scheduler both call ``run``."""

from __future__ import annotations

import logging
from datetime import datetime, time, timedelta
from typing import Any

from ..clock import zone
from .dream import Dream
from .retention import Retention
from .rollups import Rollups

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
    def __init__(self, dream: Dream, retention: Retention, rollups: Rollups) -> None:
        self.steps = (
            ("dream", dream.night),
            ("retention", retention.run),
            ("weekly_rollup", rollups.weekly),
            ("monthly_rollup", rollups.monthly),
        )

    async def run(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        for name, step in self.steps:
            try:
                results[name] = {"ok": True, "result": await step()}
            except Exception as error:
                log.exception("nightly step %s failed", name)
                results[name] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        return results
