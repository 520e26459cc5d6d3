"""What a reader yields: one message of an export, as ingest will take it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """``content`` is what ingest receives: the markers (``[image]``, ``[file: name]``)
    first, one a line, then the words, ``<private>`` spans and secrets still in (ingest
    and the episode apply those rules, as for live messages). ``created_at`` is the
    stored form (``clock.iso``); ``estimated`` says the export gave no time, so the
    message took the time of the one shown before it (FORMATS.md §0 rule 2).
    ``source_id`` is ``<source>:<the app's message id>``, ingest's idempotency key."""

    conversation_id: str
    title: str | None
    role: Role
    content: str
    created_at: str
    source_id: str | None = None
    name: str | None = None
    estimated: bool = False
    # What the export says of the message beyond its words (JSONL's ``metadata``).
    metadata: dict[str, Any] | None = None


def with_markers(markers: list[str], text: str) -> str:
    """The markers first, one a line, then the text: one order whatever the app's, so the
    idempotency hash of a message without an id stays stable."""
    return "\n".join([*markers, text] if text else markers)


def file_marker(name: str) -> str:
    return f"[file: {name or 'unnamed'}]"


IMAGE = "[image]"
