"""A small JSON key-value store that clients keep per namespace."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from pydantic import Field

from ..clock import iso
from ..domain.scopes import MEMORY_READ, MEMORY_WRITE
from ..errors import NotFound
from ..runtime import Runtime
from ..store.cache import CacheStore
from .fields import Namespace
from .principal import Principal
from .use_case import Input, Output, use_case

CacheKeyText = Annotated[str, Field(min_length=1, max_length=256)]


class CacheKey(Input):
    namespace: Namespace
    key: CacheKeyText


class CacheValue(Input):
    value: Annotated[Any, Field(description="Any JSON value.")]
    ttl_seconds: Annotated[int, Field(ge=1, le=365 * 24 * 3600)] | None = None


class CacheWrite(CacheValue, CacheKey):
    """The entry to set: REST takes the key from the path and the value from the body."""


class CacheEntry(Output):
    namespace: str
    key: str
    value: Any
    expires_at: str | None
    created_at: str
    updated_at: str


class CacheDeleted(Output):
    deleted: bool = True
    namespace: str
    key: str


@use_case("cache.get", MEMORY_READ)
async def get_entry(runtime: Runtime, _: Principal, target: CacheKey) -> CacheEntry:
    """One entry, unless it has expired."""
    entry = await CacheStore(runtime.db).get(target.namespace, target.key, iso(runtime.clock.now()))
    if entry is None:
        raise NotFound(f"no cache entry {target.key!r} in {target.namespace!r}")
    return CacheEntry.model_validate(entry, from_attributes=True)


@use_case("cache.put", MEMORY_WRITE)
async def put_entry(runtime: Runtime, _: Principal, write: CacheWrite) -> CacheEntry:
    """Set an entry's value, for ``ttl_seconds`` or until replaced."""
    moment = runtime.clock.now()
    expires_at = iso(moment + timedelta(seconds=write.ttl_seconds)) if write.ttl_seconds else None
    store = CacheStore(runtime.db)
    await store.put(write.namespace, write.key, write.value, expires_at, iso(moment))
    entry = await store.get(write.namespace, write.key, iso(moment))
    return CacheEntry.model_validate(entry, from_attributes=True)


@use_case("cache.delete", MEMORY_WRITE)
async def delete_entry(runtime: Runtime, _: Principal, target: CacheKey) -> CacheDeleted:
    """Remove an entry."""
    if not await CacheStore(runtime.db).delete(target.namespace, target.key):
        raise NotFound(f"no cache entry {target.key!r} in {target.namespace!r}")
    return CacheDeleted(namespace=target.namespace, key=target.key)
