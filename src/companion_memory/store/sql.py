"""Small helpers for writing SQL that respects D1's limits."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from ..domain.json_value import dumps, json_problem
from ..domain.memory import LIVE
from ..errors import InvalidInput
from ..ports import MAX_BOUND_PARAMETERS

T = TypeVar("T")


def chunks(items: Sequence[T], size: int = MAX_BOUND_PARAMETERS - 10) -> Iterator[Sequence[T]]:
    """Split an ``IN (...)`` list so that each statement stays under D1's parameter limit."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(count: int) -> str:
    return ", ".join("?" * count)


def live_sql(row: str = "") -> str:
    """The live-memory predicate (domain/memory.LIVE) as SQL, over the columns of the
    memories row aliased ``row`` (none: the table's own)."""
    prefix = f"{row}." if row else ""
    return " AND ".join(f"{prefix}{column} = '{value}'" for column, value in LIVE.items())


def to_json(value: Any, *, what: str = "value") -> str:
    """Every JSON column is written through here, so nothing is stored that cannot be
    read back (see domain.json_value)."""
    problem = json_problem(value)
    if problem:
        raise InvalidInput(f"{what} {problem}", code="invalid_json")
    return dumps(value)


def from_json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    return json.loads(text)


def read_stored_json(text: str | None) -> tuple[Any, str | None]:
    """A stored JSON column and None, or None and why it cannot be read: a row written
    before values were checked must not break every reader of its table."""
    if not text:
        return None, None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:
        return None, f"is not readable JSON ({type(error).__name__})"
    problem = json_problem(value)
    return (None, problem) if problem else (value, None)
