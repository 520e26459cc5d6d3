"""/v1/candidates: the review queue (list, approve, discard, merge, supersede)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..application import candidates
from ..application.candidates import (
    CandidateId,
    CandidatePage,
    CandidateQuery,
    CandidateStatus,
    CandidateTarget,
    Decision,
    Target,
)
from ..application.fields import Cursor, PageLimit
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["review queue"], route_class=JsonRoute)


@router.get("/v1/candidates")
async def list_candidates(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(candidates.list_candidates)],
    namespace: NamespaceQuery = "default",
    status: CandidateStatus = "pending",
    limit: Annotated[PageLimit, Query()] = 50,
    cursor: Annotated[Cursor | None, Query()] = None,
) -> CandidatePage:
    query = CandidateQuery(namespace=namespace, status=status, limit=limit, cursor=cursor)
    return await candidates.list_candidates(runtime, principal, query)


@router.post("/v1/candidates/{candidate_id}/approve")
async def approve(
    candidate_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(candidates.approve)]
) -> Decision:
    """Apply a candidate; ``action`` says how: created, upserted, superseded or archived."""
    return await candidates.approve(runtime, principal, CandidateId(id=candidate_id))


@router.post("/v1/candidates/{candidate_id}/discard")
async def discard(
    candidate_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(candidates.discard)]
) -> Decision:
    return await candidates.discard(runtime, principal, CandidateId(id=candidate_id))


@router.post("/v1/candidates/{candidate_id}/merge")
async def merge(
    candidate_id: str, body: Target, runtime: RuntimeDep, principal: Annotated[Principal, allowed(candidates.merge)]
) -> Decision:
    """Fold the candidate into an existing memory: its evidence is added, importance and
    confidence take the higher value."""
    return await candidates.merge(runtime, principal, CandidateTarget(id=candidate_id, target_id=body.target_id))


@router.post("/v1/candidates/{candidate_id}/supersede")
async def supersede(
    candidate_id: str,
    body: Target,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(candidates.supersede)],
) -> Decision:
    return await candidates.supersede(runtime, principal, CandidateTarget(id=candidate_id, target_id=body.target_id))
