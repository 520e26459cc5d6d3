"""Layers: where a memory stands in its lifecycle, and the rules that move it.

- ``instant``: what was just said. Awake for ``memory_instant_awake_hours`` from when it was
  written, said again or recalled; then asleep for ``memory_instant_asleep_hours``, when
  only a query that names it (found by its words, clearly relevant) brings it back; then
  a tombstone (the nightly job expires it). Each recall or repeat revives it, and after
  ``memory_instant_revivals`` revivals it is kept as a lasting memory (``long``).
- ``short``: a new memory.
- ``long``: mentioned or recalled ``memory_long_after_mentions`` times over at least
  ``memory_long_after_days`` days.
- ``cold``: not mentioned or recalled for ``memory_cold_after_days`` days. Out of recall,
  still found by search, and back (``long``) when the owner restores it or it is said again.
- ``permanent``: identity, persona and boundary memories, and pinned ones; never cold.

Each function answers the layer columns (layer, layer_reason, layer_at, revivals) that
change, so a write and the nightly pass record a move the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, get_args

from ..clock import iso, parse_iso
from .memory import Memory

# A writer may ask for any layer but 'permanent', which follows from the type or pinning.
ChosenLayer = Literal["instant", "short", "long", "cold"]
Layer = Literal[ChosenLayer, "permanent"]
LAYERS: tuple[str, ...] = get_args(Layer)
PERMANENT_TYPES = ("identity", "persona", "boundary")
# An asleep instant memory answers only a query this relevant to it (and found by its words).
REVIVE_RELEVANCE = 0.5

Phase = Literal["awake", "asleep", "gone"]


@dataclass(frozen=True)
class LayerPolicy:
    """The thresholds (the MEMORY_INSTANT_* / MEMORY_LONG_* / MEMORY_COLD_* settings)."""

    instant_awake_hours: float
    instant_asleep_hours: float
    instant_revivals: int
    long_after_mentions: int
    long_after_days: float
    cold_after_days: float


def is_permanent(memory_type: str, pinned: bool) -> bool:
    return pinned or memory_type in PERMANENT_TYPES


def _permanent_reason(memory_type: str) -> str:
    return f"{memory_type} memories are kept for good" if memory_type in PERMANENT_TYPES else "pinned"


def _moved(layer: str, reason: str, at: str, revivals: int = 0) -> dict[str, Any]:
    return {"layer": layer, "layer_reason": reason, "layer_at": at, "revivals": revivals}


def on_write(
    current: Memory | None,
    memory_type: str,
    pinned: bool,
    requested: str | None,
    now: str,
    policy: LayerPolicy,
    *,
    who: str,
    mentioned: bool = True,
) -> dict[str, Any]:
    """The layer columns that change with a write of a memory of ``memory_type``
    (``current``: the row as it was, None for a new memory; ``requested``: the layer the
    writer ``who`` asked for; ``mentioned``: the write says the memory again, which an
    edit by hand does not)."""
    if is_permanent(memory_type, pinned):
        if current is not None and current.layer == "permanent":
            return {}
        return _moved("permanent", _permanent_reason(memory_type), now)
    if requested is not None:
        if current is not None and current.layer == requested:
            return {}
        return _moved(requested, f"{'written as' if current is None else 'moved to'} {requested} by {who}", now)
    if current is None:
        return _moved("short", "new memory", now)
    if current.layer == "permanent":
        return _moved("long", "no longer pinned or of a lasting type", now)
    if mentioned and current.layer == "cold":
        return _moved("long", "said again after going cold", now)
    if mentioned and current.layer == "instant":
        return revived(current, now, policy)
    return {}


def revived(memory: Memory, now: str, policy: LayerPolicy) -> dict[str, Any]:
    """An instant memory recalled or said again: awake from now, kept for good once it
    has come back often enough."""
    count = memory.revivals + 1
    if count >= policy.instant_revivals:
        return _moved("long", f"instant memory revived {count} times", now, count)
    return {"layer_at": now, "revivals": count}


def instant_phase(memory: Memory, now: datetime, policy: LayerPolicy) -> Phase:
    woke = parse_iso(memory.layer_at or memory.created_at)
    awake = timedelta(hours=policy.instant_awake_hours)
    if now - woke < awake:
        return "awake"
    if now - woke < awake + timedelta(hours=policy.instant_asleep_hours):
        return "asleep"
    return "gone"


def last_used(memory: Memory) -> str:
    """When the memory was last written, said again or recalled."""
    return max(memory.created_at, memory.last_seen_at or "", memory.last_injected_at or "")


def nightly_move(memory: Memory, now: datetime, policy: LayerPolicy) -> dict[str, Any] | None:
    """The layer a live memory moves to tonight, or None where it stays. An instant
    memory past its sleep is not moved but expired (see ``instant_phase``)."""
    at = iso(now)
    if is_permanent(memory.type, memory.pinned):
        return None if memory.layer == "permanent" else _moved("permanent", _permanent_reason(memory.type), at)
    if memory.layer == "permanent":
        return _moved("long", "no longer pinned or of a lasting type", at)
    if memory.layer in ("instant", "cold"):
        return None
    idle = now - parse_iso(last_used(memory))
    if idle >= timedelta(days=policy.cold_after_days):
        return _moved("cold", f"not mentioned or recalled for {idle.days} days", at)
    if memory.layer == "short":
        uses = memory.seen_count + memory.recall_count
        span = parse_iso(last_used(memory)) - parse_iso(memory.created_at)
        if uses >= policy.long_after_mentions and span >= timedelta(days=policy.long_after_days):
            return _moved("long", f"mentioned or recalled {uses} times over {span.days} days", at)
    return None
