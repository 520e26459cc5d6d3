"""/v1/imports: bring your history from another chat app, uploaded in parts (the body
limit, and the Worker's) and imported in the background; its progress, and what it held."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from ..application import history_imports
from ..application.history_imports import ImportJob, ImportJobs, ImportList, ImportPart, ImportRef, ImportStart
from ..application.principal import Principal
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["imports"], route_class=JsonRoute)


@router.post("/v1/imports", status_code=201)
async def start_import(
    body: ImportStart, runtime: RuntimeDep, principal: Annotated[Principal, allowed(history_imports.start)]
) -> ImportJob:
    """Say what is coming (name, size, format, namespace); then PUT its parts."""
    return await history_imports.start(runtime, principal, body)


@router.put(
    "/v1/imports/{import_id}/parts/{start}",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def put_import_part(
    import_id: str,
    start: int,
    request: Request,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(history_imports.part)],
) -> ImportJob:
    """The file's bytes from byte ``start``, at most part_bytes of them, in order; the
    last part starts the import."""
    part = ImportPart(id=import_id, start=start, data=await request.body())
    return await history_imports.part(runtime, principal, part)


@router.get("/v1/imports")
async def list_imports(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(history_imports.recent)],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> ImportJobs:
    return await history_imports.recent(runtime, principal, ImportList(limit=limit))


@router.get("/v1/imports/{import_id}")
async def get_import(
    import_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(history_imports.get)]
) -> ImportJob:
    return await history_imports.get(runtime, principal, ImportRef(id=import_id))
