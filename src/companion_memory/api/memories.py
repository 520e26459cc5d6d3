"""/v1/memories (and its /v1/memory aliases): list, upsert, read, edit, supersede, archive, delete."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from ..domain.memory import Evidence
from ..domain.types import MEMORY_TYPES, STATUSES, normalise_type
from ..errors import InvalidInput, NotFound
from ..memory.writes import MemoryDraft
from .auth import MEMORY_READ, MEMORY_WRITE, OWNER, Principal, requires
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute
from .schemas import MemoryPatch, MemoryUpsert, MemoryWrite, RelationWrite
from .views import write_view

router = APIRouter(tags=["memories"], route_class=JsonRoute)
Reader = Annotated[Principal, requires(MEMORY_READ)]
Writer = Annotated[Principal, requires(MEMORY_WRITE)]


def _draft(body: MemoryWrite | MemoryPatch, principal: Principal) -> MemoryDraft:
    if body.authored_by:
        # Marking a memory as written by hand protects it from every other writer.
        principal.require(OWNER)
    fields = body.model_dump(exclude={"namespace", "status", "evidence"}, exclude_none=True)
    evidence = None if body.evidence is None else [Evidence(e.quote, e.message_id) for e in body.evidence]
    return MemoryDraft(**fields, evidence=evidence)


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


@router.get("/v1/memories")
@router.get("/v1/memory", include_in_schema=False)
async def list_memories(
    runtime: RuntimeDep,
    _: Reader,
    namespace: NamespaceQuery = "default",
    type: Annotated[list[str] | None, Query(description="Type filter; repeat or comma-separate.")] = None,
    status: Annotated[
        list[str] | None, Query(description="Status filter (default active); 'all' for every status.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> dict[str, Any]:
    types = []
    for name in _split(type):
        canonical = normalise_type(name)
        if canonical is None:
            raise InvalidInput(f"unknown type {name!r}; known types: {', '.join(MEMORY_TYPES)}", code="invalid_type")
        types.append(canonical)
    statuses = _split(status) or ["active"]
    if statuses == ["all"]:
        statuses = list(STATUSES)
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        raise InvalidInput(f"unknown status {unknown[0]!r}; known: {', '.join(STATUSES)}, all", code="invalid_status")
    memories, next_cursor = await runtime.writer.store.page(
        namespace, types=types, statuses=statuses, limit=limit, cursor=cursor
    )
    return {"memories": [m.as_dict() for m in memories], "count": len(memories), "next_cursor": next_cursor}


@router.post("/v1/memories", status_code=201)
@router.post("/v1/memory", status_code=201, include_in_schema=False)
async def upsert_memory(
    body: MemoryUpsert, response: Response, runtime: RuntimeDep, principal: Writer
) -> dict[str, Any]:
    """Upsert by ``fact_key``: a new key creates (201), a known key updates in place (200)."""
    if not body.fact_key:
        raise InvalidInput(
            "fact_key is required: memories are written by upsert on a stable fact key, e.g. 'user.coffee.preference'",
            code="missing_fact_key",
        )
    result = await runtime.writer.upsert(body.namespace, _draft(body, principal), principal.actor)
    if not result.created:
        response.status_code = 200
    return write_view(result)


@router.get("/v1/memories/{memory_id}")
@router.get("/v1/memory/{memory_id}", include_in_schema=False)
async def get_memory(memory_id: str, runtime: RuntimeDep, _: Reader) -> dict[str, Any]:
    store = runtime.writer.store
    memory = await store.get(memory_id)
    if memory is None:
        raise NotFound(f"memory {memory_id} not found")
    return {
        "memory": memory.as_dict(),
        "relations": await store.relations(memory_id),
        "events": await store.events(memory_id),
    }


@router.patch("/v1/memories/{memory_id}")
@router.patch("/v1/memory/{memory_id}", include_in_schema=False)
async def edit_memory(memory_id: str, body: MemoryPatch, runtime: RuntimeDep, principal: Writer) -> dict[str, Any]:
    result = await runtime.writer.edit(memory_id, _draft(body, principal), principal.actor, status=body.status)
    return write_view(result)


@router.delete("/v1/memories/{memory_id}")
@router.delete("/v1/memory/{memory_id}", include_in_schema=False)
async def delete_memory(
    memory_id: str,
    runtime: RuntimeDep,
    principal: Writer,
    hard: Annotated[bool, Query(description="Remove the row too (owner only), once its vector is gone.")] = False,
) -> dict[str, Any]:
    if hard:
        principal.require(OWNER)
    result = await runtime.writer.delete(memory_id, principal.actor, hard=hard)
    return write_view(result)


@router.post("/v1/memories/{memory_id}/supersede", status_code=201)
@router.post("/v1/memory/{memory_id}/supersede", status_code=201, include_in_schema=False)
async def supersede_memory(memory_id: str, body: MemoryWrite, runtime: RuntimeDep, principal: Writer) -> dict[str, Any]:
    """Write a new version; the old one becomes history (``superseded``)."""
    result = await runtime.writer.supersede(body.namespace, memory_id, _draft(body, principal), principal.actor)
    return write_view(result)


@router.post("/v1/memories/{memory_id}/archive")
@router.post("/v1/memory/{memory_id}/archive", include_in_schema=False)
async def archive_memory(memory_id: str, runtime: RuntimeDep, principal: Writer) -> dict[str, Any]:
    return write_view(await runtime.writer.archive(memory_id, principal.actor))


@router.post("/v1/memories/{memory_id}/relations", status_code=201)
@router.post("/v1/memory/{memory_id}/relations", status_code=201, include_in_schema=False)
async def relate_memory(memory_id: str, body: RelationWrite, runtime: RuntimeDep, principal: Writer) -> dict[str, Any]:
    """A typed, weighted edge from this memory to another (recall follows it one hop)."""
    edge = await runtime.writer.relate(memory_id, body.target_id, body.relation, body.weight, principal.actor)
    return {"relation": edge}


@router.delete("/v1/memories/{memory_id}/relations/{relation_id}")
@router.delete("/v1/memory/{memory_id}/relations/{relation_id}", include_in_schema=False)
async def unrelate_memory(memory_id: str, relation_id: str, runtime: RuntimeDep, principal: Writer) -> dict[str, Any]:
    await runtime.writer.unrelate(memory_id, relation_id, principal.actor)
    return {"deleted": True, "id": relation_id}
