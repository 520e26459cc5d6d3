"""SQL for the diary: daily, weekly and monthly logs."""

from __future__ import annotations

from collections.abc import Sequence

from ..domain.diary import DiaryDay, MonthSummary, WeekSummary
from ..ports import Database, Statement
from .sql import chunks, placeholders
from .stored_values import day_sql, readable

_DAILY = "SELECT id, namespace, date, title, summary, message_count, created_at, updated_at FROM daily_log"
_WEEKLY = "SELECT week, start_date, end_date, title, summary FROM weekly_log"
_MONTHLY = "SELECT month, title, summary FROM monthly_log"


class LogStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def daily(self, namespace: str, day: str) -> DiaryDay | None:
        row = await self.db.first(f"{_DAILY} WHERE namespace = ? AND date = ?", (namespace, day))
        return DiaryDay(**row) if row else None

    async def dailies(self, namespace: str, days: Sequence[str]) -> list[DiaryDay]:
        rows = await self.db.all(
            f"{_DAILY} WHERE namespace = ? AND date IN ({placeholders(len(days))}) ORDER BY date DESC",
            (namespace, *days),
        )
        return [DiaryDay(**row) for row in rows]

    async def newest_weekly(self, namespace: str) -> WeekSummary | None:
        row = await self.db.first(
            f"{_WEEKLY} WHERE namespace = ? ORDER BY week DESC LIMIT 1",
            (namespace,),
        )
        return WeekSummary(**row) if row else None

    async def weeklies_before_newest(self, namespace: str, weeks: Sequence[str]) -> list[WeekSummary]:
        """These weeks' entries, except the newest entry of the namespace (the ladder's)."""
        found: list[WeekSummary] = []
        for part in chunks(weeks):
            rows = await self.db.all(
                f"{_WEEKLY} WHERE namespace = ? AND week IN ({placeholders(len(part))}) "
                "AND week < (SELECT MAX(week) FROM weekly_log WHERE namespace = ?)",
                (namespace, *part, namespace),
            )
            found += [WeekSummary(**row) for row in rows]
        return found

    async def newest_monthly(self, namespace: str) -> MonthSummary | None:
        row = await self.db.first(f"{_MONTHLY} WHERE namespace = ? ORDER BY month DESC LIMIT 1", (namespace,))
        return MonthSummary(**row) if row else None

    async def first_daily_dates(self) -> dict[str, str]:
        """namespace → its earliest diary day."""
        rows = await self.db.all(
            f"SELECT namespace, MIN(date) AS first FROM daily_log WHERE {day_sql('date')} "
            "GROUP BY namespace ORDER BY namespace"
        )
        return {r["namespace"]: r["first"] for r in rows}

    async def weekly_namespaces(self) -> list[str]:
        rows = await self.db.all("SELECT DISTINCT namespace FROM weekly_log ORDER BY namespace")
        return [r["namespace"] for r in rows]

    @staticmethod
    def insert_weekly(
        id_: str, namespace: str, week: str, start: str, end: str, title: str, summary: str, at: str
    ) -> Statement:
        return Statement(
            "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, week) DO NOTHING",
            (id_, namespace, week, start, end, title, summary, at, at),
        )

    @staticmethod
    def upsert_monthly(id_: str, namespace: str, month: str, title: str, summary: str, at: str) -> Statement:
        return Statement(
            "INSERT INTO monthly_log (id, namespace, month, title, summary, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (namespace, month) DO UPDATE SET summary = excluded.summary, updated_at = excluded.updated_at",
            (id_, namespace, month, title, summary, at, at),
        )

    @staticmethod
    def mark_rolled(id_: str, at: str) -> Statement:
        return Statement("UPDATE weekly_log SET rolled_up_at = ? WHERE id = ?", (at, id_))

    async def dailies_between(self, namespace: str, first: str, last: str) -> list[DiaryDay]:
        rows = await self.db.all(
            f"{_DAILY} WHERE namespace = ? AND date >= ? AND date <= ? ORDER BY date", (namespace, first, last)
        )
        return [DiaryDay(**row) for row in rows]

    async def weekly_exists(self, namespace: str, week: str) -> bool:
        return (
            await self.db.first("SELECT 1 AS x FROM weekly_log WHERE namespace = ? AND week = ?", (namespace, week))
            is not None
        )

    async def weeklies_to_roll(self, namespace: str, day: str) -> list[tuple[str, WeekSummary]]:
        """The weeks that ended before ``day`` and are in no month yet, each with its row's id."""
        rows = await self.db.all(
            "SELECT id, week, start_date, end_date, title, summary FROM weekly_log WHERE namespace = ? AND end_date < ? "
            "AND rolled_up_at IS NULL ORDER BY week",
            (namespace, day),
        )
        return [
            (row["id"], WeekSummary(**{k: v for k, v in row.items() if k != "id"}))
            for row in readable("weekly_log", rows)
        ]

    async def monthly(self, namespace: str, month: str) -> MonthSummary | None:
        row = await self.db.first(f"{_MONTHLY} WHERE namespace = ? AND month = ?", (namespace, month))
        return MonthSummary(**row) if row else None
