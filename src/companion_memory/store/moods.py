"""SQL for the mood timeline."""

from __future__ import annotations

import uuid

from ..domain.mood import MOOD_FIELDS, Mood
from ..ports import Database, Statement
from .sql import placeholders
from .stored_values import readable

_SELECT = f"SELECT {', '.join(MOOD_FIELDS)} FROM moods"


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
) -> Mood:
    return Mood(
        id=str(uuid.uuid4()),
        namespace=namespace,
        whose=whose,
        label=label,
        reason=reason,
        intensity=intensity,
        felt_at=felt_at,
        source=source,
        source_message_id=source_message_id,
        created_at=at,
    )


class MoodStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(mood: Mood) -> Statement:
        """A mood read again from the same message (a dream run again) is not written twice."""
        return Statement(
            f"INSERT INTO moods ({', '.join(MOOD_FIELDS)}) VALUES ({placeholders(len(MOOD_FIELDS))}) "
            "ON CONFLICT (namespace, whose, label, source_message_id) WHERE source_message_id IS NOT NULL DO NOTHING",
            tuple(getattr(mood, c) for c in MOOD_FIELDS),
        )

    async def add(self, mood: Mood) -> Mood:
        await self.db.batch([self.insert(mood)])
        return mood

    async def since(self, namespace: str, since: str, whose: str | None, limit: int) -> list[Mood]:
        """Entries felt at or after ``since``, the newest first."""
        where, params = "namespace = ? AND felt_at >= ?", [namespace, since]
        if whose:
            where += " AND whose = ?"
            params.append(whose)
        rows = await self.db.all(f"{_SELECT} WHERE {where} ORDER BY felt_at DESC, id DESC LIMIT ?", (*params, limit))
        # "5-01-01T…" sorts after every stored time: read, it would be today's mood.
        return [Mood(**row) for row in readable("moods", rows)]
