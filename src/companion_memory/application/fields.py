"""Bounded field types every input model uses: every string capped, every name checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, StringConstraints

from ..domain.layers import ChosenLayer
from ..domain.types import MEMORY_TYPES, NAMESPACE_PATTERN
from ..store.places import Table


@dataclass(frozen=True)
class InNamespace:
    """Marks a field naming a namespace the use case acts in: the caller's namespace
    bindings are checked against it (application/bindings.py). ``unless_row``: only when
    the row the input names does not exist (a supersede writes there then)."""

    unless_row: bool = False


@dataclass(frozen=True)
class RowOf:
    """Marks a field holding the id of a row of ``table``: the bindings are checked
    against the namespace the row lives in."""

    table: Table


# Any namespace's name; ``Namespace`` where the use case acts in it.
NamespaceName = Annotated[
    str,
    StringConstraints(pattern=NAMESPACE_PATTERN),
    Field(description="Letters, digits and . _ : - ; at most 64 characters."),
]
Namespace = Annotated[NamespaceName, InNamespace()]
MemoryContent = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
FactKey = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ShortText = Annotated[str, StringConstraints(max_length=100)]
Tag = Annotated[str, StringConstraints(max_length=64)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=200)]
MemoryRef = Annotated[Id, RowOf("memories")]
GlossaryRef = Annotated[Id, RowOf("glossary")]
PersonRef = Annotated[Id, RowOf("people")]
PreciousRef = Annotated[Id, RowOf("precious")]
TodoRef = Annotated[Id, RowOf("todos")]
FoldRef = Annotated[Id, RowOf("context_folds")]
ShareRef = Annotated[Id, RowOf("memory_shares")]
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
