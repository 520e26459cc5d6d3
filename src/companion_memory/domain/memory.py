"""A memory and the evidence behind it, as the services hand them around: plain
dataclasses, validated at the edges that build them from outside input."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Evidence:
    """A verbatim quote from a source message that backs a memory."""

    quote: str
    message_id: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        return cls(quote=str(data["quote"]), message_id=data.get("message_id"))

    def as_dict(self) -> dict[str, Any]:
        return {"quote": self.quote, "message_id": self.message_id}


@dataclass(frozen=True, kw_only=True)
class Memory:
    """One memory row; the fields are in the column order of the table and the answers."""

    id: str
    namespace: str
    type: str
    content: str
    fact_key: str | None = None
    importance: float = 0.5
    confidence: float = 0.8
    status: str = "active"
    version_status: str = "current"
    superseded_by: str | None = None
    pinned: bool = False
    tags: list[str] = field(default_factory=list)
    source: str = "api"
    source_message_ids: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    authored_by: str | None = None
    seen_count: int = 1
    recall_count: int = 0
    last_injected_at: str | None = None
    last_seen_at: str | None = None
    created_at: str
    updated_at: str
    # Plans only (type 'plan'): "YYYY-MM-DD" (to the end of that day in DREAM_TIME_ZONE)
    # or a UTC moment, and the plan's progress (PLAN_STATUSES).
    valid_to: str | None = None
    plan_status: str | None = None
    # Where it stands in its lifecycle (domain/layers.py): the layer, why it is there,
    # since when, and how often an instant memory came back.
    layer: str = "short"
    layer_reason: str | None = None
    layer_at: str | None = None
    revivals: int = 0

    def replace(self, **changes: Any) -> Memory:
        return dataclasses.replace(self, **changes)

    def as_dict(self, *, exclude: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Every field as JSON-able values, in column order."""
        values = {name: getattr(self, name) for name in MEMORY_FIELDS if name not in exclude}
        if "evidence" in values:
            values["evidence"] = [e.as_dict() for e in self.evidence]
        return values


MEMORY_FIELDS = tuple(f.name for f in dataclasses.fields(Memory))

# A live memory: active, and the current version of what it says. Recall, search, the
# vector index, sharing and the health report see live memories only; any other row is
# history (superseded, archived, expired, deleted). Declared once, as column values:
# ``is_live`` reads them in Python, store/sql.live_sql writes them as SQL.
LIVE: Mapping[str, str] = MappingProxyType({"status": "active", "version_status": "current"})


def is_live(memory: Memory) -> bool:
    return all(getattr(memory, column) == value for column, value in LIVE.items())
