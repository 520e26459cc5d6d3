"""What the vector index mirrors, by kind: memories and episodes share one index (and the
outbox), told apart by the ``kind`` metadata every query filters on.

Each kind says which of its rows belong in the index, what of a row is embedded and
with which metadata, and what goes of the row once its vector is gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..domain.episode import EPISODE_KIND, Episode
from ..domain.memory import Memory, is_live
from ..domain.search_text import embedding_text
from ..domain.vector_state import MirroredRow
from ..ports import Statement
from ..store.episodes import EpisodeStore
from ..store.memories import MemoryStore
from ..store.night_dreams import NightDreamStore
from ..store.outbox import OutboxEntry, OutboxKind

VectorMetadata = dict[str, str | bool]


@dataclass(frozen=True)
class Embeddable:
    """A row as the index holds it: the text embedded and the vector's metadata."""

    id: str
    text: str
    metadata: VectorMetadata


class MirroredKind(Protocol):
    kind: OutboxKind

    async def live_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        """The rows the index should hold, in id order."""
        ...

    async def all_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        """Every row (live or not), in id order, and whether it is ``live``: a reindex
        removes every vector and queues the live rows."""
        ...

    async def count_live(self, *, after: str = "") -> int:
        """How many of ``live_ids``'s rows have an id past ``after``."""
        ...

    async def embeddable(self, ids: Sequence[str]) -> dict[str, Embeddable]:
        """The live rows among ``ids``; the others' vectors are to be removed."""
        ...

    def after_removal(self, entry: OutboxEntry) -> list[Statement]:
        """What goes of the row once the vector of a 'delete' or 'purge' entry is gone."""
        ...


def vector_metadata(memory: Memory) -> VectorMetadata:
    return {
        "namespace": memory.namespace,
        "status": memory.status,
        "type": memory.type,
        "kind": "memory",
        "pinned": memory.pinned,
    }


def episode_metadata(episode: Episode) -> VectorMetadata:
    # type and status as a memory's, so a filter written for memories alone reads them too;
    # role is not filtered on (no metadata index), only returned.
    return {
        "namespace": episode.namespace,
        "status": "active",
        "kind": EPISODE_KIND,
        "type": EPISODE_KIND,
        "role": episode.role,
    }


def is_indexed(memory: Memory) -> bool:
    """Only live rows belong in the index (a plan only while it is active); everything
    else is removed from it."""
    return is_live(memory) and memory.plan_status in (None, "active")


class MemoryRows:
    kind: OutboxKind = "memory"

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    async def live_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        return await self.store.live_ids(after=after, limit=limit)

    async def all_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        return await self.store.all_ids(after=after, limit=limit)

    async def count_live(self, *, after: str = "") -> int:
        return await self.store.count_indexed(after=after)

    async def embeddable(self, ids: Sequence[str]) -> dict[str, Embeddable]:
        return {
            m.id: Embeddable(m.id, embedding_text(m.content), vector_metadata(m))
            for m in await self.store.get_many(ids)
            if is_indexed(m)
        }

    def after_removal(self, entry: OutboxEntry) -> list[Statement]:
        if entry.op != "purge":
            return []
        return [NightDreamStore.forget_made_of(entry.memory_id), *MemoryStore.delete_row(entry.memory_id)]


class EpisodeRows:
    kind: OutboxKind = "episode"

    def __init__(self, store: EpisodeStore) -> None:
        self.store = store

    async def live_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        return await self.store.live_ids(after=after, limit=limit)

    async def all_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        return await self.store.live_ids(after=after, limit=limit)

    async def count_live(self, *, after: str = "") -> int:
        return await self.store.count(after=after)

    async def embeddable(self, ids: Sequence[str]) -> dict[str, Embeddable]:
        return {
            e.id: Embeddable(e.id, embedding_text(e.said()), episode_metadata(e))
            for e in await self.store.get_many(ids)
            if e.content.strip()
        }

    def after_removal(self, entry: OutboxEntry) -> list[Statement]:
        return EpisodeStore.delete_rows([entry.memory_id], with_messages=entry.op == "purge")
