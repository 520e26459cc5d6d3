"""Our own JSONL (FORMATS.md §5): one ``{conversation_id, role, content, created_at}``
object a line, with optional ``id``, ``title``, ``name`` and ``metadata``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..clock import shown
from ..errors import UnreadableHistory
from .message import ImportedMessage
from .options import ReadOptions
from .shape import key, text
from .source import Source
from .tally import Tally
from .times import epoch_seconds, stored_time

SOURCE = "jsonl"
ROLES = ("user", "assistant", "system", "tool")
# Seconds since 1970 stay below 1e11 until the year 5138; a larger number is milliseconds.
MILLISECONDS = 10**11
OFFSET = re.compile(r"(?:[zZ]|[+-]\d{2}(?::?\d{2})?)\s*$")
# A line longer than this is no message of a chat (and would be read whole).
MAX_LINE = 64 << 20


def read(sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]:
    titles: dict[str, str] = {}
    for source in sources:
        with source.open() as file:
            number = 0
            while raw := file.readline(MAX_LINE + 1):
                number += 1
                where = f"{source.name}:{number}"
                if len(raw) > MAX_LINE:
                    raise UnreadableHistory(f"{where}: a line longer than {MAX_LINE} bytes")
                line = _decoded(raw[3:] if number == 1 and raw.startswith(b"\xef\xbb\xbf") else raw, where)
                if line.strip():
                    yield from _message(line, where, titles, tally, options)


def _decoded(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableHistory(f"{where}: not UTF-8 text (byte {error.start} of the line)") from None


def _message(
    line: str, where: str, titles: dict[str, str], tally: Tally, options: ReadOptions
) -> Iterator[ImportedMessage]:
    try:
        entry = json.loads(line)
    except ValueError as error:
        raise UnreadableHistory(f"{where}: not a JSON object ({error})") from None
    if not isinstance(entry, dict):
        raise UnreadableHistory(f"{where}: not a JSON object but {shown(entry)}")
    conversation_id = key(entry.get("conversation_id"), f"{where}: conversation_id")
    if title := text(entry.get("title"), f"{where}: title").strip():
        titles.setdefault(conversation_id, title)
    role = entry.get("role")
    if role not in ROLES:
        raise UnreadableHistory(f"{where}: role: {shown(role)} is none of {', '.join(ROLES)}")
    if not isinstance(entry.get("content"), str):
        raise UnreadableHistory(f"{where}: content: expected a string, found {shown(entry.get('content'))}")
    created_at = _time(entry.get("created_at"), where, tally, options)
    if role in ("system", "tool"):
        tally.skip(role)
        return
    if not entry["content"].strip():
        tally.skip("empty")
        return
    metadata = entry.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise UnreadableHistory(f"{where}: metadata: expected a JSON object, found {shown(metadata)}")
    name = text(entry.get("name"), f"{where}: name") or None
    yield ImportedMessage(
        conversation_id=conversation_id,
        title=titles.get(conversation_id),
        role=role,
        content=entry["content"],
        created_at=created_at,
        source_id=_source_id(entry, where),
        name=name,
        metadata=metadata,
    )


def _source_id(entry: dict[str, Any], where: str) -> str | None:
    """``source_id`` is an id another reader gave the message (what ``import-history --url``
    sends when it reads an export here), kept as it is, so that the message is the same
    one whichever way it came in; else ``id`` is the JSONL's own."""
    if entry.get("source_id") is not None:
        return key(entry["source_id"], f"{where}: source_id")
    ident = entry.get("id")
    return None if ident is None else f"{SOURCE}:{key(ident, f'{where}: id')}"


def _time(value: Any, where: str, tally: Tally, options: ReadOptions) -> str:
    field = f"{where}: created_at"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if abs(value) >= MILLISECONDS:
            raise UnreadableHistory(f"{field}: {shown(value)} looks like milliseconds; give seconds since 1970")
        return epoch_seconds(value, field)
    if isinstance(value, str) and not OFFSET.search(value):
        tally.warn(f"{field}: {shown(value)} has no offset; read in {options.time_zone}")
    return stored_time(value, field, time_zone=options.time_zone)
