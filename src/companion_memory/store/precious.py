"""SQL for precious memories: verbatim text, append-only."""

from __future__ import annotations

import uuid

from ..domain.precious import Precious
from ..ports import Database
from .pagination import decode_cursor, page_of

_SELECT = "SELECT id, namespace, content, note, source, created_at FROM precious"


class PreciousStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, namespace: str, content: str, note: str | None, source: str, at: str) -> Precious:
        kept = Precious(
            id=str(uuid.uuid4()), namespace=namespace, content=content, note=note, source=source, created_at=at
        )
        await self.db.run(
            "INSERT INTO precious (id, namespace, content, note, source, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (kept.id, namespace, content, note, source, at),
        )
        return kept

    async def get(self, precious_id: str) -> Precious | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (precious_id,))
        return Precious(**row) if row else None

    async def page(self, namespace: str, *, limit: int, cursor: str | None) -> tuple[list[Precious], str | None]:
        where, params = "namespace = ?", [namespace]
        if cursor:
            created_at, id_ = decode_cursor(cursor)
            where += " AND (created_at < ? OR (created_at = ? AND id < ?))"
            params += [created_at, created_at, id_]
        rows = await self.db.all(
            f"{_SELECT} WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit + 1)
        )
        page, next_cursor = page_of(rows, limit, "created_at")
        return [Precious(**row) for row in page], next_cursor

    async def newest_contents(self, namespace: str, limit: int) -> list[str]:
        rows = await self.db.all(
            "SELECT content FROM precious WHERE namespace = ? ORDER BY created_at DESC LIMIT ?", (namespace, limit)
        )
        return [r["content"] for r in rows]

    async def delete(self, precious_id: str) -> bool:
        result = await self.db.run("DELETE FROM precious WHERE id = ?", (precious_id,))
        return result.changes > 0
