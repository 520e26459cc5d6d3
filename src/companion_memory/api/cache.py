"""/v1/cache/{namespace}/{key}: a small JSON key-value store for clients."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from ..application import cache
from ..application.cache import CacheDeleted, CacheEntry, CacheKey, CacheValue, CacheWrite
from ..application.fields import Namespace
from ..application.principal import Principal
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["cache"], route_class=JsonRoute)
NamespacePath = Annotated[Namespace, Path()]
Key = Annotated[str, Path(min_length=1, max_length=256)]


@router.get("/v1/cache/{namespace}/{key}")
async def get_entry(
    namespace: NamespacePath, key: Key, runtime: RuntimeDep, principal: Annotated[Principal, allowed(cache.get_entry)]
) -> CacheEntry:
    return await cache.get_entry(runtime, principal, CacheKey(namespace=namespace, key=key))


@router.put("/v1/cache/{namespace}/{key}")
async def put_entry(
    namespace: NamespacePath,
    key: Key,
    body: CacheValue,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(cache.put_entry)],
) -> CacheEntry:
    write = CacheWrite(namespace=namespace, key=key, value=body.value, ttl_seconds=body.ttl_seconds)
    return await cache.put_entry(runtime, principal, write)


@router.delete("/v1/cache/{namespace}/{key}")
async def delete_entry(
    namespace: NamespacePath,
    key: Key,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(cache.delete_entry)],
) -> CacheDeleted:
    return await cache.delete_entry(runtime, principal, CacheKey(namespace=namespace, key=key))
