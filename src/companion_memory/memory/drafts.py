"""What a write says and what it answers: the draft of a memory, who writes it, and the
result. Every write path (memory/memories.py) takes the first two and answers the third."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..domain.memory import Evidence, Memory
from ..domain.private_spans import strip_private
from ..domain.types import normalise_fact_key


@dataclass
class MemoryDraft:
    """What a writer says about a memory; None means "not given". The edges validate the
    values; the draft only gives the fact_key its one spelling."""

    content: str | None = None
    type: str | None = None
    fact_key: str | None = None
    importance: float | None = None
    confidence: float | None = None
    tags: list[str] | None = None
    pinned: bool | None = None
    source: str | None = None
    source_message_ids: list[str] | None = None
    evidence: list[Evidence] | None = None
    # Set when a person wrote this by hand; automatic writers leave it empty.
    authored_by: str | None = None
    # A plan's end: a date or time (valid_to), or a number of days from today (valid_days).
    valid_to: str | None = None
    valid_days: int | None = None
    # The layer asked for (domain/layers.CHOSEN_LAYERS): 'instant' for what was just said.
    layer: str | None = None

    def __post_init__(self) -> None:
        if self.fact_key is not None:
            self.fact_key = normalise_fact_key(self.fact_key)
        # Whoever writes (REST, MCP, the dream, an import), a private span is never stored.
        if self.content is not None:
            self.content = strip_private(self.content)
        if self.evidence is not None:
            self.evidence = [Evidence(strip_private(e.quote), e.message_id) for e in self.evidence]


@dataclass(frozen=True)
class Actor:
    """Who writes: a key profile, the dream, an import. Only the owner may change a
    memory that a person wrote by hand."""

    name: str
    owner: bool = False


@dataclass
class WriteResult:
    memory: Memory
    action: str
    created: bool = False
    vector: str = "synced"
    previous: Memory | None = None
    old_status: str | None = None
    notes: list[str] = field(default_factory=list)
    # The vector the mirror has just made of the memory, if it made one.
    embedding: Sequence[float] | None = field(default=None, repr=False)
