"""Markdown day files (FORMATS.md §6), read by the GitHub daily source's own parser, with
its times and its message ids, so a day the nightly pull already stored is not stored
twice (given the same ``--repo``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from datetime import date

from ..clock import parse_day
from ..errors import UnreadableHistory
from .day_file import SOURCE, entry_id, entry_time, parse_daily
from .message import ImportedMessage, Role
from .options import ReadOptions
from .source import Source
from .tally import Tally

DAY_NAME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})\.md", re.IGNORECASE)
DAY_HEADING = re.compile(r"#\s+([0-9]{4}-[0-9]{2}-[0-9]{2})\s*")
# A day file is a day's notes; one larger than this is not one (and is read whole).
MAX_BYTES = 64 << 20


def read(sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]:
    for source in sources:
        with source.open() as file:
            raw = file.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise UnreadableHistory(f"{source.name}: larger than {MAX_BYTES} bytes; not a day file")
        markdown = _decoded(raw, source.name)
        day = _day(source, markdown, options)
        for entry in parse_daily(markdown):
            role: Role = "assistant" if entry.role == "assistant" else "user"
            yield ImportedMessage(
                conversation_id=f"{SOURCE}:{day.isoformat()}",
                title=None,
                role=role,
                content=entry.content,
                created_at=entry_time(day, entry, options.time_zone),
                source_id=entry_id(options.repo, day, entry),
            )


def _decoded(raw: bytes, name: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise UnreadableHistory(f"{name}:{line}: not UTF-8 text; save the file as UTF-8") from None


def _day(source: Source, markdown: str, options: ReadOptions) -> date:
    """The file's day: from a YYYY-MM-DD.md name, else a first ``# YYYY-MM-DD`` heading,
    else the one the importer was given."""
    name = source.name
    named = DAY_NAME.fullmatch(source.base_name)
    first = next((line for line in markdown.splitlines() if line.strip()), "")
    heading = DAY_HEADING.fullmatch(first)
    found = named.group(1) if named else heading.group(1) if heading else None
    if found is None:
        if options.day is None:
            raise UnreadableHistory(
                f"{name}:1: no day: name the file YYYY-MM-DD.md, start it with '# YYYY-MM-DD', or give --date"
            )
        return options.day
    try:
        return parse_day(found)
    except ValueError as error:
        raise UnreadableHistory(f"{name}: {error}") from None
