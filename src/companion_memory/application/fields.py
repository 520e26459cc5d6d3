"""Bounded field types every input model uses: every string capped, every name checked."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from ..clock import DAY_RANGE, STORED_DAY, TIME_RANGE, TimeError, parse_day, parse_time
from ..domain.layers import ChosenLayer
from ..domain.private_spans import strip_private
from ..domain.types import MEMORY_TYPES, NAMESPACE_PATTERN
from ..memory.plan_dates import plan_end
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


# -- what the owner marked <private> (domain/private_spans.py) is never stored. Every field of
# free text someone gives a write carries one of these, so each surface (REST, MCP, the panel)
# cuts it where the input is built: ``CutPrivate`` keeps what is left, even nothing (a note,
# a reason); ``HasWords`` refuses a value left empty (code empty_content).
def _words(text: str) -> str:
    kept = strip_private(text)
    if not kept.strip():
        raise PydanticCustomError("empty_content", "must have words besides <private> spans (which are never stored)")
    return kept


CutPrivate = AfterValidator(strip_private)
HasWords = AfterValidator(_words)
# A name or term, kept without the spaces around it.
TrimmedWords = AfterValidator(lambda text: _words(text).strip())
MemoryContent = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
FactKey = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ShortText = Annotated[str, StringConstraints(max_length=100)]
# What someone asks a search for: words, and not a pasted book.
SearchText = Annotated[str, StringConstraints(min_length=1, max_length=10_000)]
# A person's name as a chat client gives it: one line.
SpeakerName = Annotated[str, StringConstraints(strip_whitespace=True, max_length=100, pattern=r"^[^\r\n]*$")]
Tag = Annotated[str, StringConstraints(max_length=64)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=200)]
MemoryRef = Annotated[Id, RowOf("memories")]
GlossaryRef = Annotated[Id, RowOf("glossary")]
PersonRef = Annotated[Id, RowOf("people")]
PreciousRef = Annotated[Id, RowOf("precious")]
TodoRef = Annotated[Id, RowOf("todos")]
FoldRef = Annotated[Id, RowOf("context_folds")]
ShareRef = Annotated[Id, RowOf("memory_shares")]
EpisodeRef = Annotated[Id, RowOf("episodes")]
Score = Annotated[float, Field(ge=0, le=1)]
GlossaryTerm = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), TrimmedWords]
Cursor = Annotated[str, StringConstraints(max_length=500), Field(description="next_cursor from the previous page.")]
# How many rows one page of a list holds, REST's query parameters and MCP's arguments alike:
# most lists; the long ones, whose rows are short (a day's conversations, moods, people); the
# short ones, whose rows are large or costly to find (search hits, diary entries, unanchored turns).
PageLimit = Annotated[int, Field(ge=1, le=200)]
LongPageLimit = Annotated[int, Field(ge=1, le=500)]
ShortPageLimit = Annotated[int, Field(ge=1, le=100)]
# A type filter: the document offers the known types, and the use case answers
# ``invalid_type`` for any other (the same on every surface), naming the known ones.
TypeFilter = Annotated[ShortText, Field(json_schema_extra={"enum": list(MEMORY_TYPES)})]
# -- times: every one someone gives is read by clock.parse_time / parse_day, the readers the
# core's own writers (import, the dream) use too; the use case then stores the normalised
# form. A refusal is code invalid_time (error_code), its message naming the field.


def _refused(error: TimeError) -> PydanticCustomError:
    return PydanticCustomError("invalid_time", str(error))


def _time(text: str) -> str:
    try:
        parse_time(text)
    except TimeError as error:
        raise _refused(error) from None
    return text.strip()


def _day(day: object) -> datetime.date:
    try:
        return parse_day(day)
    except TimeError as error:
        raise _refused(error) from None


def _plan_end(text: str) -> str:
    try:
        plan_end(text, "UTC")
    except TimeError as error:
        raise _refused(error) from None
    return text.strip()


def _day_or_time(text: str) -> str:
    text = text.strip()
    if STORED_DAY.fullmatch(text):
        _day(text)
        return text
    return _time(text)


TIME_FORMAT = f"ISO-8601 with Z or an offset, from {TIME_RANGE}"
# A time someone gives; the field's description says how one without an offset is read.
Moment = Annotated[
    str, StringConstraints(max_length=40), AfterValidator(_time), Field(json_schema_extra={"format": "date-time"})
]
# Read before pydantic's own date parsing, so that every day it refuses is refused alike.
Day = Annotated[datetime.date, BeforeValidator(_day), Field(description=f"YYYY-MM-DD, {DAY_RANGE}.")]
# A bound of a time range: a whole day (YYYY-MM-DD) or a time, as given.
DayOrTime = Annotated[str, StringConstraints(max_length=40), AfterValidator(_day_or_time)]
# A plan's end (type 'plan' only).
ValidTo = Annotated[
    str,
    StringConstraints(max_length=40),
    AfterValidator(_plan_end),
    Field(
        description="Plans: the last day (YYYY-MM-DD, in DREAM_TIME_ZONE) or an ISO-8601 time the plan is good "
        f"until (without an offset: in DREAM_TIME_ZONE); from {DAY_RANGE}."
    ),
]
# The codes of the refusals above: a validation error made of one of them alone is
# answered with that code (REST and MCP alike), not the generic one.
FIELD_CODES = frozenset({"invalid_time", "empty_content"})


def error_code(errors: Sequence[Any], default: str) -> str:
    """The code to answer a pydantic validation error with."""
    kinds = {error.get("type") for error in errors}
    return str(kinds.pop()) if len(kinds) == 1 and kinds <= FIELD_CODES else default


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
