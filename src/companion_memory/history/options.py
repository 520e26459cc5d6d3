"""What the person importing tells the readers beyond the file."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class ReadOptions:
    # Where times written without an offset were local (JSONL, Markdown day files):
    # the importer passes DREAM_TIME_ZONE.
    time_zone: str = "UTC"
    # The day of a Markdown day file not named YYYY-MM-DD.md and without a date heading.
    day: date | None = None
    # The repository a Markdown day file came from, so that its message ids are the
    # GitHub daily source's and a day already pulled is not stored twice.
    repo: str = ""
