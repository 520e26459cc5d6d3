"""SQL for shared memories (``memory_shares``) and their own audit log (``memory_share_events``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..domain.share import SHARE_FIELDS, Share, ShareEvent
from ..ports import Database, SqlValue, Statement
from .sql import live_sql, placeholders

_SELECT = f"SELECT {', '.join(SHARE_FIELDS)} FROM memory_shares"
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


@dataclass(frozen=True)
class Orphan:
    """An open share whose memory is gone (``status`` None) or no longer live."""

    share_id: str
    status: str | None
    version_status: str | None
    superseded_by: str | None


class ShareStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(share: Share) -> Statement:
        return Statement(
            f"INSERT INTO memory_shares ({', '.join(SHARE_FIELDS)}) VALUES ({placeholders(len(SHARE_FIELDS))})",
            tuple(getattr(share, c) for c in SHARE_FIELDS),
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

    async def get(self, share_id: str) -> Share | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (share_id,))
        return Share(**row) if row else None

    async def open_share(self, memory_id: str, target: str) -> Share | None:
        row = await self.db.first(
            f"{_SELECT} WHERE memory_id = ? AND target_namespace = ? AND status IN ('proposed', 'approved')",
            (memory_id, target),
        )
        return Share(**row) if row else None

    async def proposed_since(self, source: str, since: str) -> int:
        row = await self.db.first(
            "SELECT COUNT(*) AS n FROM memory_shares WHERE source_namespace = ? AND created_at >= ?", (source, since)
        )
        return int(row["n"]) if row else 0

    async def listed(self, namespace: str | None, statuses: Sequence[str], limit: int) -> list[Share]:
        """Newest first; with a namespace, the shares out of it and into it."""
        where = f"status IN ({placeholders(len(statuses))})"
        params: list[SqlValue] = [*statuses]
        if namespace is not None:
            where += " AND (source_namespace = ? OR target_namespace = ?)"
            params += [namespace, namespace]
        rows = await self.db.all(f"{_SELECT} WHERE {where} ORDER BY updated_at DESC, id DESC LIMIT ?", (*params, limit))
        return [Share(**row) for row in rows]

    async def approved_into(self, namespaces: Sequence[str], limit: int) -> list[Share]:
        """The approved shares into these namespaces whose memory is live, the newest
        approval first; a share whose memory has died is never read here."""
        rows = await self.db.all(
            f"SELECT {', '.join(f's.{c} AS {c}' for c in SHARE_FIELDS)} "
            "FROM memory_shares s JOIN memories m ON m.id = s.memory_id "
            f"WHERE s.status = 'approved' AND s.target_namespace IN ({placeholders(len(namespaces))}) "
            f"AND {live_sql('m')} ORDER BY s.decided_at DESC LIMIT ?",
            (*namespaces, limit),
        )
        return [Share(**row) for row in rows]

    async def orphaned(self, limit: int, share_id: str | None = None) -> list[Orphan]:
        """Open shares (all, or this one) whose memory is gone or no longer live, with
        what became of it."""
        only, params = ("AND s.id = ? ", (share_id,)) if share_id else ("", ())
        rows = await self.db.all(
            "SELECT s.id AS share_id, m.status AS status, m.version_status AS version_status, "
            "m.superseded_by AS superseded_by FROM memory_shares s LEFT JOIN memories m ON m.id = s.memory_id "
            "WHERE s.status IN ('proposed', 'approved') "
            f"AND (m.id IS NULL OR NOT ({live_sql('m')})) {only}LIMIT ?",
            (*params, limit),
        )
        return [Orphan(**row) for row in rows]

    async def events(self, share_id: str) -> list[ShareEvent]:
        rows = await self.db.all(
            "SELECT id, event, actor, reason, created_at FROM memory_share_events WHERE share_id = ? ORDER BY id",
            (share_id,),
        )
        return [ShareEvent(**row) for row in rows]
