"""Rollups: days into ISO weeks, weeks into months.

Weekly: every ISO week that ended more than 7 days ago and has diary days but no weekly
entry gets one, once the dream has read all of its messages (an entry is written once: a
week with days still to dream, as a backfill stopped by its budget leaves, waits for
them); the days stay. Monthly: weeks that ended more than 35 days ago go into
the month of their Thursday, once the month has two of them or already has an entry; a
lone week waits. Rolled weeks are kept and marked, so nothing is ever rolled twice.
Summaries come from the ``Summarizer`` (DREAM_MODEL, or the entries joined).
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta

from ..clock import iso, local_date
from ..domain.diary import WeekSummary, iso_week
from ..memory.config import MemoryConfig
from ..ports import Clock, Database
from ..store.logs import LogStore
from .dream import Dream
from .summaries import Summarizer

WEEK_GRACE_DAYS = 7
MONTH_AFTER_DAYS = 35


class Rollups:
    def __init__(self, db: Database, clock: Clock, config: MemoryConfig, summarizer: Summarizer, dream: Dream) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.summarizer = summarizer
        self.dream = dream
        self.logs = LogStore(db)

    def _today(self) -> date:
        return local_date(self.clock.now(), self.config.dream_time_zone)

    async def weekly(self) -> int:
        today, written = self._today(), 0
        now = iso(self.clock.now())
        for namespace, first in (await self.logs.first_daily_dates()).items():
            # From the newest week old enough back to the first diary day.
            sunday = today - timedelta(days=today.isoweekday() + WEEK_GRACE_DAYS)
            while sunday.isoformat() >= first:
                monday = sunday - timedelta(days=6)
                week = iso_week(monday)
                if not await self.logs.weekly_exists(namespace, week):
                    days = await self.logs.dailies_between(namespace, monday.isoformat(), sunday.isoformat())
                    if days and not await self._unread_in_week(namespace, monday):
                        await self.db.batch(
                            [
                                LogStore.insert_weekly(
                                    str(uuid.uuid4()),
                                    namespace,
                                    week,
                                    monday.isoformat(),
                                    sunday.isoformat(),
                                    f"Week {week}",
                                    await self.summarizer.summarize(week, [(d.date, d.title, d.summary) for d in days]),
                                    now,
                                )
                            ]
                        )
                        written += 1
                sunday -= timedelta(days=7)
        return written

    async def _unread_in_week(self, namespace: str, monday: date) -> bool:
        """Whether a day of the week starting on ``monday`` has messages not dreamt yet."""
        for offset in range(7):
            if await self.dream.has_unread(namespace, monday + timedelta(days=offset)):
                return True
        return False

    async def monthly(self) -> int:
        cutoff = (self._today() - timedelta(days=MONTH_AFTER_DAYS)).isoformat()
        now = iso(self.clock.now())
        written = 0
        for namespace in await self.logs.weekly_namespaces():
            by_month: dict[str, list[tuple[str, WeekSummary]]] = {}
            for week_id, week in await self.logs.weeklies_to_roll(namespace, cutoff):
                thursday = date.fromisoformat(week.start_date) + timedelta(days=3)
                by_month.setdefault(thursday.strftime("%Y-%m"), []).append((week_id, week))
            for month, weeks in sorted(by_month.items()):
                existing = await self.logs.monthly(namespace, month)
                if existing is None and len(weeks) < 2:
                    continue  # a lone week waits for company or for next month's entry
                entries = [("Earlier", existing.title, existing.summary)] if existing else []
                entries += [(w.week, w.title, w.summary) for _, w in weeks]
                summary = await self.summarizer.summarize(month, entries)
                await self.db.batch(
                    [LogStore.upsert_monthly(str(uuid.uuid4()), namespace, month, f"Month {month}", summary, now)]
                    + [LogStore.mark_rolled(week_id, now) for week_id, _ in weeks]
                )
                written += 1
        return written
