"""SQL for snapshots: every table a person would want back, row for row."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..domain.candidate import CANDIDATE_FIELDS
from ..domain.episode import EPISODE_FIELDS, said_by
from ..domain.memory import MEMORY_FIELDS
from ..domain.mood import MOOD_FIELDS
from ..domain.night_dream import NIGHT_DREAM_FIELDS
from ..domain.person import PERSON_FIELDS, PROPOSAL_FIELDS
from ..domain.search_text import search_document
from ..domain.todo import TODO_FIELDS
from ..ports import ConstraintError, Database, Statement
from .sql import placeholders, read_stored_json, to_json
from .stored_values import TABLES_BY_NAME as STORED_TABLES
from .stored_values import row_problem


@dataclass(frozen=True)
class TableSpec:
    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    json_columns: tuple[str, ...] = ()
    # Columns computed from the row on import instead of being exported.
    derived: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = ()


# Derived columns (memories.search_text) are rebuilt on import, not exported; the
# full-text and substring indexes follow the rows by trigger.
TABLES = (
    TableSpec(
        "memories",
        ("id",),
        MEMORY_FIELDS,
        ("tags", "source_message_ids", "evidence"),
        derived=(("search_text", lambda row: search_document(row["content"])),),
    ),
    TableSpec(
        "memory_relations",
        ("id",),
        # weighed_at: when the (decayed) weight was set, so an import does not fade it twice.
        ("id", "namespace", "source_id", "target_id", "relation", "weight", "created_at", "weighed_at"),
    ),
    TableSpec(
        "memory_candidates",
        ("id",),
        CANDIDATE_FIELDS,
        ("evidence", "source_message_ids"),
    ),
    TableSpec("precious", ("id",), ("id", "namespace", "content", "note", "source", "created_at")),
    TableSpec(
        "glossary",
        ("id",),
        ("id", "namespace", "term", "aliases", "definition", "created_at", "updated_at"),
        ("aliases",),
    ),
    TableSpec(
        "daily_log",
        ("id",),
        ("id", "namespace", "date", "title", "summary", "message_count", "created_at", "updated_at"),
    ),
    TableSpec(
        "weekly_log",
        ("id",),
        (
            "id",
            "namespace",
            "week",
            "start_date",
            "end_date",
            "title",
            "summary",
            "rolled_up_at",
            "created_at",
            "updated_at",
        ),
    ),
    TableSpec("monthly_log", ("id",), ("id", "namespace", "month", "title", "summary", "created_at", "updated_at")),
    TableSpec("todos", ("id",), TODO_FIELDS),
    TableSpec("moods", ("id",), MOOD_FIELDS),
    # A night that holds another dream at the same place refuses the imported one (counted).
    TableSpec("night_dreams", ("id",), NIGHT_DREAM_FIELDS, ("material_ids",)),
    # Which memories are about whom is not exported: the nightly job links them again.
    TableSpec("people", ("id",), PERSON_FIELDS, ("aliases",)),
    TableSpec("person_proposals", ("id",), PROPOSAL_FIELDS, ("aliases", "evidence")),
    TableSpec(
        "messages",
        ("id",),
        (
            "id",
            "namespace",
            "conversation_id",
            "role",
            "content",
            "client_hash",
            "source",
            "model",
            "metadata",
            "created_at",
            "stored_at",
        ),
        ("metadata",),
    ),
    # Episodes outlive their messages (EPISODE_RETENTION_DAYS): what was said is backed up
    # as recall finds it.
    TableSpec(
        "episodes",
        ("id",),
        EPISODE_FIELDS,
        ("sensitive",),
        derived=(("search_text", lambda row: search_document(said_by(row.get("speaker"), row["content"]))),),
    ),
)
TABLES_BY_NAME = {t.name: t for t in TABLES}


class SnapshotStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def page(self, table: TableSpec, namespace: str | None, *, after: str, limit: int) -> list[dict[str, Any]]:
        """The table's rows with an id past ``after``, in id order, at most ``limit``: an
        export reads a page at a time. The id is the key to page by (unique, indexed, never
        null); ``+namespace`` keeps SQLite walking that index instead of sorting the
        namespace's rows for every page."""
        where, params = ("AND +namespace = ?", (namespace,)) if namespace else ("", ())
        return await self.db.all(
            f"SELECT {', '.join(table.columns)} FROM {table.name} WHERE id > ? {where} ORDER BY id LIMIT ?",
            (after, *params, limit),
        )

    @staticmethod
    def readable(table: TableSpec, row: dict[str, Any]) -> str | None:
        """Reads the row's JSON columns back in place; says why the row cannot be read back
        (a JSON column, a time or a count): then it is left out of an export, with its id
        and why, so one bad row never costs the whole export, and what is exported imports
        back."""
        for column in table.json_columns:
            row[column], problem = read_stored_json(row[column])
            if problem:
                return f"{column} {problem}"
        found = row_problem(STORED_TABLES[table.name], row)
        return f"{found[0]} {found[1]}" if found else None

    @staticmethod
    def upsert(table: TableSpec, row: dict[str, Any]) -> Statement:
        # Only the columns the row has: a column it leaves out takes the table's default
        # (a new row) or keeps its value (an existing one).
        given = [c for c in table.columns if c in row]
        columns = [*given, *(name for name, _ in table.derived)]
        values = [
            to_json(row[c], what=f"{table.name} {row.get('id')!r}: {c}")
            if c in table.json_columns and row[c] is not None
            else row[c]
            for c in given
        ]
        values.extend(compute(row) for _, compute in table.derived)
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in table.key)
        return Statement(
            f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({placeholders(len(columns))}) "
            f"ON CONFLICT ({', '.join(table.key)}) DO UPDATE SET {updates}",
            tuple(values),
        )

    async def write(self, statements: list[Statement]) -> int:
        """Write rows atomically; returns how many were refused by a constraint when
        the whole group could not go in (then each row is tried on its own)."""
        try:
            await self.db.batch(statements)
            return 0
        except ConstraintError:
            refused = 0
            for statement in statements:
                try:
                    await self.db.run(statement.sql, statement.params)
                except ConstraintError:
                    refused += 1
            return refused
