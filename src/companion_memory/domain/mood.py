"""An entry of the mood timeline and a week's distribution, as the services hand them
around: plain dataclasses, the entry in the column order of ``moods`` (the order an
export carries)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

# The moods' vocabulary: what the dream, the owner and the agents label a mood with.
MOOD_LABELS = ("happy", "excited", "warm", "calm", "tired", "sad", "lonely", "anxious", "angry")


@dataclass(frozen=True, kw_only=True)
class Mood:
    """How she felt (``whose`` companion), or how she perceives the owner felt (owner):
    a label of the vocabulary (``MOOD_LABELS``; words for them in memory/moods.py), 0..1 intense, when it was felt, and the
    message the dream read it from, if it did."""

    id: str
    namespace: str
    whose: str
    label: str
    reason: str
    intensity: float
    felt_at: str
    source: str
    source_message_id: str | None = None
    created_at: str


MOOD_FIELDS = tuple(f.name for f in dataclasses.fields(Mood))


@dataclass(frozen=True)
class MoodCount:
    """One label of a distribution: how often, and how strongly on average."""

    label: str
    count: int
    average_intensity: float
