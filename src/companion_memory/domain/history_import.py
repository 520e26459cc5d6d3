"""A history import (``history_imports``): a chat export from another app on its way in,
as stored; a plain dataclass in the column order of the table."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

ImportStatus = Literal["uploading", "queued", "checking", "storing", "done", "failed"]
# The statuses a step of the job can go on from (``queued``: not begun).
RUNNABLE: tuple[ImportStatus, ...] = ("queued", "checking", "storing")
ENDED: tuple[ImportStatus, ...] = ("done", "failed")


@dataclass(frozen=True, kw_only=True)
class HistoryImport:
    """``path``: a file on the machine that runs the job (the CLI's), else the uploaded
    parts hold the bytes. ``total`` is known once the whole file was checked; ``position``
    counts the messages of the file handled so far, each ``stored``, a ``duplicate`` of
    one stored before, or ``outside`` since/until. ``summary`` is the readers' tally as
    JSON text, as stored."""

    id: str
    namespace: str
    name: str
    path: str | None = None
    size: int
    received: int = 0
    format: str = "auto"
    detected: str | None = None
    reason: str | None = None
    since_at: str | None = None
    until_at: str | None = None
    time_zone: str = "UTC"
    dry_run: int = 0
    status: ImportStatus
    total: int | None = None
    position: int = 0
    stored: int = 0
    duplicates: int = 0
    outside: int = 0
    summary: str | None = None
    error: str | None = None
    created_at: str
    updated_at: str
    finished_at: str | None = None


HISTORY_IMPORT_FIELDS = tuple(f.name for f in dataclasses.fields(HistoryImport))
