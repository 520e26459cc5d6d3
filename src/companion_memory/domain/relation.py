"""A typed, weighted edge between two memories (``memory_relations``): a plain
dataclass in the column order of the table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Relation:
    """``source_id`` —``relation``→ ``target_id`` in one namespace. Recall lends score
    along it; a fading edge's weight halves every half-life from ``weighed_at`` (when it
    was last set: ``created_at`` until then)."""

    id: str
    namespace: str
    source_id: str
    target_id: str
    relation: str
    weight: float
    created_at: str
    weighed_at: str
