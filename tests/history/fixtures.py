"""The hand-made exports of tests/data/imports and their expected messages (FORMATS.md)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from companion_memory.history.message import ImportedMessage
from companion_memory.history.options import ReadOptions
from companion_memory.history.source import Export, Source
from companion_memory.history.tally import Summary, Tally

DATA = Path(__file__).resolve().parents[1] / "data" / "imports"
FIELDS = ("conversation_id", "title", "id", "role", "content", "created_at")

Reader = Callable[[Sequence[Source], Tally, ReadOptions], Iterator[ImportedMessage]]


def read(reader: Reader, path: Path, options: ReadOptions | None = None) -> tuple[list[ImportedMessage], Summary]:
    """Every message ``reader`` yields for the file, and the tally's summary."""
    tally = Tally()
    with path.open("rb") as file:
        export = Export(file, path.name)
        sources = [export.member(name) for name in export.names() if name.endswith(".json")] or [export.whole()]
        messages = list(reader(sources, tally, options or ReadOptions()))
    for message in messages:
        tally.kept(message)
    return messages, tally.summary()


def expected(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def shown(message: ImportedMessage) -> dict[str, Any]:
    """A message as the expected files write it."""
    fields = {
        "conversation_id": message.conversation_id,
        "title": message.title,
        "id": message.source_id,
        "role": message.role,
        "content": message.content,
        "created_at": message.created_at,
    }
    return fields | ({"created_at_estimated": True} if message.estimated else {})


def expected_messages(name: str) -> list[dict[str, Any]]:
    return [
        {field: entry[field] for field in FIELDS}
        | ({"created_at_estimated": True} if entry.get("created_at_estimated") else {})
        for entry in expected(name)["messages"]
    ]


def assert_summary(summary: Summary, name: str) -> None:
    """The counts and the date range the CLI prints, and each reason skipped."""
    wanted = expected(name)
    assert (summary.conversations, summary.messages, summary.skipped) == (
        wanted["summary"]["conversations"],
        wanted["summary"]["messages"],
        wanted["summary"]["skipped"],
    )
    assert [summary.first, summary.last] == wanted["summary"]["date_range"]
    reasons = {
        reason: count
        for reason, count in wanted["skipped"].items()
        if isinstance(count, int) and count and reason not in ("blank_lines", "ignored_lines")
    }
    assert summary.skipped_by_reason == reasons
