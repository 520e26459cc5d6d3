"""Which live memories a new one contradicts, and the record of each pair for the owner.

The text rules (``domain/contradictions.py``) decide; this chooses what they compare the
new memory with, in one namespace, among active current memories:

- its fact_key family: the key without its last segment, when that leaves at least two
  segments (``user.coffee.opinion`` → ``user.coffee``: the memories keyed ``user.coffee``
  and ``user.coffee.*``; a one-segment prefix such as ``user`` or ``pref`` names no
  subject);
- what the full-text index finds by the words its claim is about, and by a slot's cue
  words when it fills one ("moved to Berlin" looks up memories about where the user
  lives): see ``lookup_terms``;
- its nearest neighbours in the vector index, when the index is up (from the vector
  the writer has just made, when it made one).

Their texts are read in one query. A text with neither such words nor a slot is compared
with nothing, and two happenings (events) are not compared: see ``HAPPENINGS``. A
memory of the same family, or at least ``SAME_SUBJECT_RELEVANCE`` similar, is known to
share the subject, and the rules then need fewer shared words.

A pair found becomes a ``contradicts`` edge from the newer to the older and a review
candidate of kind ``contradiction``: ``target_memory_id`` is the older memory and
``result_memory_id`` the newer one, the one that stands unless the owner says otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..domain.candidate import Candidate
from ..domain.contradictions import HAPPENINGS, contradiction, lookup_terms, read_claim, read_slots
from ..domain.memory import Evidence, Memory
from ..ports import Database, InfrastructureError, Statement
from ..store.candidates import CandidateStore
from ..store.memories import MemoryStore
from .vector_mirror import VectorMirror

# Mapped similarity (0–1 on the embedder's own scale) at which two memories are taken to
# be about the same thing.
SAME_SUBJECT_RELEVANCE = 0.8
# How many memories each way of looking brings to the rules.
_LOOKED_AT = 20
# At most this many pairs are recorded for one write: more would bury the review queue.
MAX_PAIRS = 3


def fact_key_family(fact_key: str | None) -> str | None:
    if not fact_key:
        return None
    family, dot, _ = fact_key.rpartition(".")
    return family if dot and "." in family else None


@dataclass(frozen=True)
class Contradiction:
    older: Memory
    reason: str


class Contradictions:
    def __init__(self, db: Database, mirror: VectorMirror, new_id: Callable[[], str] = lambda: str(uuid.uuid4())):
        self.db = db
        self.mirror = mirror
        self.new_id = new_id
        self.memories = MemoryStore(db)
        self.candidates = CandidateStore(db)

    async def find(
        self,
        namespace: str,
        content: str,
        fact_key: str | None,
        memory_type: str,
        *,
        memory_id: str | None = None,
        vector: Sequence[float] | None = None,
    ) -> list[Contradiction]:
        """The live memories ``content`` (of ``memory_type``) contradicts, oldest first.
        ``memory_id`` is the new memory when it is already stored, ``vector`` its vector
        when the writer has just made it (else the stored one is read, or one is made); a
        vector index or embedder that is down leaves the other ways of looking."""
        claim, slots = read_claim(content), read_slots(content)
        if not claim.words and not slots:
            # The rules compare shared words or a slot's value: a text with neither contradicts nothing.
            return []
        try:
            near = await self.mirror.similar(
                namespace, memory_id=memory_id, vector=vector, text=content, top_k=_LOOKED_AT // 4
            )
        except InfrastructureError:  # the words and the fact key still find the obvious pairs
            near = []
        rows = await self.memories.comparable(
            namespace,
            terms=lookup_terms(content),
            family=fact_key_family(fact_key),
            ids=[id_ for id_, _ in near],
            exclude_types=sorted(HAPPENINGS) if memory_type in HAPPENINGS else (),
            limit=_LOOKED_AT,
        )
        known_subject = {r.id for r in rows if r.in_family}
        known_subject.update(id_ for id_, relevance in near if relevance >= SAME_SUBJECT_RELEVANCE)
        texts = {r.id: r for r in rows if r.id != memory_id}
        reasons: dict[str, str] = {}
        for row in sorted(texts.values(), key=lambda r: (r.created_at, r.id)):
            reason = contradiction(content, row.content, same_subject=row.id in known_subject)
            if reason:
                reasons[row.id] = reason
            if len(reasons) == MAX_PAIRS:
                break
        found = {m.id: m for m in await self.memories.get_many(list(reasons))} if reasons else {}
        return [Contradiction(found[id_], reason) for id_, reason in reasons.items() if id_ in found]

    async def record(self, newer: Memory, pairs: list[Contradiction], actor: str, now: str) -> list[str]:
        """An edge, a review candidate and an event for each pair not already waiting
        for the owner; returns what was recorded, as notes for the writer's answer."""
        statements: list[Statement] = []
        notes: list[str] = []
        for pair in pairs:
            older = pair.older
            if await self.candidates.pending_contradiction(older.id, newer.id):
                continue
            candidate = contradiction_candidate(
                newer.namespace,
                newer.content,
                newer.type,
                newer.fact_key,
                older,
                pair.reason,
                now,
                self.new_id(),
                importance=newer.importance,
                confidence=newer.confidence,
                evidence=newer.evidence,
                source_message_ids=newer.source_message_ids,
                newer_id=newer.id,
            )
            statements += [
                MemoryStore.add_relation(self.new_id(), newer.namespace, newer.id, older.id, "contradicts", 1.0, now),
                CandidateStore.insert(candidate),
                MemoryStore.event(
                    newer.namespace,
                    newer.id,
                    "contradiction_found",
                    actor,
                    {"older": older.id, "reason": pair.reason, "candidate": candidate.id},
                    now,
                ),
            ]
            notes.append(
                f"contradicts memory {older.id} ({pair.reason}); review candidate {candidate.id} asks which one stands"
            )
        if statements:
            await self.db.batch(statements)
        return notes


def contradiction_candidate(
    namespace: str,
    content: str,
    type_: str,
    fact_key: str | None,
    older: Memory,
    reason: str,
    now: str,
    candidate_id: str,
    *,
    importance: float,
    confidence: float,
    evidence: list[Evidence],
    source_message_ids: list[str],
    newer_id: str | None = None,
) -> Candidate:
    """The review candidate for a pair. Its content is the newer claim; from the dream,
    where the newer claim is not a memory yet, ``result_memory_id`` stays empty until the
    owner approves it."""
    return Candidate(
        id=candidate_id,
        namespace=namespace,
        kind="contradiction",
        type=type_,
        content=content,
        fact_key=fact_key,
        importance=importance,
        confidence=confidence,
        evidence=evidence,
        source_message_ids=source_message_ids,
        target_memory_id=older.id,
        result_memory_id=newer_id,
        reason=question(older, reason),
        created_at=now,
        updated_at=now,
    )


def question(older: Memory, reason: str) -> str:
    """What a contradiction candidate asks the owner."""
    return f"Contradicts an older memory ({reason}): “{older.content}”. Which one stands?"
