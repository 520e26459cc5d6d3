"""/v1/cache/{namespace}/{key}: a small JSON key-value store for clients."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path

from ..clock import iso
from ..errors import NotFound
from ..store.cache import CacheStore
from .auth import MEMORY_READ, MEMORY_WRITE, Principal, requires
from .deps import RuntimeDep, now
from .json_body import JsonRoute
from .schemas import CachePut, Namespace

router = APIRouter(tags=["cache"], route_class=JsonRoute)
NamespacePath = Annotated[Namespace, Path()]
Key = Annotated[str, Path(min_length=1, max_length=256)]


@router.get("/v1/cache/{namespace}/{key}")
async def get_entry(
    namespace: NamespacePath, key: Key, runtime: RuntimeDep, _: Annotated[Principal, requires(MEMORY_READ)]
) -> dict[str, Any]:
    entry = await CacheStore(runtime.db).get(namespace, key, now(runtime))
    if entry is None:
        raise NotFound(f"no cache entry {key!r} in {namespace!r}")
    return entry


@router.put("/v1/cache/{namespace}/{key}")
async def put_entry(
    namespace: NamespacePath,
    key: Key,
    body: CachePut,
    runtime: RuntimeDep,
    _: Annotated[Principal, requires(MEMORY_WRITE)],
) -> dict[str, Any]:
    moment = runtime.clock.now()
    expires_at = iso(moment + timedelta(seconds=body.ttl_seconds)) if body.ttl_seconds else None
    store = CacheStore(runtime.db)
    await store.put(namespace, key, body.value, expires_at, iso(moment))
    return await store.get(namespace, key, iso(moment))  # type: ignore[return-value]


@router.delete("/v1/cache/{namespace}/{key}")
async def delete_entry(
    namespace: NamespacePath, key: Key, runtime: RuntimeDep, _: Annotated[Principal, requires(MEMORY_WRITE)]
) -> dict[str, Any]:
    if not await CacheStore(runtime.db).delete(namespace, key):
        raise NotFound(f"no cache entry {key!r} in {namespace!r}")
    return {"deleted": True, "namespace": namespace, "key": key}
