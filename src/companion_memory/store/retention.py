"""SQL for retention: what is old enough to go."""

from __future__ import annotations

from ..domain.types import PINNED_TYPES
from ..ports import Database, SqlValue, Statement
from .cursors import CursorStore
from .sql import placeholders


async def _ids(db: Database, sql: str, params: tuple[SqlValue, ...]) -> list[tuple[str, str]]:
    """The (id, namespace) of each row the query finds."""
    return [(row["id"], row["namespace"]) for row in await db.all(sql, params)]


class RetentionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def delete_older(table: str, column: str, cutoff: str) -> Statement:
        return Statement(f"DELETE FROM {table} WHERE {column} < ?", (cutoff,))

    @staticmethod
    def delete_decided_proposals(cutoff: str) -> Statement:
        """Person proposals approved or rejected before ``cutoff``; pending ones stay."""
        return Statement(
            "DELETE FROM person_proposals WHERE status IN ('approved', 'rejected') AND reviewed_at < ?", (cutoff,)
        )

    async def stale_memories(self, cutoff: str, limit: int) -> list[tuple[str, str]]:
        """Active memories nobody wrote, saw or recalled since ``cutoff``, except pinned ones,
        identity/persona and the rest of the permanent layer (boundaries)."""
        return await _ids(
            self.db,
            "SELECT id, namespace FROM memories WHERE status = 'active' AND pinned = 0 "
            f"AND type NOT IN ({placeholders(len(PINNED_TYPES))}) AND layer != 'permanent' "
            "AND COALESCE(MAX(updated_at, COALESCE(last_seen_at, ''), COALESCE(last_injected_at, '')), updated_at) < ? "
            "ORDER BY id LIMIT ?",
            (*PINNED_TYPES, cutoff, limit),
        )

    async def short_memories(self, min_chars: int, limit: int) -> list[tuple[str, str]]:
        """Active memories whose trimmed content is shorter than ``min_chars`` ("ok", "."),
        except pinned ones, identity/persona and those a person wrote by hand."""
        return await _ids(
            self.db,
            "SELECT id, namespace FROM memories WHERE status = 'active' AND pinned = 0 "
            f"AND type NOT IN ({placeholders(len(PINNED_TYPES))}) AND authored_by IS NULL "
            "AND length(trim(content)) < ? ORDER BY id LIMIT ?",
            (*PINNED_TYPES, min_chars, limit),
        )

    async def retired_memories(self, cutoff: str, limit: int) -> list[tuple[str, str]]:
        """Expired, deleted or superseded rows whose status has not changed since ``cutoff``."""
        return await _ids(
            self.db,
            "SELECT id, namespace FROM memories WHERE status IN ('expired', 'deleted', 'superseded') "
            "AND updated_at < ? ORDER BY id LIMIT ?",
            (cutoff, limit),
        )

    async def last_run(self) -> str | None:
        return await CursorStore(self.db).get("retention")

    @staticmethod
    def record_run(at: str) -> Statement:
        return CursorStore.put("retention", "*", at, at)
