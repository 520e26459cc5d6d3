"""The review queue: what the owner does with the dream's candidates.

Applying a candidate is an automatic write the owner agreed to: it passes the
sensitive-data filter and may not change a hand-authored memory (409). A candidate is
claimed before it is applied, so approving twice never applies it twice.

A ``contradiction`` candidate asks which of two memories stands: approving keeps the
newer claim (the older is superseded by it), discarding keeps the older (the newer is
archived). Between two stored memories that is the owner's own choice, so a hand-authored
memory may be the one set aside. From the dream the newer claim is no memory yet:
approving writes it over the older as any update does, discarding writes nothing. Merge
and supersede do not apply to a contradiction. When both stand, the owner removes the
``contradicts`` edge, and that closes the question (MemoryWriter.unrelate).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..clock import iso
from ..domain.candidate import Candidate
from ..domain.memory import Memory
from ..errors import Conflict, NotFound, ServiceError
from ..ports import Clock, Database, InfrastructureError
from ..store.candidates import CandidateStore
from .config import MemoryConfig
from .drafts import Actor, MemoryDraft, WriteResult
from .memories import MemoryWriter
from .vector_mirror import VectorMirror

# Applies a claimed candidate: what was done, the write it made, and notes for the answer.
Apply = Callable[[Candidate, Actor], Awaitable[tuple[str, WriteResult | None, list[str]]]]


@dataclass(frozen=True)
class Decided:
    """What a decision did (created, upserted, superseded, archived, merged or discarded),
    the candidate as it now stands, and the memory written, if any."""

    action: str
    candidate: Candidate
    memory: Memory | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class CandidateReview:
    db: Database
    writer: MemoryWriter
    mirror: VectorMirror
    clock: Clock
    config: MemoryConfig

    @property
    def store(self) -> CandidateStore:
        return CandidateStore(self.db)

    async def approve(self, candidate_id: str, reviewer: str) -> Decided:
        return await self._decide(candidate_id, "approved", reviewer, self._apply)

    async def supersede(self, candidate_id: str, target_id: str, reviewer: str) -> Decided:
        async def apply(candidate: Candidate, actor: Actor) -> tuple[str, WriteResult | None, list[str]]:
            _not_a_contradiction(candidate)
            result = await self.writer.supersede(candidate.namespace, target_id, _draft(candidate), actor)
            return "superseded" if result.old_status != "missing" else "created", result, result.notes

        return await self._decide(candidate_id, "superseded", reviewer, apply)

    async def merge(self, candidate_id: str, target_id: str, reviewer: str) -> Decided:
        async def apply(candidate: Candidate, actor: Actor) -> tuple[str, WriteResult | None, list[str]]:
            _not_a_contradiction(candidate)
            target = await self._active(target_id)
            # The target said again: the writer adds the evidence and sources to its own.
            draft = MemoryDraft(
                importance=max(target.importance, candidate.importance),
                confidence=max(target.confidence, candidate.confidence),
                evidence=candidate.evidence,
                source_message_ids=candidate.source_message_ids,
            )
            return "merged", await self.writer.merge_into(target.id, draft, actor), []

        return await self._decide(candidate_id, "merged", reviewer, apply)

    async def discard(self, candidate_id: str, reviewer: str) -> Decided:
        async def apply(candidate: Candidate, actor: Actor) -> tuple[str, WriteResult | None, list[str]]:
            newer = candidate.result_memory_id if candidate.kind == "contradiction" else None
            if newer is None:
                return "discarded", None, []
            memory = await self.writer.store.get(newer)
            if memory is None or memory.status != "active":
                return "discarded", None, [f"memory {newer} is no longer active"]
            result = await self.writer.archive(newer, _owner(actor))
            return "archived", result, [*result.notes, "the older memory stands"]

        return await self._decide(candidate_id, "discarded", reviewer, apply)

    async def _decide(self, candidate_id: str, status: str, reviewer: str, apply: Apply) -> Decided:
        candidate = await self.store.get(candidate_id)
        if candidate is None:
            raise NotFound(f"candidate {candidate_id} not found")
        now = iso(self.clock.now())
        if not await self.store.claim(candidate_id, status, now):
            current = (await self.store.get(candidate_id) or candidate).status
            raise Conflict(f"candidate {candidate_id} is already {current}", code="candidate_not_pending")
        try:
            action, result, notes = await apply(candidate, Actor(f"review:{reviewer}"))
        except ServiceError:
            await self.store.release(candidate_id, now)
            raise
        memory = result.memory if result else None
        await self.store.settle(candidate_id, memory.id if memory else None, "; ".join(notes) or None)
        settled = await self.store.get(candidate_id) or candidate
        return Decided(action, settled, memory, notes)

    async def _apply(self, candidate: Candidate, actor: Actor) -> tuple[str, WriteResult | None, list[str]]:
        """Approve: the target if it is still live, else by fact_key, else a near-duplicate,
        else a new memory. A delete candidate archives its target."""
        namespace, notes = candidate.namespace, list[str]()
        if candidate.kind == "contradiction" and candidate.result_memory_id and candidate.target_memory_id:
            result = await self.writer.resolve_contradiction(
                candidate.result_memory_id, candidate.target_memory_id, _owner(actor)
            )
            return result.action, result, result.notes
        target = await self.writer.store.get(candidate.target_memory_id) if candidate.target_memory_id else None
        live = target if target is not None and target.status == "active" else None
        if candidate.kind == "delete":
            if live is None:
                raise Conflict(
                    f"memory {candidate.target_memory_id} is no longer active; nothing to delete",
                    code="target_missing",
                )
            return "archived", await self.writer.archive(live.id, actor), notes
        draft = _draft(candidate)
        if live is not None:
            return "superseded", await self.writer.supersede(namespace, live.id, draft, actor), notes
        if candidate.target_memory_id:
            state = target.status if target else "gone"
            notes.append(f"target {candidate.target_memory_id} is {state}; applied as a new write instead")
        if draft.fact_key:
            return "upserted", await self.writer.upsert(namespace, draft, actor), notes
        similar = await self._near_duplicate(namespace, draft.content or "", notes)
        if similar:
            return "superseded", await self.writer.supersede(namespace, similar, draft, actor), notes
        return "created", await self.writer.create(namespace, draft, actor), notes

    async def _near_duplicate(self, namespace: str, content: str, notes: list[str]) -> str | None:
        """A live memory at cosine ≥ DEDUP_COSINE, or None; a vector failure fails open."""
        try:
            return await self.mirror.near_duplicate(namespace, content, self.config.dedup_cosine)
        except InfrastructureError as error:  # the duplicate check fails open
            notes.append(f"duplicate check skipped ({type(error).__name__})")
            return None

    async def _active(self, memory_id: str) -> Memory:
        memory = await self.writer.store.get(memory_id)
        if memory is None or memory.status != "active":
            raise Conflict(f"memory {memory_id} is not an active memory", code="target_missing")
        return memory


def _owner(actor: Actor) -> Actor:
    return Actor(actor.name, owner=True)


def _not_a_contradiction(candidate: Candidate) -> None:
    if candidate.kind == "contradiction":
        raise Conflict(
            "a contradiction is decided by approving it (the newer memory stands) or discarding it (the older stands)",
            code="contradiction_decision",
        )


def _draft(candidate: Candidate) -> MemoryDraft:
    return MemoryDraft(
        content=candidate.content,
        type=candidate.type,
        fact_key=candidate.fact_key,
        importance=candidate.importance,
        confidence=candidate.confidence,
        evidence=candidate.evidence,
        source_message_ids=candidate.source_message_ids,
        source="dream",
        valid_to=candidate.valid_to,
    )
