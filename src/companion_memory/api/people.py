"""/v1/people: the people in the owner's life; /v1/person_proposals: what is proposed
about them (new people, merges), which the owner approves or rejects."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from ..application import people
from ..application.fields import LongPageLimit, PageLimit
from ..application.people import (
    MergeProposal,
    PersonAnswer,
    PersonChange,
    PersonDetail,
    PersonId,
    PersonPage,
    PersonQuery,
    PersonWrite,
    ProposalAnswer,
    ProposalDecision,
    ProposalId,
    ProposalPage,
    ProposalQuery,
    ProposalStatus,
)
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["people"], route_class=JsonRoute)


@router.post("/v1/people", status_code=201)
async def upsert_person(
    body: PersonWrite,
    response: Response,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(people.upsert_person)],
) -> PersonAnswer:
    """Add a person (201), or change the one already called by this name (200)."""
    answer = await people.upsert_person(runtime, principal, body)
    if not answer.created:
        response.status_code = 200
    return answer


@router.get("/v1/people")
async def list_people(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(people.list_people)],
    namespace: NamespaceQuery = "default",
    query: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[LongPageLimit, Query()] = 100,
) -> PersonPage:
    return await people.list_people(runtime, principal, PersonQuery(namespace=namespace, query=query, limit=limit))


@router.get("/v1/person_proposals")
async def list_proposals(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(people.list_proposals)],
    namespace: NamespaceQuery = "default",
    status: ProposalStatus = "pending",
    limit: Annotated[PageLimit, Query()] = 50,
) -> ProposalPage:
    query = ProposalQuery(namespace=namespace, status=status, limit=limit)
    return await people.list_proposals(runtime, principal, query)


@router.post("/v1/person_proposals", status_code=201)
async def propose_merge(
    body: MergeProposal, runtime: RuntimeDep, principal: Annotated[Principal, allowed(people.propose_merge)]
) -> ProposalAnswer:
    """Propose that ``other_id`` is one person with ``person_id``; the owner decides."""
    return await people.propose_merge(runtime, principal, body)


@router.post("/v1/person_proposals/{proposal_id}/approve")
async def approve_proposal(
    proposal_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(people.approve_proposal)]
) -> ProposalDecision:
    return await people.approve_proposal(runtime, principal, ProposalId(id=proposal_id))


@router.post("/v1/person_proposals/{proposal_id}/reject")
async def reject_proposal(
    proposal_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(people.reject_proposal)]
) -> ProposalDecision:
    return await people.reject_proposal(runtime, principal, ProposalId(id=proposal_id))


@router.get("/v1/people/{person_id}")
async def get_person(
    person_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(people.get_person)]
) -> PersonDetail:
    return await people.get_person(runtime, principal, PersonId(id=person_id))


@router.patch("/v1/people/{person_id}")
async def update_person(
    person_id: str,
    body: PersonWrite,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(people.update_person)],
) -> PersonAnswer:
    """Change a person's name, aliases, relation or notes (the body's namespace must be theirs)."""
    change = PersonChange(**body.model_dump(), id=person_id)
    return await people.update_person(runtime, principal, change)
