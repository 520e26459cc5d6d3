"""Read-only SQL for the health report and the scan for messages no memory cites, plus
the full-text indexes' rebuild (the one repair that is SQL alone)."""

from __future__ import annotations

from typing import Any

from ..ports import Database, Statement
from .messages import MESSAGE_COLUMNS, MessageRow
from .pagination import decode_cursor, page_of
from .sql import live_sql
from .stored_values import TABLES as STORED_TABLES
from .stored_values import StoredTable, problem_sql, time_sql

_LIVE = live_sql()
# Duplicate groups listed in the report; the rate counts them all.
DUPLICATE_GROUPS_SHOWN = 10
# FTS5's 'rebuild' command: the index made again from its content table (memories).
REBUILD_FULL_TEXT = (
    Statement("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')"),
    Statement("INSERT INTO memories_substring (memories_substring) VALUES ('rebuild')"),
)
# Messages some memory cites, by id: in its sources or in an evidence quote's message_id.
# SQLite builds the list once per statement, so a page costs one pass over the memories.
# A NULL in the list would make every NOT IN unknown, and a row written unreadable by an
# older version must not stop the scan: both are left out.
_CITED = (
    "SELECT j.value FROM memories x, json_each(x.source_message_ids) j "
    "WHERE x.namespace = ? AND x.source_message_ids <> '[]' AND json_valid(x.source_message_ids) "
    "AND j.value IS NOT NULL "
    "UNION SELECT json_extract(e.value, '$.message_id') FROM memories x, json_each(x.evidence) e "
    "WHERE x.namespace = ? AND x.evidence <> '[]' AND json_valid(x.evidence) "
    "AND json_extract(e.value, '$.message_id') IS NOT NULL"
)


class DoctorStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def live_by(self, column: str) -> dict[str, int]:
        """Live memories counted by ``layer`` or ``type``."""
        if column not in ("layer", "type"):
            raise ValueError(f"cannot count memories by {column!r}")
        rows = await self.db.all(
            f"SELECT {column} AS key, COUNT(*) AS n FROM memories WHERE {_LIVE} GROUP BY {column} ORDER BY {column}"
        )
        return {r["key"]: r["n"] for r in rows}

    async def anchored(self) -> int:
        """Live memories with at least one evidence quote."""
        row = await self.db.first(
            f"SELECT COUNT(*) AS n FROM memories WHERE {_LIVE} AND evidence NOT IN ('', '[]') "
            "AND json_valid(evidence) AND json_array_length(evidence) > 0"
        )
        return row["n"] if row else 0

    async def duplicates(self) -> tuple[int, list[list[str]]]:
        """Live memories whose text (trimmed, case-folded) another live memory of the
        namespace already says: how many are extra, and the first groups' ids."""
        # Ids are any text an import brought: joined by a control character ids do not carry.
        groups = (
            f"SELECT COUNT(*) AS n, group_concat(id, char(31)) AS ids FROM memories WHERE {_LIVE} "
            "GROUP BY namespace, lower(trim(content)) HAVING COUNT(*) > 1"
        )
        total = await self.db.first(f"SELECT COALESCE(SUM(n - 1), 0) AS extra FROM ({groups})")
        shown = await self.db.all(f"{groups} ORDER BY n DESC, ids LIMIT ?", (DUPLICATE_GROUPS_SHOWN,))
        return (total["extra"] if total else 0), [sorted(r["ids"].split("\x1f")) for r in shown]

    async def unused_since(self, cutoff: str) -> int:
        """Live memories neither recalled nor written since ``cutoff``."""
        row = await self.db.first(
            f"SELECT COUNT(*) AS n FROM memories WHERE {_LIVE} AND COALESCE(last_injected_at, created_at) < ?",
            (cutoff,),
        )
        return row["n"] if row else 0

    async def open_contradictions(self) -> int:
        row = await self.db.first(
            "SELECT COUNT(*) AS n FROM memory_candidates WHERE kind = 'contradiction' AND status = 'pending'"
        )
        return row["n"] if row else 0

    async def oldest_record(self) -> str | None:
        """When the first memory or message was written: the nightly job is due a day after."""
        row = await self.db.first(
            f"SELECT MIN(at) AS at FROM (SELECT MIN(created_at) AS at FROM memories WHERE {time_sql('created_at')} "
            f"UNION ALL SELECT MIN(stored_at) FROM messages WHERE {time_sql('stored_at')})"
        )
        return row["at"] if row else None

    async def unreadable_counts(self) -> dict[str, int]:
        """Table → rows holding a time or count no reader can use (``stored_values``), in one
        round trip."""
        results = await self.db.batch(
            [Statement(f"SELECT COUNT(*) AS n FROM {t.name} WHERE {problem_sql(t)}") for t in STORED_TABLES]
        )
        counts = {t.name: int(r.rows[0]["n"]) if r.rows else 0 for t, r in zip(STORED_TABLES, results, strict=True)}
        return {name: n for name, n in counts.items() if n}

    async def unreadable_rows(self, table: StoredTable, limit: int, after: int = 0) -> list[dict[str, Any]]:
        """Up to ``limit`` of them after rowid ``after``: ``row_id`` (the rowid), ``key``
        (the row's id, where it has one) and the checked columns (``created_at`` among
        them, where the table has one)."""
        key = f", {table.key} AS key" if table.key else ", NULL AS key"
        columns = ", ".join(c.name for c in table.columns)
        return await self.db.all(
            f"SELECT rowid AS row_id{key}, {columns} FROM {table.name} WHERE rowid > ? AND {problem_sql(table)} "
            "ORDER BY rowid LIMIT ?",
            (after, limit),
        )

    @staticmethod
    def rewrite(table: StoredTable, row_id: int, changes: dict[str, Any]) -> Statement:
        sets = ", ".join(f"{column} = ?" for column in changes)
        return Statement(f"UPDATE {table.name} SET {sets} WHERE rowid = ?", (*changes.values(), row_id))

    async def unanchored(
        self, namespace: str, *, before: str, limit: int, cursor: str | None
    ) -> tuple[list[MessageRow], str | None]:
        """The user's messages written before ``before`` that no memory cites, newest first."""
        where = ["m.namespace = ?", "m.role = 'user'", "m.created_at < ?", f"m.id NOT IN ({_CITED})"]
        params: list[Any] = [namespace, before, namespace, namespace]
        if cursor:
            created_at, id_ = decode_cursor(cursor)
            where.append("(m.created_at < ? OR (m.created_at = ? AND m.id < ?))")
            params += [created_at, created_at, id_]
        rows = await self.db.all(
            f"SELECT {', '.join(f'm.{c} AS {c}' for c in MESSAGE_COLUMNS)} FROM messages m "
            f"WHERE {' AND '.join(where)} ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            (*params, limit + 1),
        )
        page, next_cursor = page_of(rows, limit, "created_at")
        return [MessageRow(**r) for r in page], next_cursor
