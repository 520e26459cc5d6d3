"""SQL for shared memories (``memory_shares``) and their own audit log (``memory_share_events``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ports import Database, SqlValue, Statement
from .sql import live_sql, placeholders

SHARE_COLUMNS = (
    "id",
    "memory_id",
    "source_namespace",
    "target_namespace",
    "status",
    "proposed_by",
    "decided_by",
    "note",
    "reason",
    "created_at",
    "updated_at",
    "decided_at",
)
_SELECT = f"SELECT {', '.join(SHARE_COLUMNS)} FROM memory_shares"
OPEN_STATUSES = ("proposed", "approved")


def visible_in(namespaces: Sequence[str], *, shared: bool) -> tuple[str, tuple[SqlValue, ...]]:
    """A WHERE clause (and its parameters) on the memories ``r`` of these namespaces and,
    when ``shared``, those approved-shared into one of them (what recall there may see)."""
    marks = placeholders(len(namespaces))
    if not shared:
        return f"r.namespace IN ({marks})", tuple(namespaces)
    return (
        f"(r.namespace IN ({marks}) OR r.id IN (SELECT memory_id FROM memory_shares "
        f"WHERE status = 'approved' AND target_namespace IN ({marks})))",
        (*namespaces, *namespaces),
    )


class ShareStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(share: dict[str, Any]) -> Statement:
        return Statement(
            f"INSERT INTO memory_shares ({', '.join(SHARE_COLUMNS)}) VALUES ({placeholders(len(SHARE_COLUMNS))})",
            tuple(share.get(c) for c in SHARE_COLUMNS),
        )

    @staticmethod
    def move(share_id: str, before: Sequence[str], status: str, actor: str, reason: str | None, at: str) -> Statement:
        """From one of ``before`` to ``status``; changes nothing when the share has moved on."""
        return Statement(
            "UPDATE memory_shares SET status = ?, decided_by = ?, reason = COALESCE(?, reason), decided_at = ?, "
            f"updated_at = ? WHERE id = ? AND status IN ({placeholders(len(before))})",
            (status, actor, reason, at, at, share_id, *before),
        )

    @staticmethod
    def event(share_id: str, event: str, actor: str, reason: str | None, at: str) -> Statement:
        """An audit event, written only when the share stands as the event says (so a
        ``move`` that changed nothing leaves no event behind it in the same batch)."""
        return Statement(
            "INSERT INTO memory_share_events (share_id, event, actor, reason, created_at) "
            "SELECT id, ?, ?, ?, ? FROM memory_shares WHERE id = ? AND updated_at = ?",
            (event, actor, reason, at, share_id, at),
        )

    async def get(self, share_id: str) -> dict[str, Any] | None:
        return await self.db.first(f"{_SELECT} WHERE id = ?", (share_id,))

    async def open_share(self, memory_id: str, target: str) -> dict[str, Any] | None:
        return await self.db.first(
            f"{_SELECT} WHERE memory_id = ? AND target_namespace = ? AND status IN ('proposed', 'approved')",
            (memory_id, target),
        )

    async def proposed_since(self, source: str, since: str) -> int:
        row = await self.db.first(
            "SELECT COUNT(*) AS n FROM memory_shares WHERE source_namespace = ? AND created_at >= ?", (source, since)
        )
        return int(row["n"]) if row else 0

    async def listed(self, namespace: str | None, statuses: Sequence[str], limit: int) -> list[dict[str, Any]]:
        """Newest first; with a namespace, the shares out of it and into it."""
        where = f"status IN ({placeholders(len(statuses))})"
        params: list[SqlValue] = [*statuses]
        if namespace is not None:
            where += " AND (source_namespace = ? OR target_namespace = ?)"
            params += [namespace, namespace]
        return await self.db.all(f"{_SELECT} WHERE {where} ORDER BY updated_at DESC, id DESC LIMIT ?", (*params, limit))

    async def approved_into(self, namespaces: Sequence[str], limit: int) -> list[dict[str, Any]]:
        """The approved shares into these namespaces whose memory is live, the newest
        approval first; a share whose memory has died is never read here."""
        rows = await self.db.all(
            "SELECT s.id AS id, s.memory_id AS memory_id, s.target_namespace AS target_namespace "
            "FROM memory_shares s JOIN memories m ON m.id = s.memory_id "
            f"WHERE s.status = 'approved' AND s.target_namespace IN ({placeholders(len(namespaces))}) "
            f"AND {live_sql('m')} ORDER BY s.decided_at DESC LIMIT ?",
            (*namespaces, limit),
        )
        return rows

    async def orphaned(self, limit: int, share_id: str | None = None) -> list[dict[str, Any]]:
        """Open shares (all, or this one) whose memory is gone or no longer live, with
        what became of it."""
        only, params = ("AND s.id = ? ", (share_id,)) if share_id else ("", ())
        return await self.db.all(
            "SELECT s.id AS id, m.id AS memory, m.status AS status, m.version_status AS version_status, "
            "m.superseded_by AS superseded_by FROM memory_shares s LEFT JOIN memories m ON m.id = s.memory_id "
            "WHERE s.status IN ('proposed', 'approved') "
            f"AND (m.id IS NULL OR NOT ({live_sql('m')})) {only}LIMIT ?",
            (*params, limit),
        )

    async def events(self, share_id: str) -> list[dict[str, Any]]:
        return await self.db.all(
            "SELECT id, event, actor, reason, created_at FROM memory_share_events WHERE share_id = ? ORDER BY id",
            (share_id,),
        )
