"""Week blocks: a hit from an older week brings that week's diary summary along.

The impressions ladder always shows the newest week. When recall returns a memory or an
episode from an older ISO week, the turn's block also shows what that week was about
(its ``weekly_log`` summary), once per week, at most RECALL_WEEK_LINES weeks, in the
order of their best hit, each as long as a ladder entry. The summaries are never hits
themselves: weekly_log is never embedded nor searched (the reference's isolation
invariant); a summary is only read by the week of a hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from ..domain.diary import iso_week
from ..ports import Database
from ..store.logs import LogStore
from .ladder import LADDER_ENTRY_CHARS, clip


class WeekBlocks:
    def __init__(self, db: Database, lines: int) -> None:
        self.logs = LogStore(db)
        self.lines = lines

    async def for_hits(self, namespace: str, days: Sequence[tuple[int, str]]) -> list[str]:
        """The week lines for hits given as (number in the block, the day its line shows),
        most relevant first: ``Week 2026-W10 (the week of 2, 5): <summary>``."""
        if not self.lines:
            return []
        numbers: dict[str, list[int]] = {}
        for number, day in days:
            try:
                week = iso_week(date.fromisoformat(day))
            except ValueError:  # a day that does not parse has no week
                continue
            numbers.setdefault(week, []).append(number)
        if not numbers:
            return []
        summaries = {w.week: w for w in await self.logs.weeklies_before_newest(namespace, list(numbers))}
        lines = []
        for week, hits in numbers.items():
            summary = summaries.get(week)
            text = summary and (summary.summary or summary.title)
            if text:
                of = ", ".join(str(n) for n in hits)
                lines.append(f"Week {week} (the week of {of}): {clip(' '.join(text.split()), LADDER_ENTRY_CHARS)}")
        return lines[: self.lines]
