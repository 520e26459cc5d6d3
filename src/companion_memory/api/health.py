"""/health, and the vector mirror's health and rebuild under /v1/debug."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

from ..application import health as use_cases
from ..application.health import Health, ReindexProgress, ReindexRequest, VectorHealth
from ..application.principal import Principal
from ..application.use_case import Nothing
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["health"], route_class=JsonRoute)


@router.get("/health")
async def health(runtime: RuntimeDep) -> Health:
    return await use_cases.liveness(runtime)


@router.get("/v1/debug/vector_health")
async def vector_health(
    runtime: RuntimeDep, principal: Annotated[Principal, allowed(use_cases.vector_health)]
) -> VectorHealth:
    return await use_cases.vector_health(runtime, principal, Nothing())


@router.post("/v1/debug/vector_reindex")
async def vector_reindex(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(use_cases.vector_reindex)],
    body: Annotated[ReindexRequest | None, Body()] = None,
) -> ReindexProgress:
    """Rebuild the vector index from the database, one batch per call: call again until
    ``done`` is true (the answer carries the progress)."""
    return await use_cases.vector_reindex(runtime, principal, body or ReindexRequest())
