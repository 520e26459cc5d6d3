"""What a memory weighs in recall beside its relevance: importance that learns from use,
and freshness that fades at its type's pace.

    score      = relevance × (0.5 + importance) × (0.6 + 0.4 × freshness) × authored × decay
    importance = 0.5 × set + 0.2 × use + 0.1 × anchors + 0.2 × type weight
    use        = 1 − 0.5 ^ ((mentions − 1 + recalls) / 3)
    anchors    = min(1, evidence quotes / 2)
    freshness  = 0.5 ^ (days since last mentioned or recalled / the type's half-life)

``relevance`` is the fused rank score, or the reranker's; ``set`` the importance a writer
gave (0–1); ``authored`` is ×1.15 for a memory written by hand; ``decay`` ×0.5 for one
injected within the decay window. Every factor stays within a fixed band, so relevance
leads and weight breaks near-ties: importance 0.95 against 0.05 is a factor of 1.5,
a year-old event against today's 0.6. The score floor reads the raw relevance, never this.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..clock import parse_iso
from .layers import last_used
from .memory import Memory

AUTHORED_BONUS = 1.15
# Days for freshness to halve; None: the type does not fade (who the user is, what they
# like and forbid, the people in their life, plans, which end by their own date).
HALF_LIFE_DAYS: dict[str, float | None] = {
    "event": 30,
    "note": 60,
    "habit": 180,
    "decision": 180,
    "fact": 365,
    "identity": None,
    "persona": None,
    "preference": None,
    "boundary": None,
    "relationship": None,
    "plan": None,
}
TYPE_WEIGHT = {
    "identity": 1.0,
    "persona": 1.0,
    "boundary": 1.0,
    "preference": 0.8,
    "relationship": 0.8,
    "plan": 0.7,
    "decision": 0.7,
    "habit": 0.6,
    "fact": 0.6,
    "event": 0.5,
    "note": 0.4,
}
# Uses (mentions after the first, and recalls) for the learned part to reach half.
_USES_TO_HALF = 3
_ANCHORS_FOR_FULL = 2


@dataclass(frozen=True)
class Weight:
    importance: float
    freshness: float
    authored: float

    @property
    def factor(self) -> float:
        return (0.5 + self.importance) * (0.6 + 0.4 * self.freshness) * self.authored


def importance(memory: Memory) -> float:
    uses = max(0, memory.seen_count - 1) + memory.recall_count
    use = 1 - 0.5 ** (uses / _USES_TO_HALF)
    anchors = min(1.0, len(memory.evidence) / _ANCHORS_FOR_FULL)
    learned = 0.5 * memory.importance + 0.2 * use + 0.1 * anchors + 0.2 * TYPE_WEIGHT.get(memory.type, 0.4)
    return min(1.0, max(0.0, learned))


def freshness(memory: Memory, now: datetime) -> float:
    half_life = HALF_LIFE_DAYS.get(memory.type, 60)
    if half_life is None:
        return 1.0
    days = max(0.0, (now - parse_iso(last_used(memory))).total_seconds() / 86400)
    return float(0.5 ** (days / half_life))


def weigh(memory: Memory, now: datetime) -> Weight:
    return Weight(
        importance=importance(memory),
        freshness=freshness(memory, now),
        authored=AUTHORED_BONUS if memory.authored_by else 1.0,
    )


# An episode is what was said, not what was kept: it weighs less than any memory can (the
# least a memory weighs is (0.5 + 0.2 × 0.4) × 0.6 = 0.348: importance 0, a note, unused
# for years), so a curated memory outranks an episode of equal relevance.
EPISODE_WEIGHT = 0.34
