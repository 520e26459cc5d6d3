"""What the dream makes of an extractor's proposals before it weighs them against the
stored memories: each addition proposed once a night, a plan's end day, which memories
are world facts, and the candidate row a proposal becomes (quoting its messages)."""

from __future__ import annotations

import uuid
from datetime import date

from ..domain.candidate import Candidate
from ..domain.memory import Evidence
from ..domain.message import Message
from ..domain.search_text import normalised
from ..errors import InvalidInput
from ..memory.plan_dates import parse_valid_to, resolve_when
from .extraction import ExtractedMemory

# Memories about the world rather than the owner (the reference's world_fact) use fact
# keys under this prefix; a dream correction of one is applied without review.
WORLD_FACT_PREFIX = "world."


def is_world_fact(fact_key: str | None) -> bool:
    return fact_key is not None and fact_key.startswith(WORLD_FACT_PREFIX)


def not_proposed(
    namespace: str, memories: list[ExtractedMemory], proposed: set[tuple[str, str]], counts: dict[str, int]
) -> list[ExtractedMemory]:
    """The additions not proposed before this night, each once (case, width and
    punctuation aside); ``proposed`` takes the new ones, ``counts`` the duplicates."""
    fresh = []
    for memory in memories:
        key = (namespace, normalised(memory.content))
        if key in proposed:
            counts["duplicates"] += 1
            continue
        proposed.add(key)
        fresh.append(memory)
    return fresh


def plan_end(memory: ExtractedMemory, day: date, time_zone: str) -> str | None:
    """The end the extractor gave, else the day the plan's words name ("周末", "next
    week"), counted from the day the messages were said."""
    if memory.valid_to:
        try:
            return parse_valid_to(memory.valid_to, time_zone)
        except InvalidInput:
            pass  # a model's malformed date: the words may still name the day
    for text in (*memory.evidence, memory.content):
        when = resolve_when(text, day)
        if when is not None:
            return when[0].isoformat()
    return None


def candidate_row(
    namespace: str,
    batch: list[Message],
    kind: str,
    type_: str,
    content: str,
    fact_key: str | None,
    importance: float,
    confidence: float,
    quotes: list[str],
    target: str | None,
    now: str,
    valid_to: str | None = None,
) -> Candidate:
    """A pending candidate; its evidence and sources are the messages of ``batch`` that
    hold its ``quotes`` (checked by the caller to occur there)."""
    sources = [m.id for m in batch if any(q in m.content for q in quotes)]
    return Candidate(
        id=str(uuid.uuid4()),
        namespace=namespace,
        kind=kind,
        type=type_,
        content=content,
        fact_key=fact_key,
        importance=importance,
        confidence=confidence,
        evidence=[Evidence(q, next(m.id for m in batch if q in m.content)) for q in quotes],
        source_message_ids=sources,
        target_memory_id=target,
        valid_to=valid_to,
        created_at=now,
        updated_at=now,
    )
