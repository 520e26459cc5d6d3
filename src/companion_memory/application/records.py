"""The records answers are made of, one model each, so every surface serialises a
memory, a hit or a write result the same way and ``/openapi.json`` and MCP's
``outputSchema`` describe them exactly."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, Field

from ..domain.episode import Episode
from ..domain.memory import Memory
from ..gateway.context import Assembled, stored_day
from ..memory.drafts import WriteResult
from ..memory.recall.hits import Hit, RecallMeta, RecallResult


class EvidenceRecord(BaseModel):
    quote: str
    message_id: str | None = None


class MemoryFacts(BaseModel):
    """What a memory says and how it stands: every column but its evidence and sources."""

    id: str
    namespace: str
    type: str
    content: str
    fact_key: str | None
    importance: float
    confidence: float
    status: str
    version_status: str
    superseded_by: str | None
    pinned: bool
    tags: list[str]
    source: str
    authored_by: str | None
    seen_count: int
    recall_count: int
    last_injected_at: str | None
    last_seen_at: str | None
    created_at: str
    updated_at: str
    valid_to: str | None = Field(description="Plans: the day (YYYY-MM-DD) or UTC time the plan is good until.")
    plan_status: str | None = Field(description="Plans: active, done, abandoned or expired; null for other types.")
    layer: str = Field(description="instant, short, long, cold or permanent.")
    layer_reason: str | None = Field(description="Why the memory is in its layer.")
    layer_at: str | None = Field(description="Since when (for an instant memory: when it last woke).")
    revivals: int = Field(description="How often an instant memory was recalled or said again.")


class MemoryRecord(MemoryFacts):
    source_message_ids: list[str]
    evidence: list[EvidenceRecord]

    @classmethod
    def of(cls, memory: Memory) -> MemoryRecord:
        return cls.model_validate(memory.as_dict())


class HitRecord(MemoryFacts):
    """A recalled memory (without its evidence and sources) and how it was found. An
    episode (what was said, listed in meta.episodes) comes as a memory of type ``episode``,
    created and updated when it was said, with its role and conversation."""

    score: float
    raw_score: float | None = Field(description="Relevance before decay; null when no similarity could be had.")
    decayed: bool
    channels: dict[str, int] = Field(description="Retrieval channel → 1-based rank in it.")
    via: str | None = Field(description="The hit whose relation brought this one in.")
    contradicted_by: list[str] = Field(
        description="Older live memories this one contradicts; they stay out of recall until the owner decides."
    )
    share_id: str | None = Field(
        description="Set when the memory lives in another namespace (its namespace field) and came in "
        "through this approved share."
    )
    day: str = Field(description="The day it last changed in DREAM_TIME_ZONE, as the <memories> block dates it.")
    role: str | None = Field(None, description="Episodes: who said it (user, assistant, system or tool).")
    speaker: str | None = Field(None, description="Episodes: the speaker's name, when the client gave one.")
    conversation_id: str | None = Field(None, description="Episodes: the conversation it was said in.")

    @classmethod
    def of(cls, hit: Hit, time_zone: str) -> HitRecord:
        return cls.model_validate(
            {
                **hit.memory.as_dict(exclude=frozenset({"evidence", "source_message_ids"})),
                "score": round(hit.score, 6),
                "raw_score": None if hit.raw_score is None else round(hit.raw_score, 6),
                "decayed": hit.decayed,
                "channels": hit.channels,
                "via": hit.via,
                "contradicted_by": hit.contradicted_by,
                "share_id": hit.share_id,
                "day": stored_day(hit.memory.updated_at, time_zone),
                **(
                    {}
                    if hit.episode is None
                    else {
                        "role": hit.episode.role,
                        "speaker": hit.episode.speaker,
                        "conversation_id": hit.episode.conversation_id,
                    }
                ),
            }
        )


class PlanRecord(BaseModel):
    """A plan, in short."""

    id: str
    content: str
    valid_to: str | None = Field(
        description="The day (YYYY-MM-DD) or UTC time the plan is good until; null: open-ended."
    )
    plan_status: str = Field(description="active, done, abandoned or expired.")
    fact_key: str | None
    created_at: str


class GlossaryEntry(BaseModel):
    id: str
    namespace: str
    term: str
    aliases: list[str]
    definition: str
    created_at: str
    updated_at: str


class GlossaryHit(GlossaryEntry):
    matched: str = Field(description="The term or alias the text mentioned.")


class ScorePartsRecord(BaseModel):
    """score = relevance × weight × decay; weight = (0.5 + importance) × (0.6 + 0.4 × freshness) × authored."""

    relevance: float = Field(description="The fused rank score, or the reranker's.")
    raw_score: float | None = Field(description="The relevance the floor reads (0–1); null when none could be had.")
    importance: float = Field(description="Learned: set importance, mentions, recalls, evidence and type (0–1).")
    freshness: float = Field(description="0.5 ^ (days unused / the type's half-life); 1 for types that do not fade.")
    authored: float = Field(description="1.15 for a memory written by hand, else 1.")
    weight: float
    decay: float = Field(description="0.5 when injected within the decay window, else 1.")
    score: float


class SectionReportRecord(BaseModel):
    cap: int = Field(description="The section's own share of CONTEXT_BUDGET_TOKENS.")
    tokens: int = Field(description="Tokens it used (more than its cap when others left room).")
    kept: int = Field(description="Lines kept.")
    cut: int = Field(description="Lines cut for want of room.")


class ContextBlock(BaseModel):
    text: str = Field(
        description="The <memories> block: its sections under the token budget; empty when none has a line."
    )
    sections: dict[str, SectionReportRecord] = Field(
        description="remember, doing, impressions, shared: what each kept and cut."
    )

    @classmethod
    def of(cls, assembled: Assembled) -> ContextBlock:
        return cls.model_validate(dataclasses.asdict(assembled))


class RecallMetaRecord(BaseModel):
    """How recall reached its hits: what each gate set aside and what degraded."""

    k: int
    min_score: float
    reranker: str | None = Field(description="off, skipped, failed or the reranking model; null when none ran.")
    decayed: list[str]
    deduped: list[str]
    floored: list[str]
    precious_overlap: list[str]
    contradicted: list[str] = Field(description="Older memories held back: a newer one contradicts them.")
    resting: list[str] = Field(
        description="Cold memories, asleep instant ones and episodes the query did not name, and archived "
        "episodes found by their meaning alone."
    )
    episodes: list[str] = Field(description="The hits that are episodes (what was said), not memories.")
    in_prompt: list[str] = Field(description="Episodes left out: the prompt holds them already.")
    evidence: list[str] = Field(description="Episodes left out: a memory returned was made from them.")
    notes: list[str]
    components: dict[str, ScorePartsRecord] = Field(description="Each hit's id → how its score was made.")
    context: dict[str, SectionReportRecord] = Field(
        default_factory=dict, description="With include_prompt: what each section of the block kept and cut."
    )

    @classmethod
    def of(cls, meta: RecallMeta) -> RecallMetaRecord:
        return cls.model_validate(dataclasses.asdict(meta))


class RecallAnswer(BaseModel):
    hits: list[HitRecord]
    glossary_hits: list[GlossaryHit]
    prompt: str | None = Field(
        None, description="The ready <memories> block to put in context (when asked for); empty when nothing passed."
    )
    meta: RecallMetaRecord

    @classmethod
    def of(cls, result: RecallResult, *, prompt: Assembled | None, time_zone: str) -> RecallAnswer:
        meta = RecallMetaRecord.of(result.meta)
        if prompt is not None:
            meta.context = ContextBlock.of(prompt).sections
        return cls(
            hits=[HitRecord.of(h, time_zone) for h in result.hits],
            glossary_hits=[GlossaryHit.model_validate(g, from_attributes=True) for g in result.glossary_hits],
            prompt=None if prompt is None else prompt.text,
            meta=meta,
        )


class WriteAnswer(BaseModel):
    """What a write did: the memory as it now is, and how it got there."""

    memory: MemoryRecord
    action: str = Field(description="created, updated, unchanged, superseded, archived, deleted, …")
    created: bool
    vector: str = Field(description="synced, or pending when the index is behind (the outbox catches up).")
    previous: MemoryRecord | None = Field(description="The version this write replaced, if any.")
    old_status: str | None = Field(description="The status before a status change.")
    notes: list[str]

    @classmethod
    def of(cls, result: WriteResult) -> WriteAnswer:
        return cls(
            memory=MemoryRecord.of(result.memory),
            action=result.action,
            created=result.created,
            vector=result.vector,
            previous=None if result.previous is None else MemoryRecord.of(result.previous),
            old_status=result.old_status,
            notes=result.notes,
        )


class Relation(BaseModel):
    id: str
    source_id: str
    target_id: str
    relation: str
    weight: float
    created_at: str


class MemoryEvent(BaseModel):
    id: int
    event: str
    actor: str
    detail: dict[str, Any]
    created_at: str


class Deleted(BaseModel):
    deleted: bool = True
    id: str


class PreciousRecord(BaseModel):
    id: str
    namespace: str
    content: str
    note: str | None
    source: str
    created_at: str


class TurnRecord(BaseModel):
    """One turn of a conversation, as it was stored for recall (an episode: a
    ``<private>`` span never stored, each secret replaced by a mark naming its class)."""

    id: str = Field(description="The message's id (the episode's).")
    namespace: str
    conversation_id: str | None = Field(description="null: stored without one (the chat's turns, a script's).")
    role: str
    speaker: str | None = Field(description="The speaker's name, when the client gave one.")
    source: str = Field(description="Where it came from: chat, ingest, mcp, claude-code, codex, github…")
    content: str
    created_at: str = Field(description="When it was said (UTC).")
    day: str = Field(description="The day it was said in DREAM_TIME_ZONE.")

    @classmethod
    def of(cls, episode: Episode, time_zone: str) -> TurnRecord:
        return cls.model_validate(
            {
                **episode.as_dict(),
                "day": stored_day(episode.created_at, time_zone),
            }
        )
