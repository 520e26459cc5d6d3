"""How the domain's records read in answers: one place, so REST and MCP say the same."""

from __future__ import annotations

from typing import Any

from ..memory.prompt import memories_block
from ..memory.recall import Hit, RecallResult
from ..memory.writes import WriteResult


def hit_view(hit: Hit) -> dict[str, Any]:
    """A recalled memory (without its evidence and sources) and how it was found."""
    return {
        **hit.memory.as_dict(exclude=frozenset({"evidence", "source_message_ids"})),
        "score": round(hit.score, 6),
        "raw_score": None if hit.raw_score is None else round(hit.raw_score, 6),
        "decayed": hit.decayed,
        "channels": hit.channels,
        "via": hit.via,
        "contradicted_by": hit.contradicted_by,
    }


def recall_view(result: RecallResult, *, prompt: bool) -> dict[str, Any]:
    """The hits, the glossary terms the query mentions and, when asked, the ready
    ``<memories>`` block to put in context."""
    answer: dict[str, Any] = {"hits": [hit_view(h) for h in result.hits], "glossary_hits": result.glossary_hits}
    if prompt:
        answer["prompt"] = memories_block(result.hits, result.glossary_hits)
    return answer


def write_view(result: WriteResult) -> dict[str, Any]:
    """The answer to a write, the same from REST and from the MCP tools. ``oldStatus``
    keeps the reference's spelling, which clients already read."""
    answer: dict[str, Any] = {
        "memory": result.memory.as_dict(),
        "action": result.action,
        "created": result.created,
        "vector": result.vector,
    }
    if result.previous is not None:
        answer["previous"] = result.previous.as_dict()
    if result.old_status is not None:
        answer["oldStatus"] = result.old_status
    if result.notes:
        answer["notes"] = result.notes
    return answer
