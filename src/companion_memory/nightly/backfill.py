"""The dream over past days (``dream --backfill``): every local day, however old, with
messages the dream has not read. Imported history lands years back, where the nightly
run never looks (it reaches MESSAGES_RETENTION_DAYS back), so the owner reaches it here,
knowing the cost first.

The estimate walks the days oldest first and counts what DREAM_MODEL would read for each:
the day's unread messages in batches of DREAM_MAX_MESSAGES, each batch with the
instructions and the memories it is shown. A token budget plans the days from the oldest
up to the one that would pass it. Each day is then dreamt whole, whatever DREAM_MAX_RUNS
says (the budget is the bound here); the day's cursor moves as for any night, so a
stopped backfill continues where it stopped and no day is dreamt twice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from ..clock import day_bounds, local_date
from ..domain.memory import Memory
from .dream import Dream
from .dream_model import prompt_tokens


@dataclass(frozen=True)
class DayEstimate:
    """One namespace's day: its messages not dreamt yet, and what reading them takes."""

    namespace: str
    day: date
    messages: int
    batches: int
    tokens: int


@dataclass(frozen=True)
class BackfillEstimate:
    # Every day with unread messages, oldest first.
    days: tuple[DayEstimate, ...]
    # How many of them, from the oldest, fit the budget (all of them without one).
    planned: int

    @property
    def planned_days(self) -> tuple[DayEstimate, ...]:
        return self.days[: self.planned]

    @property
    def left_days(self) -> tuple[DayEstimate, ...]:
        return self.days[self.planned :]


def within_budget(days: Sequence[DayEstimate], budget_tokens: int | None) -> int:
    """How many days, from the first, fit in ``budget_tokens``: the count stops before the
    day that would pass it, even when a later, smaller day would still fit (days are
    dreamt in order, so that what a day says can build on the days before)."""
    spent = 0
    for count, day in enumerate(days):
        spent += day.tokens
        if budget_tokens is not None and spent > budget_tokens:
            return count
    return len(days)


def local_days(utc_day: str, time_zone: str) -> set[date]:
    """The local days a UTC day overlaps: one, or two where the zone is off UTC."""
    start = datetime.combine(date.fromisoformat(utc_day), time.min, tzinfo=UTC)
    return {local_date(start, time_zone), local_date(start + timedelta(days=1, microseconds=-1), time_zone)}


class Backfill:
    def __init__(self, dream: Dream) -> None:
        self.dream = dream
        self.store = dream.store
        self.config = dream.config

    async def estimate(
        self,
        since: date | None = None,
        until: date | None = None,
        namespace: str | None = None,
        budget_tokens: int | None = None,
    ) -> BackfillEstimate:
        """The days from ``since`` (or the first message) to ``until`` (at most yesterday)
        with messages not dreamt yet, in one namespace or all, and how many fit the budget."""
        zone = self.config.dream_time_zone
        last = min(until or self.dream.yesterday(), self.dream.yesterday())
        start = day_bounds(since, zone)[0] if since else ""
        found = await self.store.days_with_messages(start, day_bounds(last, zone)[1], namespace)
        candidates = sorted(
            {
                (day, ns)
                for ns, utc_day in found
                for day in local_days(utc_day, zone)
                if (since is None or since <= day) and day <= last
            }
        )
        shown: dict[str, list[Memory]] = {}
        days = []
        for day, ns in candidates:
            if ns not in shown:
                shown[ns], _ = await self.dream.writer.store.page(ns, limit=self.config.dream_memory_context_limit)
            estimate = await self._day(ns, day, shown[ns])
            if estimate.messages:
                days.append(estimate)
        return BackfillEstimate(tuple(days), within_budget(days, budget_tokens))

    async def _day(self, namespace: str, day: date, shown: list[Memory]) -> DayEstimate:
        since, until = day_bounds(day, self.config.dream_time_zone)
        position = await self.store.cursor(Dream.cursor_name(namespace, day))
        messages = batches = tokens = 0
        while batch := await self.store.messages_after(
            namespace, since, until, position, self.config.dream_max_messages
        ):
            messages, batches = messages + len(batch), batches + 1
            tokens += prompt_tokens(batch, shown, day.isoformat())
            position = (batch[-1].created_at, batch[-1].id)
        return DayEstimate(namespace, day, messages, batches, tokens)

    async def dream_day(self, namespace: str, day: date) -> dict[str, Any]:
        """Every message of the day the dream has not read, in one run (the dream's report)."""
        since, until = day_bounds(day, self.config.dream_time_zone)
        unread = await self.store.unread_count(
            namespace, since, until, await self.store.cursor(Dream.cursor_name(namespace, day))
        )
        return await self.dream.run(
            namespace, day, max_batches=max(1, math.ceil(unread / self.config.dream_max_messages))
        )
