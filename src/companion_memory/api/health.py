"""/health, and the vector mirror's health and rebuild under /v1/debug."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body
from pydantic import Field

from .. import __version__
from ..runtime import Runtime
from .auth import DEBUG, Principal, requires
from .deps import RuntimeDep
from .json_body import JsonRoute
from .schemas import Request

router = APIRouter(tags=["health"], route_class=JsonRoute)
Debugger = Annotated[Principal, requires(DEBUG)]
# Counting rows missing from the mirror reads the index in pages; stop after this many.
MISSING_COUNT_LIMIT = 5000


class ReindexRequest(Request):
    # Start over: empty the index and queue every live memory. Without it, a call
    # continues the rebuild in progress (or starts one if the embedder changed).
    restart: bool = False
    batch: Annotated[int, Field(ge=1, le=500)] = 100


@router.get("/health")
async def health(runtime: RuntimeDep) -> dict[str, Any]:
    await runtime.db.first("SELECT 1 AS ok")
    return {"ok": True, "service": "companion-memory", "version": __version__}


async def _progress(runtime: Runtime) -> dict[str, Any]:
    active = await runtime.writer.store.count_live()
    outbox = await runtime.mirror.outbox.stats()
    return {"active_memories": active, "pending": outbox["pending"], "done": outbox["pending"] == 0}


@router.get("/v1/debug/vector_health")
async def vector_health(runtime: RuntimeDep, _: Debugger) -> dict[str, Any]:
    missing, exact = await runtime.mirror.missing(MISSING_COUNT_LIMIT)
    return {
        "embedding_model": runtime.embedder.model,
        "dimensions": runtime.embedder.dimensions,
        "index": await runtime.mirror.state.get(),
        "mismatch": await runtime.mirror.mismatch(),
        "indexed_vectors": await runtime.vectors.count(),
        "active_memories": await runtime.writer.store.count_live(),
        "missing_from_index": missing,
        "missing_count_complete": exact,
        "outbox": await runtime.mirror.outbox.stats(),
        "task_queue": await runtime.queue.stats() if runtime.queue else None,
    }


@router.post("/v1/debug/vector_reindex")
async def vector_reindex(
    runtime: RuntimeDep, _: Debugger, body: Annotated[ReindexRequest | None, Body()] = None
) -> dict[str, Any]:
    """Rebuild the vector index from the database, one batch per call: call again until
    ``done`` is true (the answer carries the progress)."""
    body = body or ReindexRequest()
    queued = None
    if body.restart or await runtime.mirror.mismatch():
        queued = await runtime.mirror.start_reindex()
    step = await runtime.mirror.drain(body.batch)
    return {
        **({"queued": queued} if queued is not None else {}),
        "indexed_now": step.synced,
        "failed_now": step.failed,
        **await _progress(runtime),
    }
