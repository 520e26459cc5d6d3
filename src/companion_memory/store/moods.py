"""SQL for the mood timeline."""

from __future__ import annotations

import uuid
from typing import Any

from ..ports import Database, Statement
from .stored_values import readable

MOOD_COLUMNS = (
    "id",
    "namespace",
    "whose",
    "label",
    "reason",
    "intensity",
    "felt_at",
    "source",
    "source_message_id",
    "created_at",
)
_SELECT = f"SELECT {', '.join(MOOD_COLUMNS)} FROM moods"


def mood_row(
    namespace: str,
    whose: str,
    label: str,
    reason: str,
    intensity: float,
    felt_at: str,
    source: str,
    source_message_id: str | None,
    at: str,
) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "namespace": namespace,
        "whose": whose,
        "label": label,
        "reason": reason,
        "intensity": intensity,
        "felt_at": felt_at,
        "source": source,
        "source_message_id": source_message_id,
        "created_at": at,
    }


class MoodStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(row: dict[str, Any]) -> Statement:
        """A mood read again from the same message (a dream run again) is not written twice."""
        return Statement(
            f"INSERT INTO moods ({', '.join(MOOD_COLUMNS)}) VALUES ({', '.join('?' * len(MOOD_COLUMNS))}) "
            "ON CONFLICT (namespace, whose, label, source_message_id) WHERE source_message_id IS NOT NULL DO NOTHING",
            tuple(row[c] for c in MOOD_COLUMNS),
        )

    async def add(self, row: dict[str, Any]) -> dict[str, Any]:
        await self.db.batch([self.insert(row)])
        return row

    async def since(self, namespace: str, since: str, whose: str | None, limit: int) -> list[dict[str, Any]]:
        """Entries felt at or after ``since``, the newest first."""
        where, params = "namespace = ? AND felt_at >= ?", [namespace, since]
        if whose:
            where += " AND whose = ?"
            params.append(whose)
        rows = await self.db.all(f"{_SELECT} WHERE {where} ORDER BY felt_at DESC, id DESC LIMIT ?", (*params, limit))
        # "5-01-01T…" sorts after every stored time: read, it would be today's mood.
        return readable("moods", rows)
