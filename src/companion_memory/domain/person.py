"""A person in the owner's life and a proposal about people, as the services hand them
around: plain dataclasses in the column order of their tables (migrations/0011_people.sql).

Familiarity is a number in 0..1: each mention closes MENTION_STEP of the gap to 1, and it
halves every PEOPLE_FAMILIARITY_HALF_LIFE_DAYS without one, so it is always read decayed
to now (``Person.familiarity_now``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..clock import stored_moment

# Each mention closes this share of the gap between familiarity and 1.
MENTION_STEP = 0.1


@dataclass(frozen=True, kw_only=True)
class Person:
    """One row of ``people``: their name and the other names they go by ("my sister",
    "安娜"), who they are to the owner, and how familiar. A merged person stays, pointing at
    the survivor (``merged_into``), so an old id still answers."""

    id: str
    namespace: str
    name: str
    aliases: list[str] = field(default_factory=list)
    relation: str = ""
    notes: str = ""
    familiarity: float = 0.0
    familiarity_at: str
    mentions: int = 0
    last_mentioned_at: str | None = None
    status: str = "active"
    merged_into: str | None = None
    source: str = "api"
    created_at: str
    updated_at: str

    @property
    def names(self) -> list[str]:
        return [self.name, *self.aliases]

    def familiarity_now(self, now: datetime, half_life_days: float) -> float:
        """The stored familiarity decayed from when it was set to ``now``; not decayed when
        that time cannot be read (a row stored before times were checked, reached by its id)."""
        since = stored_moment(self.familiarity_at) or now
        days = max(0.0, (now - since).total_seconds() / 86400)
        return float(self.familiarity) * 0.5 ** (days / half_life_days)

    def replace(self, **changes: Any) -> Person:
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PERSON_FIELDS = tuple(f.name for f in dataclasses.fields(Person))


# A familiarity in words, by the lowest value of each (the boot package's people lines).
FAMILIARITY_WORDS: tuple[tuple[float, str], ...] = (
    (0.75, "close"),
    (0.5, "familiar"),
    (0.25, "known"),
    (0.0, "distant"),
)


def familiarity_word(familiarity: float) -> str:
    return next(word for floor, word in FAMILIARITY_WORDS if familiarity >= floor)


def mentioned(familiarity: float, times: int) -> float:
    """Familiarity after ``times`` more mentions."""
    return 1 - (1 - familiarity) * (1 - MENTION_STEP) ** times


@dataclass(frozen=True, kw_only=True)
class PersonProposal:
    """One row of ``person_proposals``, waiting for the owner or decided: a new person (or,
    with ``person_id``, new names for them), or a merge (``other_id`` is one person with
    ``person_id``, who stays). ``key`` makes a second identical proposal a no-op while the
    first waits."""

    id: str
    namespace: str
    kind: str
    key: str
    name: str
    aliases: list[str] = field(default_factory=list)
    relation: str = ""
    person_id: str | None = None
    other_id: str | None = None
    evidence: list[str] = field(default_factory=list)
    reason: str = ""
    status: str = "pending"
    source: str
    created_at: str
    reviewed_at: str | None = None

    def replace(self, **changes: Any) -> PersonProposal:
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PROPOSAL_FIELDS = tuple(f.name for f in dataclasses.fields(PersonProposal))
