"""An episode: one thing that was said, kept as episodic memory.

Every stored message becomes one episode with the message's id (gateway turns, ingest, the
coding-agent hooks, imports). Recall ranks episodes beside curated memories; search and
``conversation_search`` find them; the owner can forget them. What an episode holds is the
message as stored for recall: a ``<private>`` span never reaches it, and each secret of a
sensitive-data class is replaced by a mark naming the class (``sensitive`` lists them).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

EpisodeLayer = Literal["instant", "long"]
# What an episode is in the vector index's metadata (``kind``), beside memories.
EPISODE_KIND = "episode"


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One episode row; the fields are in the column order of the table."""

    id: str
    namespace: str
    conversation_id: str | None
    role: str
    # Who said it, when the client named the speaker (OpenAI's message ``name``): a group
    # chat, a conversation between two people.
    speaker: str | None = None
    source: str
    content: str
    sensitive: list[str] = field(default_factory=list)
    # The memory-graph lifecycle (domain/layers.py): an instant episode is awake from
    # ``layer_at`` (when it was said or last recalled), then asleep, then archived; after
    # enough revivals it is kept as ``long``.
    layer: EpisodeLayer = "instant"
    layer_at: str | None = None
    revivals: int = 0
    recall_count: int = 0
    last_injected_at: str | None = None
    created_at: str
    stored_at: str

    def said(self) -> str:
        return said_by(self.speaker, self.content)

    def replace(self, **changes: Any) -> Episode:
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in EPISODE_FIELDS}


EPISODE_FIELDS = tuple(f.name for f in dataclasses.fields(Episode))


def said_by(speaker: str | None, content: str) -> str:
    """What is embedded and indexed for words of an episode: the words, with who said them
    when that is known. A question that names the speaker ("What did Caroline research?")
    meets Caroline's words so: LoCoMo dev R@5 0.607 against 0.25 with the name embedded and
    indexed in neither, 0.625 against 0.607 indexed for words too (bench/locomo_recall.py
    --via ingest)."""
    return f'{speaker} said, "{content}"' if speaker else content
