"""One of her own todos, as the services hand it around: a plain dataclass in the column
order of ``todos``, the order an export carries."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Todo:
    """Something she means to do: priority 1 (whenever) … 5 (urgent), an optional due day
    (YYYY-MM-DD), open until it is done or abandoned (``closed_at``)."""

    id: str
    namespace: str
    text: str
    priority: int
    due: str | None = None
    status: str = "open"
    note: str | None = None
    source: str
    created_at: str
    updated_at: str
    closed_at: str | None = None


TODO_FIELDS = tuple(f.name for f in dataclasses.fields(Todo))
