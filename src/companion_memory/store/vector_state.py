"""SQL for the one row that says which embedder filled the vector index, and from what
form of the text."""

from __future__ import annotations

from ..domain.vector_state import VectorState
from ..ports import Database


class VectorStateStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self) -> VectorState | None:
        row = await self.db.first(
            "SELECT model, dimensions, text_form, updated_at FROM vector_index_state WHERE id = 1"
        )
        return VectorState(**row) if row else None

    async def set(self, model: str, dimensions: int, text_form: str, at: str) -> None:
        await self.db.run(
            "INSERT INTO vector_index_state (id, model, dimensions, text_form, updated_at) VALUES (1, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET model = excluded.model, dimensions = excluded.dimensions, "
            "text_form = excluded.text_form, updated_at = excluded.updated_at",
            (model, dimensions, text_form, at),
        )
