"""A candidate memory waiting in the review queue, as the services hand it around: a plain
dataclass in the column order of ``memory_candidates``, the order an export carries."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .memory import Evidence


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """What the dream (or a write that found a contradiction) proposes, and what the owner
    decided. ``kind`` is add, update, delete or contradiction; for a contradiction
    ``target_memory_id`` is the older memory and ``result_memory_id`` the newer, once it
    is one."""

    id: str
    namespace: str
    kind: str
    type: str
    content: str
    fact_key: str | None = None
    importance: float
    confidence: float
    evidence: list[Evidence] = field(default_factory=list)
    source_message_ids: list[str] = field(default_factory=list)
    target_memory_id: str | None = None
    result_memory_id: str | None = None
    status: str = "pending"
    reason: str | None = None
    dream_run_id: str | None = None
    created_at: str
    updated_at: str
    reviewed_at: str | None = None
    # Plans only: the day or UTC time the plan is good until (Memory.valid_to).
    valid_to: str | None = None

    def replace(self, **changes: Any) -> Candidate:
        return dataclasses.replace(self, **changes)

    def as_reported(self) -> dict[str, Any]:
        """As a dream run's report lists it (JSON-able, without the run's own id)."""
        values = {name: getattr(self, name) for name in _REPORTED}
        values["evidence"] = [e.as_dict() for e in self.evidence]
        return values


CANDIDATE_FIELDS = tuple(f.name for f in dataclasses.fields(Candidate))
# The order a run's report has always listed the fields in (the nightly job's answer keeps it).
_REPORTED = (
    "id",
    "namespace",
    "kind",
    "type",
    "content",
    "fact_key",
    "importance",
    "confidence",
    "evidence",
    "source_message_ids",
    "target_memory_id",
    "valid_to",
    "result_memory_id",
    "status",
    "reason",
    "created_at",
    "updated_at",
    "reviewed_at",
)
