"""The boot package: what a new chat window should know before the first message.

The impressions ladder (yesterday's diary, the newest week, the newest month) is the
stable part of a system prompt; it never goes through recall and is never embedded.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..clock import day_bounds, local_date
from ..ports import Clock, Database
from ..store.glossary import GlossaryStore
from ..store.logs import LogStore
from ..store.memories import MemoryStore
from ..store.messages import MessageStore
from ..store.precious import PreciousStore
from .config import MemoryConfig
from .moods import Moods
from .plans import Plans
from .todos import Todos

NEWEST_PRECIOUS = 10
TODAY_MESSAGES = 200
UPCOMING_PLANS = 20
# Characters of each ladder entry after its label: one long day (a 2,000-character diary
# entry) must not push the week and the month out of the budget.
LADDER_ENTRY_CHARS = 100


def _entry(label: str, row: dict[str, Any] | None) -> str | None:
    if not row or not (row.get("title") or row.get("summary")):
        return None
    title, summary = row.get("title") or "", row.get("summary") or ""
    text = f"{title} — {summary}" if title and summary else title or summary
    if len(text) > LADDER_ENTRY_CHARS:
        text = text[: LADDER_ENTRY_CHARS - 1].rstrip() + "…"
    return f"{label}: {text}"


def impressions_ladder(
    daily: dict[str, Any] | None, weekly: dict[str, Any] | None, monthly: dict[str, Any] | None, budget: int
) -> str:
    """Yesterday, then the week, then the month, each entry at most
    ``LADDER_ENTRY_CHARS`` after its label, within ``budget`` characters; what does not
    fit is trimmed from the month first, then the week, then the day."""
    lines = [
        _entry(f"Yesterday ({daily['date']})" if daily else "", daily),
        _entry(f"Week {weekly['week']}" if weekly else "", weekly),
        _entry(f"Month {monthly['month']}" if monthly else "", monthly),
    ]
    header = "[Impressions]"
    for index in (2, 1, 0):
        if lines[index] is None:
            continue
        used = len(header) + sum(len(line) + 1 for line in lines if line)
        if used <= budget:
            break
        room = len(lines[index]) - (used - budget)  # type: ignore[arg-type]
        lines[index] = lines[index][: room - 1].rstrip() + "…" if room > 20 else None  # type: ignore[index]
    kept = [line for line in lines if line]
    return "\n".join([header, *kept]) if kept else ""


class Boot:
    def __init__(
        self, db: Database, clock: Clock, config: MemoryConfig, plans: Plans, moods: Moods, todos: Todos
    ) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.plans = plans
        self.moods = moods
        self.todos = todos

    async def package(self, namespace: str) -> dict[str, Any]:
        time_zone = self.config.dream_time_zone
        today = local_date(self.clock.now(), time_zone)
        yesterday = today - timedelta(days=1)
        logs = LogStore(self.db)
        daily = await logs.daily(namespace, yesterday.isoformat())
        weekly = await logs.newest_weekly(namespace)
        monthly = await logs.newest_monthly(namespace)
        start, end = day_bounds(today, time_zone)
        precious, _ = await PreciousStore(self.db).page(namespace, limit=NEWEST_PRECIOUS, cursor=None)
        return {
            "namespace": namespace,
            "date": today.isoformat(),
            "time_zone": time_zone,
            "impressions": {
                "text": impressions_ladder(daily, weekly, monthly, self.config.impression_ladder_max_chars),
                "daily": daily,
                "weekly": weekly,
                "monthly": monthly,
            },
            "precious": precious,
            "glossary": await GlossaryStore(self.db).entries(namespace),
            "today_messages": await MessageStore(self.db).between(
                namespace, since=start, until=end, limit=TODAY_MESSAGES
            ),
            "counts": await MemoryStore(self.db).count_active_by_type(namespace),
            "plans": [
                {k: getattr(p, k) for k in ("id", "content", "valid_to", "plan_status", "fact_key", "created_at")}
                for p in await self.plans.upcoming(namespace, UPCOMING_PLANS)
            ],
            "moods": await self.moods.overview(namespace),
            "todos": await self.todos.stats(namespace),
        }

    async def diary(self, namespace: str, day: str) -> dict[str, Any] | None:
        return await LogStore(self.db).daily(namespace, day)

    async def recent_diary(self, namespace: str) -> list[dict[str, Any]]:
        """Today's and yesterday's entries, those that exist, newest first."""
        today = local_date(self.clock.now(), self.config.dream_time_zone)
        days = [today.isoformat(), (today - timedelta(days=1)).isoformat()]
        return await LogStore(self.db).dailies(namespace, days)
