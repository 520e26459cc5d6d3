"""SQL for retention: what is old enough to go."""

from __future__ import annotations

from typing import Any

from ..domain.types import PINNED_TYPES
from ..ports import Database, Statement
from .cursors import CursorStore
from .sql import placeholders


class RetentionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def delete_older(table: str, column: str, cutoff: str) -> Statement:
        return Statement(f"DELETE FROM {table} WHERE {column} < ?", (cutoff,))

    async def stale_memories(self, cutoff: str, limit: int) -> list[dict[str, Any]]:
        """Active memories nobody wrote, saw or recalled since ``cutoff``, except pinned ones,
        identity/persona and the rest of the permanent layer (boundaries)."""
        return await self.db.all(
            "SELECT id, namespace, status FROM memories WHERE status = 'active' AND pinned = 0 "
            f"AND type NOT IN ({placeholders(len(PINNED_TYPES))}) AND layer != 'permanent' "
            "AND COALESCE(MAX(updated_at, COALESCE(last_seen_at, ''), COALESCE(last_injected_at, '')), updated_at) < ? "
            "ORDER BY id LIMIT ?",
            (*PINNED_TYPES, cutoff, limit),
        )

    async def short_memories(self, min_chars: int, limit: int) -> list[dict[str, Any]]:
        """Active memories whose trimmed content is shorter than ``min_chars`` ("ok", "."),
        except pinned ones, identity/persona and those a person wrote by hand."""
        return await self.db.all(
            "SELECT id, namespace, status FROM memories WHERE status = 'active' AND pinned = 0 "
            f"AND type NOT IN ({placeholders(len(PINNED_TYPES))}) AND authored_by IS NULL "
            "AND length(trim(content)) < ? ORDER BY id LIMIT ?",
            (*PINNED_TYPES, min_chars, limit),
        )

    async def retired_memories(self, cutoff: str, limit: int) -> list[dict[str, Any]]:
        """Expired, deleted or superseded rows whose status has not changed since ``cutoff``."""
        return await self.db.all(
            "SELECT id, namespace, status FROM memories WHERE status IN ('expired', 'deleted', 'superseded') "
            "AND updated_at < ? ORDER BY id LIMIT ?",
            (cutoff, limit),
        )

    async def last_run(self) -> str | None:
        return await CursorStore(self.db).get("retention")

    @staticmethod
    def record_run(at: str) -> Statement:
        return CursorStore.put("retention", "*", at, at)
