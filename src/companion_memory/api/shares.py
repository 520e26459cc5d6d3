"""/v1/shares: memories shared across namespaces, proposed, decided and revoked."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query

from ..application import shares
from ..application.fields import PageLimit
from ..application.principal import Principal
from ..application.shares import ShareDetail, SharePage
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["shares"], route_class=JsonRoute)

# A decision's body is optional: {"reason": "..."}.
Reason = Annotated[shares.ShareReason | None, Body()]


def _decision(share_id: str, body: shares.ShareReason | None) -> shares.ShareDecision:
    return shares.ShareDecision(id=share_id, reason=body.reason if body else None)


@router.post("/v1/shares", status_code=201)
async def propose_share(
    body: shares.ShareProposal, runtime: RuntimeDep, principal: Annotated[Principal, allowed(shares.propose_share)]
) -> ShareDetail:
    return await shares.propose_share(runtime, principal, body)


@router.get("/v1/shares")
async def list_shares(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(shares.list_shares)],
    namespace: Annotated[str | None, Query(description="Only shares out of or into this namespace.")] = None,
    status: Annotated[
        list[str] | None,
        Query(description="proposed, approved, rejected or revoked (default the open ones); repeat or comma-separate."),
    ] = None,
    limit: Annotated[PageLimit, Query()] = 50,
) -> SharePage:
    statuses = [s.strip() for value in status or [] for s in value.split(",") if s.strip()]
    query = shares.ShareQuery(namespace=namespace, statuses=statuses, limit=limit)
    return await shares.list_shares(runtime, principal, query)


@router.get("/v1/shares/{share_id}")
async def get_share(
    share_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(shares.get_share)]
) -> ShareDetail:
    return await shares.get_share(runtime, principal, shares.ShareId(id=share_id))


@router.post("/v1/shares/{share_id}/approve")
async def approve_share(
    share_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(shares.approve_share)],
    body: Reason = None,
) -> ShareDetail:
    return await shares.approve_share(runtime, principal, _decision(share_id, body))


@router.post("/v1/shares/{share_id}/reject")
async def reject_share(
    share_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(shares.reject_share)],
    body: Reason = None,
) -> ShareDetail:
    return await shares.reject_share(runtime, principal, _decision(share_id, body))


@router.post("/v1/shares/{share_id}/revoke")
async def revoke_share(
    share_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(shares.revoke_share)],
    body: Reason = None,
) -> ShareDetail:
    return await shares.revoke_share(runtime, principal, _decision(share_id, body))
