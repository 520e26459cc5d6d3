"""SQL for her night dreams, and for the memories they are made from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..domain.night_dream import NIGHT_DREAM_FIELDS, Material, NightDream
from ..ports import Database, Statement
from .sql import chunks, live_sql, placeholders, read_stored_json, to_json
from .stored_values import readable

_SELECT = f"SELECT {', '.join(NIGHT_DREAM_FIELDS)} FROM night_dreams"
# Rules, and who she and the owner are, are no material for a dream.
NOT_MATERIAL = ("boundary", "identity", "persona")


def _dream(row: dict[str, Any]) -> NightDream:
    ids, _ = read_stored_json(row["material_ids"])
    return NightDream(**{**row, "material_ids": tuple(i for i in ids or () if isinstance(i, str))})


def _tags(text: str | None) -> tuple[str, ...]:
    tags, _ = read_stored_json(text)
    return tuple(t for t in tags or () if isinstance(t, str))


class NightDreamStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert(dream: NightDream) -> Statement:
        """A night's place taken already (a second run of the same night) is kept as it is."""
        values = {
            **{c: getattr(dream, c) for c in NIGHT_DREAM_FIELDS},
            "material_ids": to_json(list(dream.material_ids)),
        }
        return Statement(
            f"INSERT INTO night_dreams ({', '.join(NIGHT_DREAM_FIELDS)}) "
            f"VALUES ({placeholders(len(NIGHT_DREAM_FIELDS))}) ON CONFLICT (namespace, date, seq) DO NOTHING",
            tuple(values.values()),
        )

    @staticmethod
    def forget_made_of(memory_id: str) -> Statement:
        """Before a deleted memory's row is removed for good: the dreams made of it go too
        (they hold its words). A memory superseded, expired or archived leaves its dreams."""
        return Statement(
            "DELETE FROM night_dreams WHERE instr(material_ids, ?) > 0 "
            "AND EXISTS (SELECT 1 FROM memories WHERE id = ? AND status = 'deleted') "
            "AND CASE WHEN json_valid(material_ids) "
            "THEN EXISTS (SELECT 1 FROM json_each(night_dreams.material_ids) j WHERE j.value = ?) ELSE 0 END",
            (to_json(memory_id), memory_id, memory_id),
        )

    async def of_nights(self, namespace: str, dates: Sequence[str]) -> list[NightDream]:
        """The dreams of the nights after these days, the newest night first, each night in order."""
        if not dates:
            return []
        rows = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND date IN ({placeholders(len(dates))}) ORDER BY date DESC, seq",
            (namespace, *dates),
        )
        return [_dream(row) for row in readable("night_dreams", rows)]

    async def since(self, namespace: str, first_date: str, limit: int) -> list[NightDream]:
        """The dreams of the nights from ``first_date`` on, the newest night first."""
        rows = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND date >= ? ORDER BY date DESC, seq LIMIT ?",
            (namespace, first_date, limit),
        )
        return [_dream(row) for row in readable("night_dreams", rows)]

    async def dreaming_namespaces(self, since: str) -> list[str]:
        """The namespaces with a live memory written from ``since`` on."""
        rows = await self.db.all(
            f"SELECT DISTINCT namespace FROM memories WHERE {live_sql()} AND updated_at >= ? ORDER BY namespace",
            (since,),
        )
        return [row["namespace"] for row in rows]

    async def material(self, namespace: str, since: str, limit: int) -> list[Material]:
        """Live memories written from ``since`` on, the newest first, with the people each
        one is about; no rules, identity or persona."""
        rows = await self.db.all(
            "SELECT id, content, tags, importance, updated_at FROM memories "
            f"WHERE namespace = ? AND {live_sql()} AND updated_at >= ? "
            f"AND type NOT IN ({placeholders(len(NOT_MATERIAL))}) ORDER BY updated_at DESC, id LIMIT ?",
            (namespace, since, *NOT_MATERIAL, limit),
        )
        rows = readable("memories", rows)
        people = await self._people([row["id"] for row in rows])
        return [
            Material(
                id=row["id"],
                content=row["content"],
                tags=_tags(row["tags"]),
                people=tuple(people.get(row["id"], ())),
                importance=float(row["importance"]),
                updated_at=row["updated_at"],
            )
            for row in rows
        ]

    async def _people(self, memory_ids: Sequence[str]) -> dict[str, list[str]]:
        """Memory id → the names of the (unmerged) people it is about."""
        names: dict[str, list[str]] = {}
        for part in chunks(memory_ids):
            rows = await self.db.all(
                "SELECT pm.memory_id AS memory_id, p.name AS name FROM person_memories pm "
                "JOIN people p ON p.id = pm.person_id "
                f"WHERE pm.memory_id IN ({placeholders(len(part))}) AND p.status = 'active' "
                "ORDER BY p.familiarity DESC, p.name",
                tuple(part),
            )
            for row in rows:
                names.setdefault(row["memory_id"], []).append(row["name"])
        return names
