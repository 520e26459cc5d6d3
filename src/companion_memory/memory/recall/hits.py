"""What recall answers: the hits, and how it reached them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...domain.episode import Episode
from ...domain.glossary import MentionedTerm
from ...domain.memory import Memory


@dataclass
class Hit:
    memory: Memory
    score: float  # what the ranking uses (after decay)
    # Relevance before any decay: the reranker's score, else the cosine similarity mapped
    # onto 0–1 (see Embedder.similarity_range); None when neither could be had (vector
    # search down, no reranker), and then no floor applies.
    raw_score: float | None
    channels: dict[str, int] = field(default_factory=dict)  # channel → 1-based rank
    decayed: bool = False
    via: str | None = None  # the hit whose relation brought this one in
    # Older live memories this one contradicts, the owner not having said which stands
    # (ids, and their contents for the prompt); those stay out of recall meanwhile.
    contradicted_by: list[str] = field(default_factory=list)
    contradicted_claims: list[str] = field(default_factory=list)
    share_id: str | None = None  # the approved share that brought it from its own namespace
    about_person: bool = False  # it names a person the query names (no similarity floor)
    # Set when the hit is an episode (``memory`` is then its view, episode_recall.as_memory),
    # and whether it is archived (found by its words only).
    episode: Episode | None = None
    archived: bool = False
    # An episode's neighbours in its conversation that recall may return (the turns just
    # before and after it), read by the expansion: the injection shows one where it helps.
    thread: list[Episode] = field(default_factory=list)


@dataclass
class ScoreParts:
    """How a hit's score was made (see domain/weight.py): score = relevance × weight × decay."""

    relevance: float  # the fused rank score, or the reranker's
    raw_score: float | None
    importance: float
    freshness: float
    authored: float
    weight: float
    decay: float
    score: float


@dataclass
class RecallMeta:
    """How recall reached its hits: the ids it set aside at each gate, which reranker ran
    (``off``, ``skipped``, ``failed`` or the model), and notes on what degraded."""

    k: int
    min_score: float
    reranker: str | None = None
    decayed: list[str] = field(default_factory=list)
    deduped: list[str] = field(default_factory=list)
    floored: list[str] = field(default_factory=list)
    precious_overlap: list[str] = field(default_factory=list)
    # Older memories held back because a newer one contradicts them (see Hit.contradicted_by).
    contradicted: list[str] = field(default_factory=list)
    # Cold memories, and asleep instant ones the query did not name: they rest (layers).
    resting: list[str] = field(default_factory=list)
    # The hits that are episodes; episodes set aside as already in the prompt, and as the
    # evidence of a memory returned.
    episodes: list[str] = field(default_factory=list)
    in_prompt: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    components: dict[str, ScoreParts] = field(default_factory=dict)


@dataclass
class RecallResult:
    hits: list[Hit]
    glossary_hits: list[MentionedTerm]
    meta: RecallMeta
    # The vector channel's embedding of the query as given (``embedding_text`` of it, in
    # query mode), for a caller that stores those words (the gateway's user turn); None
    # when it embedded other words (the query cut, or widened with people's other names)
    # or none at all.
    query_vector: list[float] | None = None
