"""SQL for the diary: daily, weekly and monthly logs."""

from __future__ import annotations

from typing import Any, Sequence

from ..ports import Database
from .sql import placeholders

_DAILY = "SELECT id, namespace, date, title, summary, message_count, created_at, updated_at FROM daily_log"


class LogStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def daily(self, namespace: str, day: str) -> dict[str, Any] | None:
        return await self.db.first(f"{_DAILY} WHERE namespace = ? AND date = ?", (namespace, day))

    async def dailies(self, namespace: str, days: Sequence[str]) -> list[dict[str, Any]]:
        return await self.db.all(
            f"{_DAILY} WHERE namespace = ? AND date IN ({placeholders(len(days))}) ORDER BY date DESC", (namespace, *days)
        )

    async def newest_weekly(self, namespace: str) -> dict[str, Any] | None:
        return await self.db.first(
            "SELECT week, start_date, end_date, title, summary FROM weekly_log WHERE namespace = ? ORDER BY week DESC LIMIT 1",
            (namespace,),
        )

    async def newest_monthly(self, namespace: str) -> dict[str, Any] | None:
        return await self.db.first(
            "SELECT month, title, summary FROM monthly_log WHERE namespace = ? ORDER BY month DESC LIMIT 1", (namespace,)
        )
