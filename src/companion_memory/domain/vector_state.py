"""Which embedder filled the vector index, and from what form of the text: the one row of
``vector_index_state``; and the rows (memories, episodes) the index mirrors."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class VectorState:
    model: str
    dimensions: int
    text_form: str
    updated_at: str


@dataclass(frozen=True, kw_only=True)
class MirroredRow:
    """A memory or an episode as a pass over the index lists it; ``live``: the index
    should hold its vector."""

    id: str
    namespace: str
    live: bool = True
