"""Where a row lives: the namespace of a memory, a todo, a share... named by its id, and
the namespaces it is shared into, for the check of a key's namespace bindings
(application/bindings.py)."""

from __future__ import annotations

from typing import Literal

from ..ports import Database
from .sql import live_sql

Table = Literal[
    "memories", "glossary", "people", "precious", "todos", "context_folds", "memory_shares", "episodes", "messages"
]

_HOME: dict[Table, str] = {
    "memories": "SELECT namespace AS home FROM memories WHERE id = ?",
    "glossary": "SELECT namespace AS home FROM glossary WHERE id = ?",
    "people": "SELECT namespace AS home FROM people WHERE id = ?",
    "precious": "SELECT namespace AS home FROM precious WHERE id = ?",
    "todos": "SELECT namespace AS home FROM todos WHERE id = ?",
    "context_folds": "SELECT namespace AS home FROM context_folds WHERE id = ?",
    # A share belongs to the namespace it shares out of; the one it shares into sees it.
    "memory_shares": "SELECT source_namespace AS home FROM memory_shares WHERE id = ?",
    "episodes": "SELECT namespace AS home FROM episodes WHERE id = ?",
    "messages": "SELECT namespace AS home FROM messages WHERE id = ?",
}
_SEEN_IN: dict[Table, str] = {
    # What recall there sees: an approved share of a live memory (memory/shares.py).
    "memories": "SELECT s.target_namespace AS seen FROM memory_shares s JOIN memories m ON m.id = s.memory_id "
    f"WHERE s.memory_id = ? AND s.status = 'approved' AND {live_sql('m')}",
    "memory_shares": "SELECT target_namespace AS seen FROM memory_shares WHERE id = ?",
}


class PlaceStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def home(self, table: Table, row_id: str) -> str | None:
        """The namespace the row lives in; None when there is no such row."""
        row = await self.db.first(_HOME[table], (row_id,))
        return None if row is None else str(row["home"])

    async def seen_in(self, table: Table, row_id: str) -> tuple[str, ...]:
        """The other namespaces where the row is seen."""
        if table not in _SEEN_IN:
            return ()
        return tuple(str(row["seen"]) for row in await self.db.all(_SEEN_IN[table], (row_id,)))
