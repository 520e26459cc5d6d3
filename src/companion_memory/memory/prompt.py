"""The text injected into a chat turn: a ``<memories>`` block the model can read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .recall import Hit


def memories_block(hits: Sequence[Hit], glossary_hits: Sequence[dict[str, Any]]) -> str:
    """Memories in rank order, then the glossary terms the message used. Empty when
    there is nothing to say, so that nothing is injected."""
    if not hits and not glossary_hits:
        return ""
    lines = ["<memories>", "Long-term memories that may be relevant to this message (most relevant first):"]
    for number, hit in enumerate(hits, start=1):
        memory = hit.memory
        date = memory.updated_at[:10]
        note = "".join(
            f' (this contradicts an older memory, "{claim}"; the user has not yet said which one stands)'
            for claim in hit.contradicted_claims
        )
        until = f", until {memory.valid_to}" if memory.valid_to else ""
        # A shared memory was written about another context (a bot's): the model should know.
        origin = f", shared from {memory.namespace}" if hit.share_id else ""
        lines.append(f"{number}. [{memory.type}, {date}{until}{origin}] {memory.content}{note}")
    if glossary_hits:
        lines.append("Glossary (the user's own words):")
        for entry in glossary_hits:
            aliases = f" (also: {', '.join(entry['aliases'])})" if entry["aliases"] else ""
            definition = f": {entry['definition']}" if entry["definition"] else ""
            lines.append(f"- {entry['term']}{aliases}{definition}")
    lines.append("</memories>")
    return "\n".join(lines)
