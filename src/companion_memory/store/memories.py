"""SQL for the memories table, its relations and its audit events."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..domain.contradictions import Comparable
from ..domain.memory import MEMORY_FIELDS, Evidence, Memory
from ..domain.memory_event import MemoryEvent
from ..domain.relation import Relation
from ..domain.search_text import search_document
from ..domain.vector_state import MirroredRow
from ..ports import Database, Statement
from .pagination import decode_cursor, page_of
from .shares import visible_in
from .sql import chunks, from_json, live_sql, placeholders, read_stored_json, to_json
from .stored_values import readable
from .text_search import MEMORY_TEXT, TextIndex

log = logging.getLogger("companion_memory.store")

# What is stored is the Memory's fields, plus the text the full-text index reads.
_COLUMNS = (*MEMORY_FIELDS, "search_text")
_SELECT = "SELECT " + ", ".join(c for c in _COLUMNS if c != "search_text") + " FROM memories"
# The rows the vector index holds (vector_sources.is_indexed): live, current, and a plan only while active.
_INDEXED = f"{live_sql()} AND (plan_status IS NULL OR plan_status = 'active')"
# Columns a service may change in place; id and namespace never change.
_UPDATABLE = frozenset(_COLUMNS) - {"id", "namespace", "created_at", "search_text"}
# An edge as ``Relation`` holds it: an edge never re-weighed was last set when it was drawn.
RELATION_SELECT = (
    "SELECT id, namespace, source_id, target_id, relation, weight, created_at, "
    "COALESCE(weighed_at, created_at) AS weighed_at FROM memory_relations"
)


def _live_where(namespace: str | Sequence[str], types: Sequence[str], shared: bool) -> tuple[str, tuple[Any, ...]]:
    """The live memories ``r`` recall may see in the namespace(s), of these types."""
    names = (namespace,) if isinstance(namespace, str) else tuple(namespace)
    where, params = visible_in(names, shared=shared)
    where += f" AND {live_sql('r')}"
    if types:
        where += f" AND r.type IN ({placeholders(len(types))})"
    return where, (*params, *types)


def memory_from_row(row: dict[str, Any]) -> Memory:
    # Rows were validated on the way in; constructing without validation keeps reads cheap.
    return Memory(
        **{
            **row,
            "pinned": bool(row["pinned"]),
            "importance": float(row["importance"]),
            "confidence": float(row["confidence"]),
            "tags": _list_column(row, "tags"),
            "source_message_ids": _list_column(row, "source_message_ids"),
            "evidence": [
                Evidence.from_dict(e) for e in _list_column(row, "evidence") if isinstance(e, dict) and "quote" in e
            ],
        }
    )


def memories_from_rows(rows: Sequence[dict[str, Any]]) -> list[Memory]:
    """A listing's memories: a row whose times or counts cannot be read is left out
    (logged, and listed by the health report) instead of failing every reader of it."""
    return [memory_from_row(r) for r in readable("memories", rows)]


def _list_column(row: dict[str, Any], column: str) -> list[Any]:
    """A JSON list column. One written unreadable (by hand, or an older version) reads as
    empty with a warning: the memory itself stays readable, recallable and editable."""
    if row[column] in ("[]", None):  # most rows: recall reads a few dozen of them a turn
        return []
    value, problem = read_stored_json(row[column])
    if problem or not isinstance(value, (list, type(None))):
        log.warning("memory %s: %s %s; read as empty", row.get("id"), column, problem or "is not a list")
        return []
    return value or []


def _column_value(column: str, value: Any) -> Any:
    if column in ("tags", "source_message_ids"):
        return to_json(list(value))
    if column == "evidence":
        # Stored without the empty message_id, as it always was.
        quotes = [e.as_dict() if isinstance(e, Evidence) else e for e in value]
        return to_json([{k: v for k, v in q.items() if v is not None} for q in quotes])
    if column == "pinned":
        return 1 if value else 0
    return value


class MemoryStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.text = TextIndex(db, MEMORY_TEXT)

    async def get(self, memory_id: str) -> Memory | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (memory_id,))
        return memory_from_row(row) if row else None

    async def get_many(self, ids: Sequence[str]) -> list[Memory]:
        found: list[Memory] = []
        for part in chunks(list(ids)):
            rows = await self.db.all(f"{_SELECT} WHERE id IN ({placeholders(len(part))})", tuple(part))
            found.extend(memories_from_rows(rows))
        return found

    async def current_by_fact_key(self, namespace: str, fact_key: str) -> Memory | None:
        row = await self.db.first(
            f"{_SELECT} WHERE namespace = ? AND fact_key = ? AND status = 'active'", (namespace, fact_key)
        )
        return memory_from_row(row) if row else None

    async def comparable(
        self,
        namespace: str,
        *,
        terms: Sequence[str],
        family: str | None = None,
        ids: Sequence[str] = (),
        exclude_types: Sequence[str] = (),
        limit: int,
    ) -> list[Comparable]:
        """id, type, content, created_at and ``in_family`` of live memories to compare a text
        with, in one query: up to ``limit`` whose fact_key is ``family`` or starts with it
        and a dot (oldest first), those of ``ids``, and the best ``limit`` the full-text
        index finds by ``terms`` (see ``lexical_search``). Only the texts are read: no
        whole rows are decoded."""
        live = f"namespace = ? AND {live_sql()}"
        if exclude_types:
            live += f" AND type NOT IN ({placeholders(len(exclude_types))})"
        columns = "id, type, content, created_at"
        parts: list[str] = []
        params: list[Any] = []
        if family:
            # The range ('/' follows '.') lets the fact-key index find the family; the LIKE
            # (case-insensitive, so no index range of its own) then leaves out "user.coffee-x".
            escaped = family.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            parts.append(
                f"SELECT * FROM (SELECT {columns}, 1 AS in_family FROM memories WHERE {live} "
                "AND fact_key >= ? AND fact_key < ? AND (fact_key = ? OR fact_key LIKE ? ESCAPE '\\') "
                "ORDER BY created_at LIMIT ?)"
            )
            params += [namespace, *exclude_types, family, family + "/", family, escaped + ".%", limit]
        if ids:
            # "+namespace": found by id, not by scanning the namespace's index.
            parts.append(
                f"SELECT {columns}, 0 AS in_family FROM memories WHERE id IN ({placeholders(len(ids))}) AND +{live}"
            )
            params += [*ids, namespace, *exclude_types]
        expression = await self.text.match(terms)
        if expression:
            # The full-text table has no column of these names: they are the memory's.
            parts.append(
                f"SELECT * FROM (SELECT {columns}, 0 AS in_family FROM memories_fts "
                f"JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND {live} "
                "ORDER BY bm25(memories_fts) LIMIT ?)"
            )
            params += [expression, namespace, *exclude_types, limit]
        rows = await self.db.all(" UNION ALL ".join(parts), params) if parts else []
        return [Comparable(**{**r, "in_family": bool(r["in_family"])}) for r in rows]

    async def page(
        self,
        namespace: str,
        *,
        types: Sequence[str] = (),
        statuses: Sequence[str] = ("active",),
        layers: Sequence[str] = (),
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[Memory], str | None]:
        where = ["namespace = ?"]
        params: list[Any] = [namespace]
        for column, values in (("type", types), ("status", statuses), ("layer", layers)):
            if values:
                where.append(f"{column} IN ({placeholders(len(values))})")
                params.extend(values)
        if cursor:
            updated_at, id_ = decode_cursor(cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND id < ?))")
            params.extend((updated_at, updated_at, id_))
        params.append(limit + 1)
        rows = await self.db.all(
            f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY updated_at DESC, id DESC LIMIT ?", params
        )
        page, next_cursor = page_of(rows, limit, "updated_at")
        return memories_from_rows(page), next_cursor

    async def lexical_search(
        self,
        namespace: str | Sequence[str],
        terms: Sequence[str],
        *,
        types: Sequence[str] = (),
        limit: int = 50,
        shared: bool = False,
        counts: Mapping[str, int] | None = None,
    ) -> list[tuple[str, float]]:
        """(id, bm25) of live memories of the namespace(s) (and, when ``shared``, of those
        shared into them) matching any of the terms, best first (see ``TextIndex.match``:
        terms no memory has are dropped, common ones kept within the postings budget;
        ``counts``: the terms' ``text_search.word_counts``, when read already)."""
        where, params = _live_where(namespace, types, shared)
        rows = await self.text.words(terms, where, params, limit=limit, counts=counts)
        return [(r["id"], float(r["rank"])) for r in rows]

    async def plans(self, namespace: str, plan_statuses: Sequence[str], limit: int) -> list[Memory]:
        """Live plans with these stored statuses, the soonest end first, open-ended ones last."""
        rows = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND type = 'plan' AND status = 'active' "
            f"AND plan_status IN ({placeholders(len(plan_statuses))}) "
            "ORDER BY valid_to IS NULL, valid_to, created_at LIMIT ?",
            (namespace, *plan_statuses, limit),
        )
        return memories_from_rows(rows)

    async def plans_ending_before(self, at: str, limit: int) -> list[Memory]:
        """Active plans whose valid_to sorts before ``at``: a UTC moment before it, or a
        day up to its UTC date, which includes every day that has ended in any zone."""
        rows = await self.db.all(
            f"{_SELECT} WHERE type = 'plan' AND status = 'active' AND plan_status = 'active' "
            "AND valid_to IS NOT NULL AND valid_to <= ? ORDER BY valid_to LIMIT ?",
            (at, limit),
        )
        return memories_from_rows(rows)

    async def substring_search(
        self,
        namespace: str | Sequence[str],
        needles: Sequence[str],
        *,
        types: Sequence[str] = (),
        limit: int = 50,
        shared: bool = False,
        counts: Mapping[str, int] | None = None,
    ) -> list[tuple[str, float]]:
        """(id, bm25) of live memories (chosen as in ``lexical_search``) whose content
        holds any of the needles, best first (see ``TextIndex.substrings``; ``counts``:
        the needles' ``text_search.substring_counts``, when read already)."""
        where, params = _live_where(namespace, types, shared)
        rows = await self.text.substrings(needles, where, params, limit=limit, counts=counts)
        return [(r["id"], float(r["rank"])) for r in rows]

    async def neighbours(self, ids: Sequence[str]) -> list[Relation]:
        """Relation edges touching these memories, except version history."""
        edges: list[Relation] = []
        for part in chunks(list(ids), 45):
            marks = placeholders(len(part))
            rows = await self.db.all(
                f"{RELATION_SELECT} "
                f"WHERE relation != 'supersedes' AND (source_id IN ({marks}) OR target_id IN ({marks}))",
                (*part, *part),
            )
            edges += (Relation(**r) for r in rows)
        return edges

    @staticmethod
    def mark_injected(ids: Sequence[str], at: str) -> list[Statement]:
        return [
            Statement(
                f"UPDATE memories SET last_injected_at = ?, recall_count = recall_count + 1 "
                f"WHERE id IN ({placeholders(len(part))})",
                (at, *part),
            )
            for part in chunks(list(ids))
        ]

    async def all_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        """Every memory (any status), in id order, after ``after``, and whether the vector
        index holds it (``live``: see ``is_indexed``)."""
        rows = await self.db.all(
            f"SELECT id, namespace, ({_INDEXED}) AS live FROM memories WHERE id > ? ORDER BY id LIMIT ?", (after, limit)
        )
        return [MirroredRow(id=r["id"], namespace=r["namespace"], live=bool(r["live"])) for r in rows]

    async def live_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        """What the vector index holds (see ``is_indexed``), in id order, after ``after``."""
        rows = await self.db.all(
            f"SELECT id, namespace FROM memories WHERE {_INDEXED} AND id > ? ORDER BY id LIMIT ?", (after, limit)
        )
        return [MirroredRow(**r) for r in rows]

    async def count_indexed(self, *, after: str = "") -> int:
        """How many memories past ``after`` the vector index holds (``live_ids``'s rows)."""
        row = await self.db.first(f"SELECT COUNT(*) AS n FROM memories WHERE {_INDEXED} AND id > ?", (after,))
        return row["n"] if row else 0

    async def unindexed_ids(self, *, after: str, limit: int) -> list[str]:
        """Ids of the rows the vector index must not hold (the complement of ``live_ids``), in id order."""
        rows = await self.db.all(
            f"SELECT id FROM memories WHERE NOT ({_INDEXED}) AND id > ? ORDER BY id LIMIT ?", (after, limit)
        )
        return [r["id"] for r in rows]

    async def count_live(self) -> int:
        row = await self.db.first(f"SELECT COUNT(*) AS n FROM memories WHERE {live_sql()}")
        return row["n"] if row else 0

    async def count_active_by_type(self, namespace: str) -> dict[str, int]:
        rows = await self.db.all(
            "SELECT type, COUNT(*) AS n FROM memories WHERE namespace = ? AND status = 'active' GROUP BY type ORDER BY type",
            (namespace,),
        )
        return {r["type"]: r["n"] for r in rows}

    @staticmethod
    def insert(memory: Memory) -> Statement:
        values = memory.as_dict()
        values["search_text"] = search_document(memory.content)
        return Statement(
            f"INSERT INTO memories ({', '.join(_COLUMNS)}) VALUES ({placeholders(len(_COLUMNS))})",
            tuple(_column_value(c, values[c]) for c in _COLUMNS),
        )

    @staticmethod
    def update(memory_id: str, changes: dict[str, Any]) -> Statement:
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        columns = list(changes)
        values = [_column_value(c, changes[c]) for c in columns]
        if "content" in changes:
            columns.append("search_text")
            values.append(search_document(changes["content"]))
        assignments = ", ".join(f"{c} = ?" for c in columns)
        return Statement(f"UPDATE memories SET {assignments} WHERE id = ?", (*values, memory_id))

    @staticmethod
    def delete_row(memory_id: str) -> list[Statement]:
        return [
            Statement("DELETE FROM memory_relations WHERE source_id = ? OR target_id = ?", (memory_id, memory_id)),
            Statement("DELETE FROM memories WHERE id = ?", (memory_id,)),
        ]

    @staticmethod
    def add_relation(
        relation_id: str, namespace: str, source_id: str, target_id: str, relation: str, weight: float, at: str
    ) -> Statement:
        return Statement(
            "INSERT INTO memory_relations (id, namespace, source_id, target_id, relation, weight, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, target_id, relation) DO NOTHING",
            (relation_id, namespace, source_id, target_id, relation, weight, at),
        )

    @staticmethod
    def remove_relation(relation_id: str) -> Statement:
        return Statement("DELETE FROM memory_relations WHERE id = ?", (relation_id,))

    async def relations(self, memory_id: str) -> list[Relation]:
        rows = await self.db.all(
            f"{RELATION_SELECT} WHERE source_id = ? OR target_id = ? ORDER BY created_at", (memory_id, memory_id)
        )
        return [Relation(**r) for r in rows]

    @staticmethod
    def event(namespace: str, memory_id: str, event: str, actor: str, detail: dict[str, Any], at: str) -> Statement:
        return Statement(
            "INSERT INTO memory_events (namespace, memory_id, event, actor, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (namespace, memory_id, event, actor, to_json(detail), at),
        )

    async def events(self, memory_id: str) -> list[MemoryEvent]:
        rows = await self.db.all(
            "SELECT id, namespace, memory_id, event, actor, detail, created_at FROM memory_events "
            "WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        )
        return [MemoryEvent(**{**r, "detail": from_json(r["detail"], {})}) for r in rows]
