"""Where one recall looks, and what it may return from there."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ...domain.episode import Episode
from ...domain.memory import Memory, is_live
from ...store.episode_search import EpisodeScope
from ..episode_recall import InPrompt
from ..plan_dates import is_open

# The episodes recall looks in unless told otherwise: all of its namespaces'.
EVERY_EPISODE = EpisodeScope()
# Approved shares read per recall, the newest first. The vector channel scores each one
# (the index cannot filter on a share), so a namespace with more sees the newest only.
SHARED_READ = 100


@dataclass(frozen=True)
class Reach:
    """Where recall looks: its namespaces, and the memories of other namespaces shared
    into them (memory id → share id)."""

    namespaces: tuple[str, ...]
    shared: dict[str, str]

    def sees(self, memory: Memory) -> bool:
        return memory.namespace in self.namespaces or memory.id in self.shared

    def share_of(self, memory: Memory) -> str | None:
        return None if memory.namespace in self.namespaces else self.shared.get(memory.id)

    def live(self, memory: Memory, types: Sequence[str] = ()) -> bool:
        """A live memory (active, the current version) that recall sees, of one of ``types`` (none: any)."""
        return self.sees(memory) and is_live(memory) and (not types or memory.type in types)


@dataclass(frozen=True)
class Asked:
    """What one recall looks in: its reach, the memory types (none: every type), whether
    memories at all, the episodes (None: none) and the texts the prompt holds; and when it
    runs, in which time zone, for a plan's end."""

    reach: Reach
    types: Sequence[str]
    episodes: EpisodeScope | None
    memories: bool
    prompt: InPrompt
    now: datetime
    time_zone: str

    def returns(self, memory: Memory) -> bool:
        """A memory this recall may return: live, seen, of the types asked, and not a plan
        that has ended (the nightly job may not have marked it yet). The index is a mirror
        and may lag: the row decides."""
        return self.reach.live(memory, self.types) and is_open(memory, self.now, self.time_zone)

    def admits(self, episode: Episode) -> bool:
        """An episode this recall may return: in its scope, and not one the prompt holds."""
        return self.episodes is not None and self.episodes.admits(episode) and not self.prompt.holds(episode)
