"""/v1/memories (and its /v1/memory aliases): list, upsert, read, edit, supersede, archive, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from ..application import memories
from ..application.fields import Cursor, PageLimit
from ..application.memories import (
    ConsolidationUndone,
    MemoryDetail,
    MemoryPage,
    MemoryPatch,
    MemoryUpsert,
    MemoryWrite,
    RelationAnswer,
    RelationWrite,
)
from ..application.principal import Principal
from ..application.records import Deleted, WriteAnswer
from ..domain.counts import MAX_COUNT
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["memories"], route_class=JsonRoute)


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


@router.get("/v1/memories")
@router.get("/v1/memory", include_in_schema=False)
async def list_memories(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.list_memories)],
    namespace: NamespaceQuery = "default",
    type: Annotated[list[str] | None, Query(description="Type filter; repeat or comma-separate.")] = None,
    status: Annotated[
        list[str] | None, Query(description="Status filter (default active); 'all' for every status.")
    ] = None,
    layer: Annotated[
        list[str] | None,
        Query(description="Layer filter (instant, short, long, cold, permanent); repeat or comma-separate."),
    ] = None,
    limit: Annotated[PageLimit, Query()] = 50,
    cursor: Annotated[Cursor | None, Query()] = None,
) -> MemoryPage:
    query = memories.MemoryQuery.model_validate(
        {
            "namespace": namespace,
            "types": _split(type),
            "statuses": _split(status),
            "layers": _split(layer),
            "limit": limit,
            "cursor": cursor,
        }
    )
    return await memories.list_memories(runtime, principal, query)


@router.post("/v1/memories", status_code=201)
@router.post("/v1/memory", status_code=201, include_in_schema=False)
async def upsert_memory(
    body: MemoryUpsert,
    response: Response,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.upsert_memory)],
) -> WriteAnswer:
    """Upsert by ``fact_key``: a new key creates (201), a known key updates in place (200)."""
    answer = await memories.upsert_memory(runtime, principal, body)
    if not answer.created:
        response.status_code = 200
    return answer


@router.get("/v1/memories/{memory_id}")
@router.get("/v1/memory/{memory_id}", include_in_schema=False)
async def get_memory(
    memory_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(memories.get_memory)]
) -> MemoryDetail:
    return await memories.get_memory(runtime, principal, memories.MemoryId(id=memory_id))


@router.patch("/v1/memories/{memory_id}")
@router.patch("/v1/memory/{memory_id}", include_in_schema=False)
async def edit_memory(
    memory_id: str,
    body: MemoryPatch,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.edit_memory)],
) -> WriteAnswer:
    edit = memories.MemoryEdit(**body.model_dump(exclude_unset=True), id=memory_id)
    return await memories.edit_memory(runtime, principal, edit)


@router.delete("/v1/memories/{memory_id}")
@router.delete("/v1/memory/{memory_id}", include_in_schema=False)
async def delete_memory(
    memory_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.delete_memory)],
    hard: Annotated[bool, Query(description="Remove the row too (owner only), once its vector is gone.")] = False,
) -> WriteAnswer:
    return await memories.delete_memory(runtime, principal, memories.MemoryDelete(id=memory_id, hard=hard))


@router.post("/v1/memories/{memory_id}/supersede", status_code=201)
@router.post("/v1/memory/{memory_id}/supersede", status_code=201, include_in_schema=False)
async def supersede_memory(
    memory_id: str,
    body: MemoryWrite,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.supersede_memory)],
) -> WriteAnswer:
    """Write a new version; the old one becomes history (``superseded``)."""
    write = memories.MemorySupersede(**body.model_dump(exclude_unset=True), old_id=memory_id)
    return await memories.supersede_memory(runtime, principal, write)


@router.post("/v1/memories/{memory_id}/archive")
@router.post("/v1/memory/{memory_id}/archive", include_in_schema=False)
async def archive_memory(
    memory_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(memories.archive_memory)]
) -> WriteAnswer:
    return await memories.archive_memory(runtime, principal, memories.MemoryId(id=memory_id))


@router.post("/v1/memories/{memory_id}/relations", status_code=201)
@router.post("/v1/memory/{memory_id}/relations", status_code=201, include_in_schema=False)
async def relate_memory(
    memory_id: str,
    body: RelationWrite,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.relate_memories)],
) -> RelationAnswer:
    """A typed, weighted edge from this memory to another (recall follows it one hop); posting an
    existing edge again sets its weight and restarts its fade."""
    edge = memories.RelationAdd(**body.model_dump(), source_id=memory_id)
    return await memories.relate_memories(runtime, principal, edge)


@router.delete("/v1/memories/{memory_id}/relations/{relation_id}")
@router.delete("/v1/memory/{memory_id}/relations/{relation_id}", include_in_schema=False)
async def unrelate_memory(
    memory_id: str,
    relation_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.unrelate_memories)],
) -> Deleted:
    edge = memories.RelationRemove(memory_id=memory_id, relation_id=relation_id)
    return await memories.unrelate_memories(runtime, principal, edge)


@router.post("/v1/memories/{memory_id}/events/{event_id}/undo")
@router.post("/v1/memory/{memory_id}/events/{event_id}/undo", include_in_schema=False)
async def undo_consolidation(
    memory_id: str,
    event_id: Annotated[int, Path(ge=1, le=MAX_COUNT)],
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(memories.undo_consolidation)],
) -> ConsolidationUndone:
    """Undo a nightly consolidation event (``consolidation_*``) from the memory's history."""
    undo = memories.ConsolidationUndo(memory_id=memory_id, event_id=event_id)
    return await memories.undo_consolidation(runtime, principal, undo)
