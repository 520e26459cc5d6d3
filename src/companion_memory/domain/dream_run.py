"""A dream run as recorded (``dream_runs``; dry runs are not): a plain dataclass in the
column order of the table."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class DreamRun:
    """One namespace's day, dreamt: how it went, what it read and proposed; ``counts`` is
    the run's counts and extractor as JSON text, as stored."""

    id: str
    namespace: str
    date: str
    status: str
    dry_run: int
    messages_read: int
    candidates_created: int
    counts: str
    error: str | None = None
    started_at: str
    finished_at: str | None = None


DREAM_RUN_FIELDS = tuple(f.name for f in dataclasses.fields(DreamRun))
