"""An event of a memory's history (``memory_events``): a plain dataclass in the column
order of the table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class MemoryEvent:
    """What happened to a memory (created, updated, consolidation_merged…), who did it,
    and its details as stored (JSON: what an undo needs)."""

    id: int
    namespace: str
    memory_id: str
    event: str
    actor: str
    detail: dict[str, Any] = field(default_factory=dict)
    created_at: str
