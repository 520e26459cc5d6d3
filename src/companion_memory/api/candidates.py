"""/v1/candidates: the review queue (list, approve, discard, merge, supersede)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from .auth import MEMORY_READ, OWNER, Principal, requires
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute
from .schemas import Id, Request

router = APIRouter(tags=["review queue"], route_class=JsonRoute)
Owner = Annotated[Principal, requires(OWNER)]


class Target(Request):
    target_id: Id


@router.get("/v1/candidates")
async def list_candidates(
    runtime: RuntimeDep,
    _: Annotated[Principal, requires(MEMORY_READ)],
    namespace: NamespaceQuery = "default",
    status: Literal["pending", "approved", "discarded", "merged", "superseded"] = "pending",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> dict[str, Any]:
    items, next_cursor = await runtime.review.store.page(namespace, status, limit=limit, cursor=cursor)
    return {"candidates": items, "count": len(items), "next_cursor": next_cursor}


@router.post("/v1/candidates/{candidate_id}/approve")
async def approve(candidate_id: str, runtime: RuntimeDep, principal: Owner) -> dict[str, Any]:
    """Apply a candidate; ``action`` says how: created, upserted, superseded or archived."""
    return await runtime.review.approve(candidate_id, principal.profile)


@router.post("/v1/candidates/{candidate_id}/discard")
async def discard(candidate_id: str, runtime: RuntimeDep, principal: Owner) -> dict[str, Any]:
    return await runtime.review.discard(candidate_id, principal.profile)


@router.post("/v1/candidates/{candidate_id}/merge")
async def merge(candidate_id: str, body: Target, runtime: RuntimeDep, principal: Owner) -> dict[str, Any]:
    """Fold the candidate into an existing memory: its evidence is added, importance and
    confidence take the higher value."""
    return await runtime.review.merge(candidate_id, body.target_id, principal.profile)


@router.post("/v1/candidates/{candidate_id}/supersede")
async def supersede(candidate_id: str, body: Target, runtime: RuntimeDep, principal: Owner) -> dict[str, Any]:
    return await runtime.review.supersede(candidate_id, body.target_id, principal.profile)
