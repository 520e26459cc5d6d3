"""SQL for the dream: its cursor over a day's messages, its runs, and the diary day."""

from __future__ import annotations

from typing import Any

from ..domain.dream_run import DREAM_RUN_FIELDS, DreamRun
from ..domain.message import Message
from ..ports import Database, Statement
from .cursors import CursorStore
from .sql import to_json

# A namespace's messages between two times, after a cursor's (created_at, id).
_AFTER = (
    "FROM messages WHERE namespace = ? AND created_at >= ? AND created_at < ? "
    "AND (created_at > ? OR (created_at = ? AND id > ?))"
)


class DreamStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.cursors = CursorStore(db)

    async def cursor(self, name: str) -> tuple[str, str]:
        """(created_at, id) of the last message the dream finished, or the start."""
        created_at, _, id_ = (await self.cursors.get(name) or "").partition("|")
        return created_at, id_

    @staticmethod
    def advance(name: str, namespace: str, created_at: str, id_: str, at: str) -> Statement:
        return CursorStore.put(name, namespace, f"{created_at}|{id_}", at)

    async def messages_after(
        self, namespace: str, since: str, until: str, after: tuple[str, str], limit: int
    ) -> list[Message]:
        created_at, id_ = after
        rows = await self.db.all(
            f"SELECT id, role, content, created_at {_AFTER} ORDER BY created_at, id LIMIT ?",
            (namespace, since, until, created_at, created_at, id_, limit),
        )
        return [Message(**r) for r in rows]

    async def unread_count(self, namespace: str, since: str, until: str, after: tuple[str, str]) -> int:
        created_at, id_ = after
        row = await self.db.first(
            f"SELECT COUNT(*) AS n {_AFTER}", (namespace, since, until, created_at, created_at, id_)
        )
        return int(row["n"]) if row else 0

    async def days_with_messages(self, since: str, until: str, namespace: str | None) -> list[tuple[str, str]]:
        """(namespace, UTC day) of the messages between ``since`` and ``until``, in one
        namespace or in all."""
        rows = await self.db.all(
            "SELECT DISTINCT namespace, substr(created_at, 1, 10) AS day FROM messages "
            "WHERE created_at >= ? AND created_at < ? AND (? IS NULL OR namespace = ?)",
            (since, until, namespace, namespace),
        )
        return [(r["namespace"], r["day"]) for r in rows]

    async def namespaces_with_messages(self, since: str, until: str) -> list[str]:
        rows = await self.db.all(
            "SELECT DISTINCT namespace FROM messages WHERE created_at >= ? AND created_at < ? ORDER BY namespace",
            (since, until),
        )
        return [r["namespace"] for r in rows]

    @staticmethod
    def upsert_daily(id_: str, namespace: str, day: str, title: str, summary: str, count: int, at: str) -> Statement:
        """A later batch of the same day adds to the entry instead of replacing it."""
        return Statement(
            "INSERT INTO daily_log (id, namespace, date, title, summary, message_count, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, date) DO UPDATE SET "
            "summary = daily_log.summary || ' ' || excluded.summary, "
            "message_count = daily_log.message_count + excluded.message_count, updated_at = excluded.updated_at",
            (id_, namespace, day, title, summary, count, at, at),
        )

    @staticmethod
    def record_run(run: dict[str, Any]) -> Statement:
        return Statement(
            "INSERT INTO dream_runs (id, namespace, date, status, dry_run, messages_read, candidates_created, counts, error, "
            "started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run["id"],
                run["namespace"],
                run["date"],
                run["status"],
                int(run["dry_run"]),
                run["messages_read"],
                run["candidates_created"],
                to_json({**run["counts"], "extractor": run["extractor"]}),
                run["error"],
                run["started_at"],
                run["finished_at"],
            ),
        )

    async def recent_runs(self, limit: int) -> list[DreamRun]:
        rows = await self.db.all(
            f"SELECT {', '.join(DREAM_RUN_FIELDS)} FROM dream_runs ORDER BY started_at DESC LIMIT ?", (limit,)
        )
        return [DreamRun(**row) for row in rows]
