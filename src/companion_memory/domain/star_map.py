"""The star map's graph: live memories (and the people, as stars of their own) and the
lines between them, as the admin panel and the SVG/Mermaid files draw it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, kw_only=True)
class StarNode:
    """A memory, or a person drawn like one (``kind`` person: type 'person', content the
    name, importance the familiarity, tags the aliases, recall_count the mentions)."""

    id: str
    kind: Literal["memory", "person"] = "memory"
    type: str
    content: str
    fact_key: str | None
    importance: float
    confidence: float
    pinned: bool
    tags: list[str]
    recall_count: int
    updated_at: str


@dataclass(frozen=True, kw_only=True)
class StarEdge:
    """A memory relation, or ``about``: from a person to a memory about them."""

    id: str
    source_id: str
    target_id: str
    relation: str
    weight: float


@dataclass(frozen=True, kw_only=True)
class StarGraph:
    nodes: list[StarNode]
    edges: list[StarEdge]
    truncated: bool = False
