"""/health; the vector mirror's health and rebuild under /v1/debug; the health report,
its repairs and the scan for messages no memory cites under /v1/health."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from ..application import doctor
from ..application import health as use_cases
from ..application.doctor import HealthReportAnswer, RepairAnswer, RepairRequest, UnanchoredPage, UnanchoredQuery
from ..application.fields import Cursor, ShortPageLimit
from ..application.health import Health, ReindexProgress, ReindexRequest, VectorHealth
from ..application.principal import Principal
from ..application.use_case import Nothing
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
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


@router.get("/v1/health/report")
async def health_report(
    runtime: RuntimeDep, principal: Annotated[Principal, allowed(doctor.report)]
) -> HealthReportAnswer:
    """Each check ok, warn or fail with a number; ``ok`` is false when one failed."""
    return await doctor.report(runtime, principal, Nothing())


@router.post("/v1/health/repair")
async def health_repair(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(doctor.repair)],
    body: Annotated[RepairRequest | None, Body()] = None,
) -> RepairAnswer:
    """Keep a backup, fix what needs no judgement, and answer the report afterwards."""
    return await doctor.repair(runtime, principal, body or RepairRequest())


@router.get("/v1/health/unanchored")
async def health_unanchored(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(doctor.unanchored)],
    namespace: NamespaceQuery = "default",
    limit: Annotated[ShortPageLimit, Query()] = 50,
    cursor: Annotated[Cursor | None, Query()] = None,
) -> UnanchoredPage:
    """The user's messages older than a day that no memory cites, newest first."""
    query = UnanchoredQuery(namespace=namespace, limit=limit, cursor=cursor)
    return await doctor.unanchored(runtime, principal, query)
