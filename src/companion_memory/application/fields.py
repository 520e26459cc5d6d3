"""Bounded field types every input model uses: every string capped, every name checked."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from ..domain.layers import ChosenLayer
from ..domain.types import MEMORY_TYPES

Namespace = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}$"),
    Field(description="Letters, digits and . _ : - ; at most 64 characters."),
]
MemoryContent = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
FactKey = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ShortText = Annotated[str, StringConstraints(max_length=100)]
Tag = Annotated[str, StringConstraints(max_length=64)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Score = Annotated[float, Field(ge=0, le=1)]
GlossaryTerm = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Cursor = Annotated[str, StringConstraints(max_length=500), Field(description="next_cursor from the previous page.")]
# A type filter: the document offers the known types, and the use case answers
# ``invalid_type`` for any other (the same on every surface), naming the known ones.
TypeFilter = Annotated[ShortText, Field(json_schema_extra={"enum": list(MEMORY_TYPES)})]
# A plan's end (type 'plan' only); the writer reads it and answers invalid_valid_to for
# anything that is neither a date nor a time.
ValidTo = Annotated[
    str,
    StringConstraints(max_length=40),
    Field(
        description="Plans: the last day (YYYY-MM-DD, in DREAM_TIME_ZONE) or an ISO-8601 time the plan is good until."
    ),
]
ValidDays = Annotated[
    int, Field(ge=0, le=3650, description="Plans: good until this many days from today (0: today); or give valid_to.")
]
LayerChoice = Annotated[
    ChosenLayer,
    Field(
        description="instant: what was just said (awake, then asleep, then gone unless recalled); short, long or "
        "cold to move a memory by hand. Identity, persona, boundary and pinned memories are permanent."
    ),
]
# Namespaces recall reads besides its own, ranked as one.
ExtraNamespaces = Annotated[
    list[Namespace],
    Field(
        default_factory=list,
        max_length=10,
        description="More namespaces to recall across, ranked together with namespace's memories; "
        "each hit names its own.",
    ),
]
