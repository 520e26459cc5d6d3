"""SQL for ``processing_cursors``: where each background job got to (the dream per
namespace and day, the last retention run, the GitHub days pulled)."""

from __future__ import annotations

from ..ports import Database, Statement


class CursorStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, name: str) -> str | None:
        row = await self.db.first("SELECT cursor FROM processing_cursors WHERE name = ?", (name,))
        return row["cursor"] if row else None

    @staticmethod
    def put(name: str, namespace: str, value: str, at: str) -> Statement:
        return Statement(
            "INSERT INTO processing_cursors (name, namespace, cursor, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at",
            (name, namespace, value, at),
        )

    @staticmethod
    def delete(name: str) -> Statement:
        return Statement("DELETE FROM processing_cursors WHERE name = ?", (name,))
