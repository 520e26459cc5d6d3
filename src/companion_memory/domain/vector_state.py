"""Which embedder filled the vector index, and from what form of the text: the one row of
``vector_index_state``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class VectorState:
    model: str
    dimensions: int
    text_form: str
    updated_at: str
