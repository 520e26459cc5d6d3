"""Export everything a namespace holds to one JSON document, and import it back."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..clock import iso, read_day, read_time
from ..domain.counts import MAX_COUNT, read_count
from ..domain.json_value import MAX_DEPTH, json_problem
from ..domain.layers import LAYERS
from ..domain.types import MEMORY_TYPES, PLAN_STATUSES, STATUSES
from ..errors import InvalidInput
from ..ports import Clock, Database
from ..store.outbox import OutboxStore
from ..store.snapshot import TABLES, TABLES_BY_NAME, SnapshotStore, TableSpec
from ..store.stored_values import TABLES_BY_NAME as STORED_COLUMNS
from .moods import MOOD_LABELS
from .plan_dates import parse_valid_to
from .vector_mirror import VectorMirror

log = logging.getLogger("companion_memory.snapshot")
FORMAT = "companion-memory-export"
VERSION = 1
_IMPORT_GROUP = 200


class Snapshots:
    def __init__(self, db: Database, clock: Clock, mirror: VectorMirror) -> None:
        self.db = db
        self.clock = clock
        self.mirror = mirror
        self.store = SnapshotStore(db)

    async def export(self, namespace: str | None) -> dict[str, Any]:
        """``namespace=None`` exports every namespace."""
        document: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "exported_at": iso(self.clock.now()),
            "namespace": namespace,
        }
        skipped: list[dict[str, Any]] = []
        for table in TABLES:
            document[table.name], unreadable = await self.store.read(table, namespace)
            skipped.extend(unreadable)
        if skipped:
            for row in skipped:
                log.warning("export left out %s %s: %s", row["table"], row["id"], row["problem"])
            document["skipped"] = skipped
        return document

    async def import_(self, document: Any) -> dict[str, Any]:
        """Upsert every row by id; active memories are queued for the vector index, which
        a queued ``vector_mirror`` task then fills in the background."""
        tables = _validate(document)
        now = iso(self.clock.now())
        counts: dict[str, int] = {}
        refused: dict[str, int] = {}
        for table, rows in tables:
            statements = [SnapshotStore.upsert(table, row) for row in rows]
            if table.name == "memories":
                # Every imported memory gets a mirror pass: live ones are embedded,
                # others are removed from the index if an older copy was there.
                statements += [OutboxStore.enqueue(r["id"], r["namespace"], "upsert", now) for r in rows]
            failed = 0
            for start in range(0, len(statements), _IMPORT_GROUP):
                failed += await self.store.write(statements[start : start + _IMPORT_GROUP])
            counts[table.name] = len(rows) - failed
            if failed:
                refused[table.name] = failed
        await self.mirror.schedule_retry()
        return {"imported": counts, "refused": refused}


def _validate(document: Any) -> list[tuple[TableSpec, list[dict[str, Any]]]]:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidInput(f'not a companion-memory export (expected "format": "{FORMAT}")', code="invalid_snapshot")
    if document.get("version") != VERSION:
        raise InvalidInput(
            f"unsupported export version {document.get('version')!r}; this server reads {VERSION}",
            code="invalid_snapshot",
        )
    tables: list[tuple[TableSpec, list[dict[str, Any]]]] = []
    for table in TABLES:
        rows = document.get(table.name, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise InvalidInput(f"{table.name} must be a list of objects", code="invalid_snapshot")
        required = set(table.key) | {"namespace", "created_at"} & set(table.columns)
        checked: list[dict[str, Any]] = []
        for index, row in enumerate(rows):
            missing = sorted(c for c in required if row.get(c) in (None, ""))
            if missing:
                raise InvalidInput(f"{table.name}[{index}] lacks {', '.join(missing)}", code="invalid_snapshot")
            # The row is one level above its JSON columns, which may nest MAX_DEPTH deep.
            problem = json_problem(row, max_depth=MAX_DEPTH + 1)
            if problem:
                raise InvalidInput(f"{table.name}[{index}] {problem}", code="invalid_snapshot")
            nested = next(
                (c for c in table.columns if c not in table.json_columns and isinstance(row.get(c), (dict, list))), None
            )
            if nested:
                raise InvalidInput(
                    f"{table.name}[{index}].{nested} must be a string, number, boolean or null", code="invalid_snapshot"
                )
            row = _stored_values(table, index, row)
            if table.name == "memories":
                problem = _memory_problem(row)
                if problem:
                    raise InvalidInput(f"memories[{index}].{problem}", code="invalid_snapshot")
            # The table checks the rest of a mood; its label only the code knows.
            if table.name == "moods" and row.get("label") not in MOOD_LABELS:
                raise InvalidInput(
                    f"moods[{index}].label: {row.get('label')!r} is not one of {', '.join(MOOD_LABELS)}",
                    code="invalid_snapshot",
                )
            checked.append(row)
        tables.append((table, checked))
    unknown = set(document) - set(TABLES_BY_NAME) - {"format", "version", "exported_at", "namespace", "skipped"}
    if unknown:
        raise InvalidInput(f"unknown sections in export: {', '.join(sorted(unknown))}", code="invalid_snapshot")
    return tables


def _flag(value: object, where: str) -> int:
    if isinstance(value, float) or value not in (True, False, 0, 1):
        raise InvalidInput(f"{where}: must be true or false", code="invalid_snapshot")
    return int(value)


# How an import reads each kind of column (store/stored_values.py): as every writer does.
_READERS: dict[str, Callable[[object, str], object]] = {
    "time": read_time,
    "day": read_day,
    "plan_end": lambda value, where: parse_valid_to(value, "UTC", where),
    "count": read_count,
    "flag": _flag,
}


def _stored_values(table: TableSpec, index: int, row: dict[str, Any]) -> dict[str, Any]:
    """The row with its times in the stored form; a time, day, count or flag that cannot
    be stored, or any other integer past the bound, is refused naming the row and column."""
    kinds = {column.name: column.kind for column in STORED_COLUMNS[table.name].columns}
    checked = dict(row)
    for name in set(table.columns).intersection(row).difference(table.json_columns):
        value, where = row[name], f"{table.name}[{index}].{name}"
        if value is None:
            continue
        if name in kinds:
            checked[name] = _READERS[kinds[name]](value, where)
        elif type(value) is int and abs(value) > MAX_COUNT:
            raise InvalidInput(f"{where}: {value} is past the largest number kept, {MAX_COUNT}", code="invalid_count")
    return checked


# Checked above: the times and counts.
_TEXT = ("id", "namespace", "type", "content")
_OPTIONAL_TEXT = ("fact_key", "version_status", "superseded_by", "source", "authored_by", "layer_reason")


def _memory_problem(row: dict[str, Any]) -> str | None:
    """What a memory row must be to be read back as a Memory, and what the write paths
    would refuse (an import skips them)."""
    for name in _TEXT:
        if not isinstance(row.get(name), str):
            return f"{name}: must be a string"
    for name in _OPTIONAL_TEXT:
        if row.get(name) is not None and not isinstance(row[name], str):
            return f"{name}: must be a string or null"
    if row["type"] not in MEMORY_TYPES:
        return f"type: {row['type']!r} is not one of {', '.join(MEMORY_TYPES)}"
    if row.get("status", "active") not in STATUSES:
        return f"status: {row['status']!r} is not one of {', '.join(STATUSES)}"
    if row.get("plan_status") not in (None, *PLAN_STATUSES):
        return f"plan_status: {row['plan_status']!r} is not one of {', '.join(PLAN_STATUSES)} or null"
    if row.get("layer", "short") not in LAYERS:
        return f"layer: {row['layer']!r} is not one of {', '.join(LAYERS)}"
    for name in ("importance", "confidence"):
        value = row.get(name, 0.5)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            return f"{name}: {value!r} is not a number between 0 and 1"
    for name in ("tags", "source_message_ids"):
        value = row.get(name) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{name}: must be a list of strings"
    for position, evidence in enumerate(row.get("evidence") or []):
        if not isinstance(evidence, dict) or not isinstance(evidence.get("quote"), str) or not evidence["quote"]:
            return f"evidence[{position}]: must be an object with a non-empty quote"
    return None
