"""/api/memories/export and /api/memories/import: the whole memory as one JSON file."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from ..memory.snapshot import FORMAT, VERSION
from ..store.snapshot import TABLES
from .auth import EXPORT, OWNER, Principal, requires
from .deps import RuntimeDep
from .json_body import JsonRoute
from .schemas import Namespace

router = APIRouter(tags=["export"], route_class=JsonRoute)


def _document_schema() -> dict[str, Any]:
    """What an import must look like (memory/snapshot.py checks it): an export document,
    each table a list of rows whose key, namespace and created_at are not empty."""
    present = {"not": {"enum": [None, ""]}}

    def rows(table: Any) -> dict[str, Any]:
        required = sorted(set(table.key) | {"namespace", "created_at"} & set(table.columns))
        properties = {column: present if column in required else {} for column in table.columns}
        return {"type": "array", "items": {"type": "object", "required": required, "properties": properties}}

    return {
        "type": "object",
        "required": ["format", "version"],
        "properties": {"format": {"const": FORMAT}, "version": {"const": VERSION}, **{t.name: rows(t) for t in TABLES}},
    }


@router.get("/api/memories/export")
async def export_memories(
    runtime: RuntimeDep,
    _: Annotated[Principal, requires(EXPORT)],
    namespace: Annotated[Namespace | None, Query(description="Defaults to the default namespace.")] = None,
    all_namespaces: Annotated[bool, Query(alias="all")] = False,
) -> dict[str, Any]:
    return await runtime.snapshots.export(None if all_namespaces else namespace or "default")


@router.post("/api/memories/import")
async def import_memories(
    runtime: RuntimeDep,
    _: Annotated[Principal, requires(OWNER)],
    document: Annotated[Any, Body(json_schema_extra=_document_schema())],
) -> dict[str, Any]:
    """Upsert every row of an export by id; vectors are rebuilt in the background."""
    return await runtime.snapshots.import_(document)
