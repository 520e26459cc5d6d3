"""SQL for the nightly consolidation: what changed since the last pass, decaying edges,
and the history events an undo reads back."""

from __future__ import annotations

from ..domain.memory import Memory
from ..domain.memory_event import MemoryEvent
from ..domain.relation import Relation
from ..ports import Database, Statement
from .cursors import CursorStore
from .memories import _SELECT, RELATION_SELECT, memories_from_rows
from .sql import from_json, live_sql
from .stored_values import readable

# Version history is not an association that fades, and an open contradiction waits for
# the owner's decision however old it is.
_LASTING_RELATIONS = ("supersedes", "contradicts")


class ConsolidationStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def changed_since(self, updated_at: str, after_id: str | None, limit: int) -> list[Memory]:
        """Live memories changed after ``updated_at`` (or at it, with an id after ``after_id``:
        an import writes many rows in one moment), oldest change first."""
        rows = await self.db.all(
            f"{_SELECT} WHERE {live_sql()} "
            "AND (updated_at > ? OR (updated_at = ? AND id > ?)) ORDER BY updated_at, id LIMIT ?",
            (updated_at, updated_at, after_id, limit),
        )
        return memories_from_rows(rows)

    async def live_of_type(self, namespace: str, memory_type: str, limit: int) -> list[Memory]:
        rows = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND type = ? AND {live_sql()} ORDER BY id LIMIT ?",
            (namespace, memory_type, limit),
        )
        return memories_from_rows(rows)

    async def decaying_relations(self, after: str, limit: int) -> tuple[list[Relation], str | None]:
        """Edges that fade, in id order after ``after``, that can be read (one whose times
        cannot is logged and left out), and the id to read on from (None after the last page)."""
        rows = await self.db.all(
            f"{RELATION_SELECT} WHERE relation NOT IN (?, ?) AND id > ? ORDER BY id LIMIT ?",
            (*_LASTING_RELATIONS, after, limit),
        )
        last = rows[-1]["id"] if rows else None
        return [Relation(**r) for r in readable("memory_relations", rows)], last

    @staticmethod
    def set_weight(relation_id: str, weight: float, at: str) -> Statement:
        return Statement(
            "UPDATE memory_relations SET weight = ?, weighed_at = ? WHERE id = ?", (weight, at, relation_id)
        )

    async def event(self, event_id: int) -> MemoryEvent | None:
        row = await self.db.first(
            "SELECT id, namespace, memory_id, event, actor, detail, created_at FROM memory_events WHERE id = ?",
            (event_id,),
        )
        return MemoryEvent(**{**row, "detail": from_json(row["detail"], {})}) if row else None

    async def undone(self, memory_id: str, event_id: int) -> bool:
        """Whether the consolidation event ``event_id`` of this memory was already undone."""
        rows = await self.db.all(
            "SELECT detail FROM memory_events WHERE memory_id = ? AND event = 'consolidation_undone'", (memory_id,)
        )
        return any(from_json(r["detail"], {}).get("event_id") == event_id for r in rows)

    async def last_run(self) -> str | None:
        return await CursorStore(self.db).get("consolidation")

    @staticmethod
    def record_run(cursor: str, at: str) -> Statement:
        return CursorStore.put("consolidation", "*", cursor, at)
