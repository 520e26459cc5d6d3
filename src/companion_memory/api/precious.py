"""/v1/precious: verbatim words worth keeping, append-only; only the owner deletes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..errors import NotFound
from ..store.precious import PreciousStore
from .auth import MEMORY_READ, MEMORY_WRITE, OWNER, Principal, requires
from .deps import NamespaceQuery, RuntimeDep, now
from .json_body import JsonRoute
from .schemas import PreciousWrite

router = APIRouter(tags=["precious"], route_class=JsonRoute)


@router.get("/v1/precious")
async def list_precious(
    runtime: RuntimeDep,
    _: Annotated[Principal, requires(MEMORY_READ)],
    namespace: NamespaceQuery = "default",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> dict[str, Any]:
    items, next_cursor = await PreciousStore(runtime.db).page(namespace, limit=limit, cursor=cursor)
    return {"precious": items, "count": len(items), "next_cursor": next_cursor}


@router.post("/v1/precious", status_code=201)
async def add_precious(
    body: PreciousWrite, runtime: RuntimeDep, _: Annotated[Principal, requires(MEMORY_WRITE)]
) -> dict[str, Any]:
    # Kept verbatim: no trimming, no filtering; precious words are the owner's own.
    item = await PreciousStore(runtime.db).add(body.namespace, body.content, body.note, body.source, now(runtime))
    return {"precious": item}


@router.get("/v1/precious/{precious_id}")
async def get_precious(
    precious_id: str, runtime: RuntimeDep, _: Annotated[Principal, requires(MEMORY_READ)]
) -> dict[str, Any]:
    item = await PreciousStore(runtime.db).get(precious_id)
    if item is None:
        raise NotFound(f"precious {precious_id} not found")
    return {"precious": item}


@router.delete("/v1/precious/{precious_id}")
async def delete_precious(
    precious_id: str, runtime: RuntimeDep, _: Annotated[Principal, requires(OWNER)]
) -> dict[str, Any]:
    if not await PreciousStore(runtime.db).delete(precious_id):
        raise NotFound(f"precious {precious_id} not found")
    return {"deleted": True, "id": precious_id}
