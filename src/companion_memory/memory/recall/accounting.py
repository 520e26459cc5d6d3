"""What recall (not search) records of what it injected: the time and the count, and the
revival of an instant memory or episode (domain/layers.py)."""

from __future__ import annotations

from ...domain.layers import LayerPolicy, revived
from ...ports import Statement
from ...store.episodes import EpisodeStore
from ...store.memories import MemoryStore
from ..episode_recall import as_memory
from .hits import Hit


def injected(hits: list[Hit], now: str, policy: LayerPolicy) -> list[Statement]:
    """The statements that record ``hits`` as injected now, once more; the hits are
    brought up to date with what they record."""
    statements = MemoryStore.mark_injected([h.memory.id for h in hits if h.episode is None], now)
    for hit in hits:
        memory = hit.memory.replace(last_injected_at=now, recall_count=hit.memory.recall_count + 1)
        if hit.episode is not None:
            changes = revived(memory, now, policy) if memory.layer == "instant" else {}
            statements.append(EpisodeStore.mark_injected(memory.id, now, changes))
            hit.episode = hit.episode.replace(
                last_injected_at=now,
                recall_count=memory.recall_count,
                **{c: changes[c] for c in ("layer", "layer_at", "revivals") if c in changes},
            )
            hit.memory = as_memory(hit.episode)
            continue
        if memory.layer == "instant":
            changes = revived(memory, now, policy)
            statements.append(MemoryStore.update(memory.id, changes))
            if "layer" in changes:
                statements.append(
                    MemoryStore.event(
                        memory.namespace,
                        memory.id,
                        "layer_changed",
                        "recall",
                        {"from": "instant", "to": changes["layer"], "reason": changes["layer_reason"]},
                        now,
                    )
                )
            memory = memory.replace(**changes)
        hit.memory = memory
    return statements
