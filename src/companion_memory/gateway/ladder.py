"""The impressions ladder: yesterday's diary entry, the newest week, the newest month, as
a few short lines. It is the stable part of what the companion is told; it never goes
through recall and is never embedded."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from ..clock import local_date
from ..domain.diary import DiaryDay, MonthSummary, WeekSummary
from ..ports import Clock, Database
from ..store.logs import LogStore

# Characters of each ladder entry after its label: one long day (a 2,000-character diary
# entry) must not push the week and the month out of the budget.
LADDER_ENTRY_CHARS = 100


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _entry(label: str, entry: DiaryDay | WeekSummary | MonthSummary | None) -> str | None:
    if entry is None or not (entry.title or entry.summary):
        return None
    title, summary = entry.title or "", entry.summary or ""
    text = f"{title} — {summary}" if title and summary else title or summary
    return f"{label}: {clip(text, LADDER_ENTRY_CHARS)}"


def impressions_ladder(
    daily: DiaryDay | None, weekly: WeekSummary | None, monthly: MonthSummary | None, budget: int
) -> str:
    """Yesterday, then the week, then the month, each entry at most
    ``LADDER_ENTRY_CHARS`` after its label, within ``budget`` characters; what does not
    fit is trimmed from the month first, then the week, then the day."""
    lines = [
        _entry(f"Yesterday ({daily.date})" if daily else "", daily),
        _entry(f"Week {weekly.week}" if weekly else "", weekly),
        _entry(f"Month {monthly.month}" if monthly else "", monthly),
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


@dataclass(frozen=True)
class LadderRead:
    text: str
    daily: DiaryDay | None
    weekly: WeekSummary | None
    monthly: MonthSummary | None


class Ladder:
    def __init__(self, db: Database, clock: Clock, time_zone: str, max_chars: int) -> None:
        self.logs = LogStore(db)
        self.clock = clock
        self.time_zone = time_zone
        self.max_chars = max_chars

    async def read(self, namespace: str) -> LadderRead:
        yesterday = local_date(self.clock.now(), self.time_zone) - timedelta(days=1)
        daily, weekly, monthly = await asyncio.gather(
            self.logs.daily(namespace, yesterday.isoformat()),
            self.logs.newest_weekly(namespace),
            self.logs.newest_monthly(namespace),
        )
        return LadderRead(impressions_ladder(daily, weekly, monthly, self.max_chars), daily, weekly, monthly)
