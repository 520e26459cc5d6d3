"""Episodes in recall: what was said, ranked beside the curated memories.

Recall ranks an episode as it ranks a memory (the same channels, fusion, floors and
gates), in the terms of a memory of type ``episode`` (``as_memory``): its content, its
namespace, when it was said, and its lifecycle columns. That view is never written back
as a memory; recall's bookkeeping writes the episode's own row (store/episodes.py).

The memory-graph lifecycle (domain/layers.py): an instant episode is awake from when it
was said (or last recalled), asleep after MEMORY_INSTANT_AWAKE_HOURS, when only a query
that names it brings it back, and archived after MEMORY_INSTANT_ASLEEP_HOURS more:
search still finds it, and recall's word channels (``WORD_CHANNELS``) and a close meaning
(``ARCHIVED_BY_MEANING``) do. Each injection revives it, and after MEMORY_INSTANT_REVIVALS
of them it is kept as ``long``, awake for good. An archived episode recall finds ranks as
an awake one (domain/weight.py's ``EPISODE_WEIGHT``): weighed at 0.8 of it, LoCoMo dev
R@5 was 0.654 against 0.655 (bench/locomo_recall.py --via ingest, README "Episodes in
recall").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cached_property
from typing import Literal

from ..domain.episode import EPISODE_KIND, Episode
from ..domain.layers import LayerPolicy, instant_phase
from ..domain.memory import Memory
from ..domain.private_spans import strip_private
from ..domain.search_text import normalised
from .sensitive import mask_sensitive

EpisodePhase = Literal["awake", "asleep", "archived"]
# The channels that find an archived episode (what it says, not what it means).
WORD_CHANNELS = frozenset({"lexical", "substring"})
# An archived episode this close in meaning (raw_score, 0-1) is found by its meaning too.
# On LoCoMo dev via ingest (most turns archived), R@5: by words only 0.625; with a meaning
# of 0.5 and more 0.643, 0.4 0.656, 0.2 0.655, any 0.655: the archive keeps out only what a
# vector alone finds loosely.
ARCHIVED_BY_MEANING = 0.4


def as_memory(episode: Episode) -> Memory:
    """The episode as recall ranks, gates and dates its hits: a memory of type
    ``episode``, said (created and last changed) when the episode was said."""
    return Memory(
        id=episode.id,
        namespace=episode.namespace,
        type=EPISODE_KIND,
        content=episode.content,
        source=episode.source,
        recall_count=episode.recall_count,
        last_injected_at=episode.last_injected_at,
        created_at=episode.created_at,
        updated_at=episode.created_at,
        layer=episode.layer,
        layer_at=episode.layer_at,
        revivals=episode.revivals,
    )


def episode_phase(episode: Episode, now: datetime, policy: LayerPolicy) -> EpisodePhase:
    if episode.layer == "long":
        return "awake"
    found = instant_phase(as_memory(episode), now, policy)
    return "archived" if found == "gone" else found


def adjacent_to(episode: Episode, around: Iterable[Episode]) -> list[Episode]:
    """The turns just before and after ``episode`` among ``around`` (what
    EpisodeStore.adjacent read for it and others): the nearest of its conversation on each side."""
    key = (episode.created_at, episode.id)
    same = [e for e in around if (e.namespace, e.conversation_id) == (episode.namespace, episode.conversation_id)]
    earlier = [e for e in same if (e.created_at, e.id) < key]
    later = [e for e in same if (e.created_at, e.id) > key]
    return [
        *([max(earlier, key=lambda e: (e.created_at, e.id))] if earlier else []),
        *([min(later, key=lambda e: (e.created_at, e.id))] if later else []),
    ]


class InPrompt:
    """The messages the prompt holds already (the conversation as sent), compared with
    episodes as their episodes would read: without ``<private>`` spans, secrets masked,
    in the dedupe form. Worked out on the first comparison: most recalls find no episode."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts

    @cached_property
    def keys(self) -> frozenset[str]:
        return frozenset(k for k in (normalised(mask_sensitive(strip_private(t))[0]) for t in self.texts) if k)

    def holds(self, episode: Episode) -> bool:
        return bool(self.texts) and normalised(episode.content) in self.keys


def evidence_ids(memory: Memory) -> set[str]:
    """The messages (so the episodes) a memory was made from."""
    return {*memory.source_message_ids, *(e.message_id for e in memory.evidence if e.message_id)}


def without_evidence(ranked: Sequence[tuple[Memory, bool]], k: int) -> tuple[list[int], list[str]]:
    """The first ``k`` of ``ranked`` (each a memory, and whether it is an episode's view),
    leaving out every episode that is the evidence of a memory kept: the indexes kept,
    best first, and the ids of the episodes set aside. A memory found below its evidence
    takes the episode's place."""
    kept: list[int] = []
    covered: set[str] = set()
    aside: list[str] = []
    for index, (memory, episode) in enumerate(ranked):
        if len(kept) >= k:
            break
        if episode:
            if memory.id in covered:
                aside.append(memory.id)
            else:
                kept.append(index)
            continue
        covered |= evidence_ids(memory)
        dropped = [i for i in kept if ranked[i][1] and ranked[i][0].id in covered]
        aside += [ranked[i][0].id for i in dropped]
        kept = [i for i in kept if i not in dropped]
        kept.append(index)
    return kept, aside
