"""/api/memories/export and /api/memories/import: the whole memory as one JSON file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from fastapi.responses import StreamingResponse

from ..application import snapshot
from ..application.fields import Namespace
from ..application.principal import Principal
from ..application.snapshot import ExportDocument, ExportScope, ImportAnswer, ImportDocument, document_schema
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["export"], route_class=JsonRoute)


@router.get("/api/memories/export", response_model=ExportDocument)
async def export_memories(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(snapshot.export)],
    namespace: Annotated[Namespace | None, Query(description="Defaults to the default namespace.")] = None,
    all_namespaces: Annotated[bool, Query(alias="all")] = False,
) -> StreamingResponse:
    """Sent as it is read, a page of rows at a time (chunked): the document is never
    whole in the server's memory. A failure before the first rows is an error answer;
    one midway cuts the document short."""
    scope = ExportScope(namespace=None if all_namespaces else namespace or "default")
    pieces = snapshot.export_json(runtime, principal, scope)
    first = await anext(pieces)
    return StreamingResponse(_then(first, pieces), media_type="application/json")


async def _then(first: str, rest: AsyncIterator[str]) -> AsyncIterator[str]:
    yield first
    async for piece in rest:
        yield piece


@router.post("/api/memories/import")
async def import_memories(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(snapshot.import_document)],
    document: Annotated[Any, Body(json_schema_extra=document_schema())],
) -> ImportAnswer:
    """Upsert every row of an export by id; vectors are rebuilt in the background."""
    return await snapshot.import_document(runtime, principal, ImportDocument(document=document))
