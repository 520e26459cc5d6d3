"""Export everything a namespace holds to one JSON document, and import it back.

An export is read a page of rows at a time, each page in a heavy read's turn (``pacing``),
so that it never holds the event loop for long nor a whole table in memory: the REST
route sends each page's JSON as it is made (``export_json``), and whoever needs the
document whole (MCP, the CLI, a repair's backup) gathers the pages (``export``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..clock import iso, read_day, read_time
from ..domain.counts import MAX_COUNT, read_count
from ..domain.json_value import MAX_DEPTH, json_problem
from ..domain.layers import LAYERS
from ..domain.mood import MOOD_LABELS
from ..domain.private_spans import strip_private
from ..domain.types import MEMORY_TYPES, PLAN_STATUSES, STATUSES
from ..errors import InvalidInput
from ..pacing import HeavyReads
from ..ports import Clock, Database
from ..store.outbox import OutboxKind, OutboxStore
from ..store.snapshot import TABLES, TABLES_BY_NAME, SnapshotStore, TableSpec
from ..store.stored_values import TABLES_BY_NAME as STORED_COLUMNS
from .plan_dates import parse_valid_to
from .vector_mirror import VectorMirror

log = logging.getLogger("companion_memory.snapshot")
FORMAT = "companion-memory-export"
VERSION = 1
_IMPORT_GROUP = 200
# Rows read by one query of an export. On D1 each page is a query of the Worker's
# invocation (which allows 1,000, 50 on the free plan), so pages are not small; the rows
# of a page are gone through a slice at a time.
EXPORT_PAGE = 1000

R = TypeVar("R")


@dataclass(frozen=True)
class _Page:
    """Rows of one table read back, and the rows left out; every table has a first page,
    if only an empty one."""

    table: TableSpec
    rows: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    first: bool


def _json(value: Any) -> str:
    """As the API writes JSON: compact, UTF-8 as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Snapshots:
    def __init__(self, db: Database, clock: Clock, mirror: VectorMirror, heavy: HeavyReads) -> None:
        self.db = db
        self.clock = clock
        self.mirror = mirror
        self.heavy = heavy
        self.store = SnapshotStore(db)

    async def export(self, namespace: str | None) -> dict[str, Any]:
        """The whole document; ``namespace=None`` exports every namespace."""
        document = self._head(namespace)
        skipped: list[dict[str, Any]] = []

        async def gather(page: _Page) -> None:
            document.setdefault(page.table.name, []).extend(page.rows)
            skipped.extend(page.skipped)

        async for _ in self._in_turns(namespace, gather):
            pass
        if skipped:
            document["skipped"] = skipped
        return document

    async def export_json(self, namespace: str | None) -> AsyncIterator[str]:
        """The same document as JSON text, in pieces: the first once the first page is
        read, then one a page. A read failing midway ends it early (the text is then not
        whole JSON, which any reader notices)."""
        skipped: list[dict[str, Any]] = []

        async def render(page: _Page) -> str:
            skipped.extend(page.skipped)
            rows = ",".join([_json(row) async for row in self.heavy.paced(page.rows)])
            if page.first:  # closes the table before, opens its own
                return ("]" if page.table is not TABLES[0] else "") + f",{_json(page.table.name)}:[" + rows
            return "," + rows if rows else ""

        pieces = self._in_turns(namespace, render)
        yield _json(self._head(namespace))[:-1] + await anext(pieces)
        async for piece in pieces:
            if piece:
                yield piece
        yield f'],"skipped":{_json(skipped)}}}'

    def _head(self, namespace: str | None) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "exported_at": iso(self.clock.now()), "namespace": namespace}

    async def _in_turns(self, namespace: str | None, handle: Callable[[_Page], Awaitable[R]]) -> AsyncIterator[R]:
        """``handle`` of each page, each page read and handled in a heavy read's turn;
        what it made is handed on outside the turn (a slow client holds no turn)."""
        pages = self._pages(namespace)
        try:
            while True:
                async with self.heavy.turn():
                    page = await anext(pages, None)
                    if page is None:
                        return
                    made = await handle(page)
                yield made
        finally:
            await pages.aclose()

    async def _pages(self, namespace: str | None) -> AsyncGenerator[_Page, None]:
        for table in TABLES:
            after, first = "", True
            while True:
                rows = await self.store.page(table, namespace, after=after, limit=EXPORT_PAGE)
                kept: list[dict[str, Any]] = []
                skipped: list[dict[str, Any]] = []
                async for row in self.heavy.paced(rows):
                    problem = SnapshotStore.readable(table, row)
                    if problem is None:
                        kept.append(row)
                        continue
                    log.warning("export left out %s %s: %s", table.name, row.get("id"), problem)
                    skipped.append(
                        {
                            "table": table.name,
                            "id": row.get("id"),
                            "namespace": row.get("namespace"),
                            "problem": problem,
                        }
                    )
                yield _Page(table, kept, skipped, first)
                if len(rows) < EXPORT_PAGE:
                    break
                after, first = rows[-1]["id"], False

    async def import_(self, document: Any) -> dict[str, Any]:
        """Upsert every row by id; memories and episodes are queued for the vector index, which
        a queued ``vector_mirror`` task then fills in the background."""
        tables = _validate(document)
        now = iso(self.clock.now())
        counts: dict[str, int] = {}
        refused: dict[str, int] = {}
        for table, rows in tables:
            statements = [SnapshotStore.upsert(table, row) for row in rows]
            kind = _MIRRORED.get(table.name)
            if kind:
                # Every imported memory or episode gets a mirror pass: live ones are
                # embedded, others are removed from the index if an older copy was there.
                statements += [OutboxStore.enqueue(r["id"], r["namespace"], "upsert", now, kind) for r in rows]
            failed = 0
            for start in range(0, len(statements), _IMPORT_GROUP):
                failed += await self.store.write(statements[start : start + _IMPORT_GROUP])
            counts[table.name] = len(rows) - failed
            if failed:
                refused[table.name] = failed
        await self.mirror.schedule_retry()
        return {"imported": counts, "refused": refused}


_MIRRORED: dict[str, OutboxKind] = {"memories": "memory", "episodes": "episode"}


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
            row = _without_private(table, index, _stored_values(table, index, row))
            if table.name == "memories":
                problem = _memory_problem(row)
                if problem:
                    raise InvalidInput(f"memories[{index}].{problem}", code="invalid_snapshot")
            # The table checks the rest of a mood or a night dream; its label only the code knows.
            labelled = _MOOD_COLUMN.get(table.name)
            if labelled and row.get(labelled) not in MOOD_LABELS:
                raise InvalidInput(
                    f"{table.name}[{index}].{labelled}: {row.get(labelled)!r} is not one of {', '.join(MOOD_LABELS)}",
                    code="invalid_snapshot",
                )
            checked.append(row)
        tables.append((table, checked))
    unknown = set(document) - set(TABLES_BY_NAME) - {"format", "version", "exported_at", "namespace", "skipped"}
    if unknown:
        raise InvalidInput(f"unknown sections in export: {', '.join(sorted(unknown))}", code="invalid_snapshot")
    return tables


# The column that holds a label of the moods' vocabulary.
_MOOD_COLUMN = {"moods": "label", "night_dreams": "mood"}


# The words a row is for: a row the cut of its <private> spans leaves without them is
# refused, as the write paths refuse it (a message may be left empty, as ingest leaves it).
_WORDS = {
    "memories": "content",
    "episodes": "content",
    "memory_candidates": "content",
    "precious": "content",
    "todos": "text",
    "night_dreams": "text",
    "glossary": "term",
    "people": "name",
}


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return strip_private(value)
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    return value


def _without_private(table: TableSpec, index: int, row: dict[str, Any]) -> dict[str, Any]:
    """The row with the ``<private>`` spans cut from every text it holds, JSON columns too
    (a backup from elsewhere, or made by hand, is stored as any write would be)."""
    cut: dict[str, Any] = _cut(row)
    column = _WORDS.get(table.name)
    given = row.get(column) if column else None
    if column and isinstance(given, str) and given.strip() and not cut[column].strip():
        raise InvalidInput(
            f"{table.name}[{index}].{column} has no words besides <private> spans (which are never stored)",
            code="empty_content",
        )
    return cut


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
