"""SQL for the nightly layer pass: the live memories whose layer may change tonight."""

from __future__ import annotations

from ..domain.layers import PERMANENT_TYPES
from ..domain.memory import Memory
from ..ports import Database
from .memories import _SELECT, memories_from_rows
from .sql import live_sql, placeholders

_PERMANENT = f"(type IN ({placeholders(len(PERMANENT_TYPES))}) OR pinned = 1)"
_LAST_USED = "MAX(created_at, COALESCE(last_seen_at, ''), COALESCE(last_injected_at, ''))"


class LayerStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def due(
        self, *, instant_gone_before: str, cold_before: str, long_mentions: int, long_days: float, limit: int
    ) -> list[Memory]:
        """Live memories (open plans only: a closed one stays where it ended) that may move: instant ones past their sleep, short or long ones
        unused since ``cold_before``, short ones used often enough over long enough, and
        ones whose type or pinning no longer matches 'permanent'. domain/layers.py decides."""
        return memories_from_rows(
            await self.db.all(
                f"{_SELECT} WHERE {live_sql()} "
                "AND COALESCE(plan_status, 'active') = 'active' AND ("
                "(layer = 'instant' AND COALESCE(layer_at, created_at) < ?)"
                f" OR (layer IN ('short', 'long') AND {_LAST_USED} < ?)"
                " OR (layer = 'short' AND seen_count + recall_count >= ?"
                f" AND julianday({_LAST_USED}) - julianday(created_at) >= ?)"
                f" OR (layer != 'permanent' AND {_PERMANENT})"
                f" OR (layer = 'permanent' AND NOT {_PERMANENT})"
                ") ORDER BY id LIMIT ?",
                (
                    instant_gone_before,
                    cold_before,
                    long_mentions,
                    long_days,
                    *PERMANENT_TYPES,
                    *PERMANENT_TYPES,
                    limit,
                ),
            )
        )
