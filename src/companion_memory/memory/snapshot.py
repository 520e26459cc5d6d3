"""Export everything a namespace holds to one JSON document, and import it back."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from ..clock import iso
from ..domain.json_value import MAX_DEPTH, json_problem
from ..errors import InvalidInput
from ..ports import Clock, Database
from ..store.outbox import OutboxStore
from ..store.snapshot import TABLES, TABLES_BY_NAME, SnapshotStore, TableSpec
from .models import Memory
from .types import MEMORY_TYPES, STATUSES
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
            if table.name == "memories":
                try:
                    memory = Memory.model_validate(row)
                except ValidationError as error:
                    first = error.errors()[0]
                    field = ".".join(str(p) for p in first["loc"])
                    raise InvalidInput(f"memories[{index}].{field}: {first['msg']}", code="invalid_snapshot") from None
                problem = _memory_problem(memory)
                if problem:
                    raise InvalidInput(f"memories[{index}].{problem}", code="invalid_snapshot")
        tables.append((table, rows))
    unknown = set(document) - set(TABLES_BY_NAME) - {"format", "version", "exported_at", "namespace", "skipped"}
    if unknown:
        raise InvalidInput(f"unknown sections in export: {', '.join(sorted(unknown))}", code="invalid_snapshot")
    return tables


def _memory_problem(memory: Memory) -> str | None:
    """What the write paths would refuse in an imported memory, which skips them."""
    if memory.type not in MEMORY_TYPES:
        return f"type: {memory.type!r} is not one of {', '.join(MEMORY_TYPES)}"
    if memory.status not in STATUSES:
        return f"status: {memory.status!r} is not one of {', '.join(STATUSES)}"
    for name in ("importance", "confidence"):
        if not 0 <= getattr(memory, name) <= 1:
            return f"{name}: {getattr(memory, name)!r} is not between 0 and 1"
    return None
