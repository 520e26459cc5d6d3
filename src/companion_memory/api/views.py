"""How the domain's records read in answers: one place, so REST and MCP say the same."""

from __future__ import annotations

from typing import Any

from ..memory.writes import WriteResult


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
