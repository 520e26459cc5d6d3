"""Small helpers for writing SQL that respects D1's limits."""

from __future__ import annotations

import json
from typing import Any, Iterator, Sequence, TypeVar

from ..ports import MAX_BOUND_PARAMETERS

T = TypeVar("T")


def chunks(items: Sequence[T], size: int = MAX_BOUND_PARAMETERS - 10) -> Iterator[Sequence[T]]:
    """Split an ``IN (...)`` list so that each statement stays under D1's parameter limit."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(count: int) -> str:
    return ", ".join("?" * count)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def from_json(text: str | None, default: Any) -> Any:
    if not text:
        return default
    return json.loads(text)
