"""Memory types and statuses, and how loose type names are normalised."""

from __future__ import annotations

MEMORY_TYPES = (
    "fact", "event", "preference", "relationship", "boundary",
    "habit", "decision", "note", "identity", "persona",
)
# Pinned kinds: retention never expires them.
PINNED_TYPES = ("identity", "persona")
STATUSES = ("active", "superseded", "archived", "expired", "deleted")
RELATIONS = ("supports", "contradicts", "cause_effect", "derived_from", "same_thread", "supersedes")

_ALIASES = {
    "facts": "fact", "events": "event", "preferences": "preference", "pref": "preference",
    "likes": "preference", "relationships": "relationship", "relation": "relationship",
    "people": "relationship", "person": "relationship", "boundaries": "boundary", "rule": "boundary",
    "rules": "boundary", "habits": "habit", "routine": "habit", "decisions": "decision",
    "notes": "note", "profile": "identity", "persona_pinned": "persona",
}


def normalise_type(value: str | None) -> str | None:
    """The canonical type for a loose name, or None when it names no known type."""
    if value is None:
        return None
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    if name in MEMORY_TYPES:
        return name
    return _ALIASES.get(name)
