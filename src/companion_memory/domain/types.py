"""Memory types and statuses, and how loose type names are normalised."""

from __future__ import annotations

import unicodedata

MEMORY_TYPES = (
    "fact",
    "event",
    "preference",
    "relationship",
    "boundary",
    "habit",
    "decision",
    "note",
    "identity",
    "persona",
    "plan",
)
# Pinned kinds: retention never expires them by age.
PINNED_TYPES = ("identity", "persona")
STATUSES = ("active", "superseded", "archived", "expired", "deleted")
# A plan's own progress (memories.plan_status), beside the row's status: see migrations/0003_plans.sql.
PLAN_STATUSES = ("active", "done", "abandoned", "expired")
RELATIONS = ("supports", "contradicts", "cause_effect", "derived_from", "same_thread", "supersedes")
# A namespace's name, wherever one is given (an input, a setting).
NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}$"

_ALIASES = {
    "facts": "fact",
    "events": "event",
    "preferences": "preference",
    "pref": "preference",
    "likes": "preference",
    "relationships": "relationship",
    "relation": "relationship",
    "people": "relationship",
    "person": "relationship",
    "boundaries": "boundary",
    "rule": "boundary",
    "rules": "boundary",
    "habits": "habit",
    "routine": "habit",
    "decisions": "decision",
    "notes": "note",
    "profile": "identity",
    "persona_pinned": "persona",
    "plans": "plan",
    "todo": "plan",
}


def normalise_type(value: str | None) -> str | None:
    """The canonical type for a loose name, or None when it names no known type."""
    if value is None:
        return None
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    if name in MEMORY_TYPES:
        return name
    return _ALIASES.get(name)


def normalise_fact_key(value: str) -> str:
    """One spelling per key: NFC, without Unicode format characters (zero-width spaces
    and joiners, bidi controls, soft hyphens, byte-order marks) and surrounding space.
    Keys that look the same are the same key, so an invisible character can neither
    split one fact in two nor let a writer slip past the one it should update."""
    composed = unicodedata.normalize("NFC", value)
    return "".join(c for c in composed if unicodedata.category(c) != "Cf").strip()
