"""/api/memories/export and /api/memories/import: the whole memory as one JSON file."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query

from .auth import EXPORT, OWNER, Principal, requires
from .deps import RuntimeDep
from .schemas import Namespace

router = APIRouter(tags=["export"])


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
    document: Annotated[Any, Body()],
) -> dict[str, Any]:
    """Upsert every row of an export by id; vectors are rebuilt in the background."""
    return await runtime.snapshots.import_(document)
