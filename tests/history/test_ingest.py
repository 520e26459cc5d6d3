"""The readers' messages through the real ingest: what is stored is the fixtures'
``stored_content`` (``<private>`` cut by ingest, not by the readers), and importing the
same file again stores nothing new."""

from __future__ import annotations

from itertools import groupby
from pathlib import Path

import pytest

from companion_memory.history.options import ReadOptions
from companion_memory.history.reading import read_history
from companion_memory.memory.history_imports import as_incoming
from companion_memory.runtime import Runtime
from tests.history.fixtures import DATA, expected

FIXTURES = [
    ("chatgpt/conversations.json", "chatgpt/expected.json"),
    ("claude/conversations.json", "claude/expected.json"),
    ("chatbox/backup-new.json", "chatbox/backup-new.expected.json"),
    ("cherry-studio/data.json", "cherry-studio/data.expected.json"),
    ("history.jsonl", "history.expected.json"),
    ("transcript.md", "transcript.expected.json"),
]


async def ingest(runtime: Runtime, path: Path) -> list[bool]:
    """Each conversation's messages ingested as the importer will; whether each was new."""
    with path.open("rb") as file:
        messages = list(read_history(file, path.name, options=ReadOptions(time_zone="Asia/Singapore")).messages())
    fresh: list[bool] = []
    for conversation_id, said in groupby(messages, key=lambda m: m.conversation_id):
        outcomes = await runtime.ingestor.ingest(
            "imported", [as_incoming(m) for m in said], conversation_id=conversation_id, source="import"
        )
        fresh += [not outcome.duplicate for outcome in outcomes]
    return fresh


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
@pytest.mark.parametrize(("path", "wanted"), FIXTURES)
async def test_the_stored_words_are_the_fixtures_and_a_second_import_stores_nothing(
    runtime: Runtime, path: str, wanted: str
) -> None:
    assert all(await ingest(runtime, DATA / path))
    rows = await runtime.db.all(
        "SELECT conversation_id, content, created_at FROM messages WHERE namespace = 'imported' ORDER BY rowid"
    )
    stored = sorted((r["conversation_id"], r["content"], r["created_at"]) for r in rows)
    assert stored == sorted(
        (m["conversation_id"], m.get("stored_content", m["content"]), m["created_at"])
        for m in expected(wanted)["messages"]
    )
    assert not any(await ingest(runtime, DATA / path))
