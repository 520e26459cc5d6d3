"""/v1/precious: verbatim words worth keeping, append-only; only the owner deletes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..application import precious
from ..application.fields import Cursor, PageLimit
from ..application.precious import PreciousAnswer, PreciousId, PreciousPage, PreciousQuery, PreciousWrite
from ..application.principal import Principal
from ..application.records import Deleted
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["precious"], route_class=JsonRoute)


@router.get("/v1/precious")
async def list_precious(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(precious.list_precious)],
    namespace: NamespaceQuery = "default",
    limit: Annotated[PageLimit, Query()] = 50,
    cursor: Annotated[Cursor | None, Query()] = None,
) -> PreciousPage:
    query = PreciousQuery(namespace=namespace, limit=limit, cursor=cursor)
    return await precious.list_precious(runtime, principal, query)


@router.post("/v1/precious", status_code=201)
async def add_precious(
    body: PreciousWrite, runtime: RuntimeDep, principal: Annotated[Principal, allowed(precious.add_precious)]
) -> PreciousAnswer:
    return await precious.add_precious(runtime, principal, body)


@router.get("/v1/precious/{precious_id}")
async def get_precious(
    precious_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(precious.get_precious)]
) -> PreciousAnswer:
    return await precious.get_precious(runtime, principal, PreciousId(id=precious_id))


@router.delete("/v1/precious/{precious_id}")
async def delete_precious(
    precious_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(precious.delete_precious)]
) -> Deleted:
    return await precious.delete_precious(runtime, principal, PreciousId(id=precious_id))
