"""Precious words: the owner's exact words, append-only; only the owner deletes."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..clock import iso
from ..domain.scopes import MEMORY_READ, MEMORY_WRITE, OWNER
from ..errors import NotFound
from ..runtime import Runtime
from ..store.precious import PreciousStore
from .fields import Cursor, CutPrivate, HasWords, Namespace, PageLimit, PreciousRef, ShortText
from .principal import Principal
from .records import Deleted, PreciousRecord
from .use_case import Input, Output, use_case


class PreciousWrite(Input):
    namespace: Namespace = "default"
    content: Annotated[str, Field(min_length=1, max_length=50_000, description="The exact words to keep."), HasWords]
    note: Annotated[str, Field(max_length=2_000), CutPrivate] | None = None
    source: ShortText = "api"


class PreciousQuery(Input):
    namespace: Namespace = "default"
    limit: PageLimit = 50
    cursor: Cursor | None = None


class PreciousId(Input):
    id: PreciousRef


class PreciousPage(Output):
    precious: list[PreciousRecord]
    count: int
    next_cursor: str | None


class PreciousAnswer(Output):
    precious: PreciousRecord


@use_case("precious.list", MEMORY_READ)
async def list_precious(runtime: Runtime, _: Principal, query: PreciousQuery) -> PreciousPage:
    """Precious words, newest first; page with the cursor."""
    items, next_cursor = await PreciousStore(runtime.db).page(query.namespace, limit=query.limit, cursor=query.cursor)
    return PreciousPage.model_validate(
        {"precious": items, "count": len(items), "next_cursor": next_cursor}, from_attributes=True
    )


@use_case("precious.add", MEMORY_WRITE)
async def add_precious(runtime: Runtime, _: Principal, write: PreciousWrite) -> PreciousAnswer:
    """Keep words verbatim: no trimming, no filtering (precious words are the owner's own),
    but for ``<private>`` spans, which are never stored (the input cuts them)."""
    at = iso(runtime.clock.now())
    item = await PreciousStore(runtime.db).add(write.namespace, write.content, write.note, write.source, at)
    return PreciousAnswer.model_validate({"precious": item}, from_attributes=True)


@use_case("precious.get", MEMORY_READ)
async def get_precious(runtime: Runtime, _: Principal, target: PreciousId) -> PreciousAnswer:
    """One precious entry."""
    item = await PreciousStore(runtime.db).get(target.id)
    if item is None:
        raise NotFound(f"precious {target.id} not found")
    return PreciousAnswer.model_validate({"precious": item}, from_attributes=True)


@use_case("precious.delete", OWNER)
async def delete_precious(runtime: Runtime, _: Principal, target: PreciousId) -> Deleted:
    """Remove a precious entry (the owner only: they are append-only for everyone else)."""
    if not await PreciousStore(runtime.db).delete(target.id):
        raise NotFound(f"precious {target.id} not found")
    return Deleted(id=target.id)
