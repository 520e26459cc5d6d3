"""The rows one recall reads by id: each memory and episode once, however many of its
steps ask for it (the word channels, the fusion, the related expansion, the contradiction
check). Held for one recall only: rows change between turns."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

from ...domain.episode import Episode
from ...domain.memory import Memory
from ...store.episodes import EpisodeStore
from ...store.memories import MemoryStore

_Row = TypeVar("_Row", Memory, Episode)


class Rows:
    def __init__(self, memories: MemoryStore, episodes: EpisodeStore) -> None:
        self._memory_store = memories
        self._episode_store = episodes
        # None: asked for, and no such row (or none that can be read).
        self._memories: dict[str, Memory | None] = {}
        self._episodes: dict[str, Episode | None] = {}

    async def memories(self, ids: Iterable[str]) -> dict[str, Memory]:
        """The memories of these ids that there are, by id, in the order asked."""
        return await _read(self._memories, self._memory_store.get_many, ids)

    async def episodes(self, ids: Iterable[str]) -> dict[str, Episode]:
        """The episodes of these ids that there are, by id, in the order asked."""
        return await _read(self._episodes, self._episode_store.get_many, ids)

    async def both(
        self, memory_ids: Iterable[str], episode_ids: Iterable[str]
    ) -> tuple[dict[str, Memory], dict[str, Episode]]:
        """``memories`` and ``episodes`` side by side (two round trips that need not wait for each other)."""
        return await asyncio.gather(self.memories(memory_ids), self.episodes(episode_ids))


async def _read(
    known: dict[str, _Row | None], get_many: Callable[[Sequence[str]], Awaitable[list[_Row]]], ids: Iterable[str]
) -> dict[str, _Row]:
    wanted = list(dict.fromkeys(ids))
    missing = [id_ for id_ in wanted if id_ not in known]
    if missing:
        found = await get_many(missing)
        # Marked only once read: a step asking meanwhile reads them too rather than miss them.
        known.update(dict.fromkeys(missing))
        known.update((row.id, row) for row in found)
    return {id_: row for id_ in wanted if (row := known[id_]) is not None}
