"""Shared memories: propose one into another namespace, the owner approves or rejects,
the owner (or the proposer) revokes; list them with their audit log."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from pydantic import Field, StringConstraints

from ..domain.scopes import MEMORY_READ, MEMORY_WRITE, OWNER
from ..memory.shares import SHARE_STATUSES, Decision
from ..runtime import Runtime
from .fields import CutPrivate, MemoryRef, Namespace, NamespaceName, PageLimit, ShareRef, ShortText
from .principal import Principal
from .use_case import Input, Output, use_case

Note = Annotated[str, StringConstraints(max_length=2000), CutPrivate]


class ShareProposal(Input):
    memory_id: Annotated[MemoryRef, Field(description="The memory to share; it stays in its own namespace.")]
    # Not a namespace the proposer acts in: the owner decides what is recalled there.
    target_namespace: Annotated[NamespaceName, Field(description="Where it should be recalled too, e.g. 'default'.")]
    note: Annotated[Note | None, Field(description="Why it is worth sharing, for the owner.")] = None


class ShareReason(Input):
    reason: Annotated[Note | None, Field(description="Kept in the share's audit log.")] = None


class ShareDecision(ShareReason):
    id: Annotated[ShareRef, Field(description="The share's id.")]


ShareStatus = Annotated[ShortText, Field(json_schema_extra={"enum": list(SHARE_STATUSES)})]


class ShareQuery(Input):
    namespace: Annotated[
        Namespace | None, Field(description="Only shares out of or into this namespace; omit for all.")
    ] = None
    statuses: Annotated[
        list[ShareStatus],
        Field(default_factory=list, max_length=4, description="Default proposed and approved (the open ones)."),
    ]
    limit: PageLimit = 50


class ShareRecord(Output):
    id: str
    memory_id: str
    source_namespace: str = Field(description="Where the memory lives.")
    target_namespace: str = Field(description="Where it is (or would be) recalled too.")
    status: str = Field(description="proposed, approved (recalled in the target), rejected or revoked.")
    proposed_by: str = Field(description="The key profile that proposed it.")
    decided_by: str | None = Field(description="Who approved, rejected or revoked it; 'system' when its memory died.")
    note: str | None = Field(description="The proposer's note.")
    reason: str | None = Field(description="The last decision's reason.")
    created_at: str
    updated_at: str
    decided_at: str | None


class ShareEvent(Output):
    id: int
    event: str = Field(description="proposed, approved, rejected or revoked.")
    actor: str
    reason: str | None
    created_at: str


class ShareDetail(ShareRecord):
    events: list[ShareEvent] = Field(description="The share's audit log, oldest first.")


class SharePage(Output):
    shares: list[ShareRecord] = Field(description="The most recently changed first.")
    count: int


class ShareId(Input):
    id: Annotated[ShareRef, Field(description="The share's id.")]


async def _detail(runtime: Runtime, share_id: str) -> ShareDetail:
    share, events = await runtime.sharing.history(share_id)
    return ShareDetail.model_validate({**dataclasses.asdict(share), "events": events}, from_attributes=True)


async def _decide(runtime: Runtime, principal: Principal, decision: ShareDecision, action: Decision) -> ShareDetail:
    await runtime.sharing.decide(decision.id, action, principal.actor, decision.reason)
    return await _detail(runtime, decision.id)


@use_case("shares.propose", MEMORY_WRITE)
async def propose_share(runtime: Runtime, principal: Principal, proposal: ShareProposal) -> ShareDetail:
    """Propose a memory for another namespace; it is recalled there once the owner approves."""
    share = await runtime.sharing.propose(proposal.memory_id, proposal.target_namespace, principal.actor, proposal.note)
    return await _detail(runtime, share.id)


@use_case("shares.approve", OWNER)
async def approve_share(runtime: Runtime, principal: Principal, decision: ShareDecision) -> ShareDetail:
    """Approve a proposed share: the memory is recalled in the target namespace from now on."""
    return await _decide(runtime, principal, decision, "approve")


@use_case("shares.reject", OWNER)
async def reject_share(runtime: Runtime, principal: Principal, decision: ShareDecision) -> ShareDetail:
    """Reject a proposed share: the memory stays in its own namespace."""
    return await _decide(runtime, principal, decision, "reject")


@use_case("shares.revoke", MEMORY_WRITE)
async def revoke_share(runtime: Runtime, principal: Principal, decision: ShareDecision) -> ShareDetail:
    """Revoke a proposed or approved share (the owner, or the key that proposed it)."""
    return await _decide(runtime, principal, decision, "revoke")


@use_case("shares.list", MEMORY_READ)
async def list_shares(runtime: Runtime, _: Principal, query: ShareQuery) -> SharePage:
    """Shares by status (default: the open ones), the most recently changed first."""
    shares = await runtime.sharing.listed(query.namespace, query.statuses, query.limit)
    return SharePage.model_validate({"shares": shares, "count": len(shares)}, from_attributes=True)


@use_case("shares.get", MEMORY_READ)
async def get_share(runtime: Runtime, _: Principal, query: ShareId) -> ShareDetail:
    """One share with its audit log."""
    return await _detail(runtime, query.id)
