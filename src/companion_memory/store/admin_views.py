"""Read-only SQL for the admin panel: the star map's graph and the diary browser."""

from __future__ import annotations

from dataclasses import fields
from typing import Literal

from ..domain.diary import DiaryDay, MonthEntry, WeekEntry
from ..domain.star_map import StarEdge, StarGraph, StarNode
from ..pacing import HeavyReads
from ..ports import Database
from .sql import from_json, live_sql

Period = Literal["day", "week", "month"]

_NODE = (
    "SELECT id, type, content, fact_key, importance, confidence, pinned, tags, recall_count, updated_at "
    f"FROM memories WHERE namespace = ? AND {live_sql()}"
)
# Edges whose both ends are live; version history ('supersedes') points at dead rows and drops out.
_EDGES = (
    "SELECT r.id AS id, r.source_id AS source_id, r.target_id AS target_id, r.relation AS relation, r.weight AS weight "
    "FROM memory_relations r JOIN memories s ON s.id = r.source_id JOIN memories t ON t.id = r.target_id "
    "WHERE r.namespace = ? AND s.status = 'active' AND t.status = 'active' ORDER BY r.created_at LIMIT ?"
)
DiaryEntry = DiaryDay | WeekEntry | MonthEntry
# (table, key column, the entity) per period; each key sorts in time order as text.
_DIARY: dict[str, tuple[str, str, type[DiaryEntry]]] = {
    "day": ("daily_log", "date", DiaryDay),
    "week": ("weekly_log", "week", WeekEntry),
    "month": ("monthly_log", "month", MonthEntry),
}
MAX_EDGES = 5000


class AdminViews:
    def __init__(self, db: Database, heavy: HeavyReads) -> None:
        self.db = db
        self.heavy = heavy

    async def graph(self, namespace: str, *, types: list[str], limit: int) -> StarGraph:
        """The most important live memories and the relation edges among them, a slice
        at a time (``pacing``)."""
        where, params = _NODE, [namespace]
        if types:
            where += f" AND type IN ({', '.join('?' * len(types))})"
            params += types
        rows = await self.db.all(
            f"{where} ORDER BY pinned DESC, importance DESC, updated_at DESC LIMIT ?", (*params, limit + 1)
        )
        nodes = [
            StarNode(**{**r, "pinned": bool(r["pinned"]), "tags": from_json(r["tags"], [])})
            async for r in self.heavy.paced(rows[:limit])
        ]
        ids = {n.id for n in nodes}
        edges = [
            StarEdge(**e)
            async for e in self.heavy.paced(await self.db.all(_EDGES, (namespace, MAX_EDGES)))
            if e["source_id"] in ids and e["target_id"] in ids
        ]
        return StarGraph(nodes=nodes, edges=edges, truncated=len(rows) > limit)

    async def diary(
        self, namespace: str, period: Period, *, limit: int, before: str | None
    ) -> tuple[list[DiaryEntry], str | None]:
        """Entries of one period kind, newest first; ``before`` (a key) pages back in time."""
        table, key, entry = _DIARY[period]
        where, params = "namespace = ?", [namespace]
        if before:
            where += f" AND {key} < ?"
            params.append(before)
        columns = ", ".join(f.name for f in fields(entry))
        rows = await self.db.all(
            f"SELECT {columns} FROM {table} WHERE {where} ORDER BY {key} DESC LIMIT ?", (*params, limit + 1)
        )
        page = rows[:limit]
        return [entry(**r) for r in page], page[-1][key] if len(rows) > limit else None
