"""People in the owner's life: the registry (name, aliases, relation, notes, familiarity),
and the proposals about them (new people, merges) that the owner approves or rejects."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from ..domain.scopes import MEMORY_READ, MEMORY_WRITE, OWNER
from ..memory.people.registry import MAX_ALIASES
from ..runtime import Runtime
from .fields import CutPrivate, Id, LongPageLimit, Namespace, PageLimit, PersonRef, ShortText, TrimmedWords
from .principal import Principal
from .records import MemoryRecord
from .use_case import Input, Output, use_case

PersonName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), TrimmedWords]
ProposalStatus = Literal["pending", "approved", "rejected"]
FAMILIARITY = (
    "0–1: each message that names them closes a tenth of the gap to 1; it halves every "
    "PEOPLE_FAMILIARITY_HALF_LIFE_DAYS without a mention."
)


# The answers' records of domain.person: a docstring would become their schema's description.
# When their familiarity was last set is left out: an answer gives it decayed to now.
class PersonRecord(BaseModel):
    id: str
    namespace: str
    name: str
    aliases: list[str] = Field(description="Other names they go by: 'my sister', '安娜'.")
    relation: str = Field(description="Who they are to the owner: sister, friend, colleague…")
    notes: str
    familiarity: float = Field(description=FAMILIARITY)
    mentions: int = Field(description="Messages that named them, by the nightly dream's count.")
    last_mentioned_at: str | None
    status: str = Field(description="active, or merged (into merged_into).")
    merged_into: str | None
    source: str
    created_at: str
    updated_at: str


# Without its dedup key.
class ProposalRecord(BaseModel):
    id: str
    namespace: str
    kind: str = Field(
        description="person: a new person (or, with person_id, new names for them); merge: other_id is one "
        "person with person_id, who stays."
    )
    name: str
    aliases: list[str]
    relation: str
    person_id: str | None
    other_id: str | None
    evidence: list[str] = Field(description="The words it was read from, verbatim.")
    reason: str
    status: str
    source: str
    created_at: str
    reviewed_at: str | None


class PersonListed(PersonRecord):
    memory_count: int = Field(description="Live memories about them.")


class PersonWrite(Input):
    namespace: Namespace = "default"
    name: PersonName
    aliases: Annotated[
        list[PersonName] | None,
        Field(
            max_length=MAX_ALIASES,
            description="Other names they go by ('my sister', '安娜'); given, these replace the old ones.",
        ),
    ] = None
    relation: (
        Annotated[str, Field(max_length=100, description="Who they are to the owner: sister, friend…"), CutPrivate]
        | None
    ) = None
    notes: Annotated[str, Field(max_length=4000), CutPrivate] | None = None
    source: ShortText = "api"


class PersonChange(PersonWrite):
    """A change of one person, by id (REST takes it from the path)."""

    id: PersonRef


class PersonId(Input):
    id: Annotated[PersonRef, Field(description="The person's id.")]


class PersonQuery(Input):
    namespace: Namespace = "default"
    query: Annotated[
        str | None, Field(max_length=200, description="Only the people this text names, or whose names start with it.")
    ] = None
    limit: LongPageLimit = 100


class MergeProposal(Input):
    namespace: Namespace = "default"
    person_id: Annotated[PersonRef, Field(description="The person who stays (their id and name are kept).")]
    other_id: Annotated[
        PersonRef, Field(description="The person merged into the one who stays: their names become aliases.")
    ]
    reason: Annotated[str, Field(max_length=500), CutPrivate] = ""
    source: ShortText = "api"


class ProposalQuery(Input):
    namespace: Namespace = "default"
    status: ProposalStatus = "pending"
    limit: PageLimit = 50


class ProposalId(Input):
    id: Id


class PersonAnswer(Output):
    person: PersonRecord
    created: bool = Field(False, description="True when the person is new.")


class PersonDetail(Output):
    person: PersonRecord
    memories: list[MemoryRecord] = Field(description="Live memories about them, the latest first (at most 20).")


class PersonPage(Output):
    people: list[PersonListed]
    count: int


class ProposalListed(ProposalRecord):
    person: PersonRecord | None = Field(description="The person person_id names, as they are now.")
    other: PersonRecord | None = Field(description="The person other_id names, as they are now.")


class ProposalAnswer(Output):
    proposal: ProposalRecord


class ProposalPage(Output):
    proposals: list[ProposalListed]
    count: int


class ProposalDecision(Output):
    proposal: ProposalRecord
    person: PersonRecord | None = Field(description="The person the approval wrote (for a merge, the survivor).")


@use_case("people.upsert", MEMORY_WRITE)
async def upsert_person(runtime: Runtime, _: Principal, write: PersonWrite) -> PersonAnswer:
    """Add a person, or change the one already called by this name."""
    person, created = await runtime.people.upsert(
        write.namespace,
        write.name,
        aliases=write.aliases,
        relation=write.relation,
        notes=write.notes,
        source=write.source,
    )
    return PersonAnswer.model_validate(
        {"person": runtime.people.shown(person), "created": created}, from_attributes=True
    )


@use_case("people.update", MEMORY_WRITE)
async def update_person(runtime: Runtime, _: Principal, change: PersonChange) -> PersonAnswer:
    """Change one person by id: their name, aliases, relation or notes."""
    person, _created = await runtime.people.upsert(
        change.namespace,
        change.name,
        person_id=change.id,
        aliases=change.aliases,
        relation=change.relation,
        notes=change.notes,
        source=change.source,
    )
    return PersonAnswer.model_validate({"person": runtime.people.shown(person)}, from_attributes=True)


@use_case("people.get", MEMORY_READ)
async def get_person(runtime: Runtime, _: Principal, target: PersonId) -> PersonDetail:
    """One person (a merged one points at the survivor) and the memories about them."""
    person, memories = await runtime.people.get(target.id)
    return PersonDetail(
        person=PersonRecord.model_validate(person, from_attributes=True),
        memories=[MemoryRecord.of(m) for m in memories],
    )


@use_case("people.list", MEMORY_READ)
async def list_people(runtime: Runtime, _: Principal, query: PersonQuery) -> PersonPage:
    """The people of a namespace, the most familiar first."""
    people = await runtime.people.listed(query.namespace, query.query, query.limit)
    listed = [PersonListed.model_validate({**p.as_dict(), "memory_count": n}) for p, n in people]
    return PersonPage(people=listed, count=len(listed))


@use_case("people.propose_merge", MEMORY_WRITE)
async def propose_merge(runtime: Runtime, _: Principal, proposal: MergeProposal) -> ProposalAnswer:
    """Propose that two people are one, for the owner to approve or reject."""
    stored = await runtime.person_proposals.propose_merge(
        proposal.namespace, proposal.person_id, proposal.other_id, proposal.reason, proposal.source
    )
    return ProposalAnswer.model_validate({"proposal": stored}, from_attributes=True)


@use_case("people.proposals", MEMORY_READ)
async def list_proposals(runtime: Runtime, _: Principal, query: ProposalQuery) -> ProposalPage:
    """Proposals about people of one status, newest first."""
    found = await runtime.person_proposals.proposals(query.namespace, query.status, query.limit)
    listed = [
        ProposalListed.model_validate(
            {**about.proposal.as_dict(), "person": about.person, "other": about.other}, from_attributes=True
        )
        for about in found
    ]
    return ProposalPage(proposals=listed, count=len(listed))


@use_case("people.approve", OWNER)
async def approve_proposal(runtime: Runtime, _: Principal, target: ProposalId) -> ProposalDecision:
    """Apply a proposal: the new person, their new names, or the merge (the other person's
    names become aliases, their memories are re-pointed to the survivor)."""
    proposal, person = await runtime.person_proposals.approve(target.id)
    return ProposalDecision.model_validate({"proposal": proposal, "person": person}, from_attributes=True)


@use_case("people.reject", OWNER)
async def reject_proposal(runtime: Runtime, _: Principal, target: ProposalId) -> ProposalDecision:
    """Set a proposal aside; both people stay as they are."""
    proposal = await runtime.person_proposals.reject(target.id)
    return ProposalDecision.model_validate({"proposal": proposal, "person": None}, from_attributes=True)
