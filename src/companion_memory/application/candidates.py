"""The review queue: the dream's candidate memories, which the owner applies or discards."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..domain.candidate import Candidate
from ..domain.scopes import MEMORY_READ, OWNER
from ..memory.candidates import Decided
from ..runtime import Runtime
from .fields import Cursor, Id, Namespace, PageLimit
from .principal import Principal
from .records import EvidenceRecord, MemoryRecord
from .use_case import Input, Output, use_case

CandidateStatus = Literal["pending", "approved", "discarded", "merged", "superseded"]


class CandidateRecord(BaseModel):
    id: str
    namespace: str
    kind: str = Field(
        description="add, update, delete, or contradiction: the content contradicts the target memory, and the "
        "owner says which one stands (approve: the newer; discard: the older)."
    )
    type: str
    content: str
    fact_key: str | None
    importance: float
    confidence: float
    evidence: list[EvidenceRecord]
    source_message_ids: list[str]
    valid_to: str | None = Field(description="A plan's last day (or end time), when the candidate is a plan.")
    target_memory_id: str | None = Field(
        description="The memory an update or delete is about; for a contradiction, the older memory."
    )
    result_memory_id: str | None = Field(
        description="The memory the decision wrote; for a contradiction found on a write, the newer memory."
    )
    status: str
    reason: str | None
    dream_run_id: str | None
    created_at: str
    updated_at: str
    reviewed_at: str | None

    @classmethod
    def of(cls, candidate: Candidate) -> CandidateRecord:
        return cls.model_validate(candidate, from_attributes=True)


class CandidateQuery(Input):
    namespace: Namespace = "default"
    status: CandidateStatus = "pending"
    limit: PageLimit = 50
    cursor: Cursor | None = None


class CandidateId(Input):
    id: Id


class Target(Input):
    target_id: Annotated[Id, Field(description="The memory to merge into or supersede.")]


class CandidateTarget(Target, CandidateId):
    """A candidate and the memory it is applied to: REST takes the candidate from the path."""


class CandidatePage(Output):
    candidates: list[CandidateRecord]
    count: int
    next_cursor: str | None


class Decision(Output):
    action: str = Field(
        description="created, upserted, superseded, archived, merged or discarded: what the decision did."
    )
    candidate: CandidateRecord
    memory: MemoryRecord | None = Field(None, description="The memory written, if any.")
    notes: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, decided: Decided) -> Decision:
        return cls(
            action=decided.action,
            candidate=CandidateRecord.of(decided.candidate),
            memory=None if decided.memory is None else MemoryRecord.of(decided.memory),
            notes=decided.notes,
        )


@use_case("candidates.list", MEMORY_READ)
async def list_candidates(runtime: Runtime, _: Principal, query: CandidateQuery) -> CandidatePage:
    """Candidates of one status, newest first; page with the cursor."""
    items, next_cursor = await runtime.candidates.store.page(
        query.namespace, query.status, limit=query.limit, cursor=query.cursor
    )
    return CandidatePage(candidates=[CandidateRecord.of(c) for c in items], count=len(items), next_cursor=next_cursor)


@use_case("candidates.approve", OWNER)
async def approve(runtime: Runtime, principal: Principal, target: CandidateId) -> Decision:
    """Apply a candidate; ``action`` says how: created, upserted, superseded or archived. A
    contradiction keeps the newer memory and supersedes the older."""
    return Decision.of(await runtime.candidates.approve(target.id, principal.profile))


@use_case("candidates.discard", OWNER)
async def discard(runtime: Runtime, principal: Principal, target: CandidateId) -> Decision:
    """Set a candidate aside without writing anything; a contradiction found on a write
    keeps the older memory and archives the newer."""
    return Decision.of(await runtime.candidates.discard(target.id, principal.profile))


@use_case("candidates.merge", OWNER)
async def merge(runtime: Runtime, principal: Principal, target: CandidateTarget) -> Decision:
    """Fold the candidate into an existing memory: its evidence is added, importance and
    confidence take the higher value."""
    return Decision.of(await runtime.candidates.merge(target.id, target.target_id, principal.profile))


@use_case("candidates.supersede", OWNER)
async def supersede(runtime: Runtime, principal: Principal, target: CandidateTarget) -> Decision:
    """Replace an existing memory with the candidate."""
    return Decision.of(await runtime.candidates.supersede(target.id, target.target_id, principal.profile))
