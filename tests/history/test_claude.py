from __future__ import annotations

import json
from pathlib import Path

from companion_memory.history import claude
from tests.history.fixtures import DATA, assert_summary, expected, expected_messages, read, shown


def test_the_text_blocks_of_the_branch_shown_are_read_with_their_markers() -> None:
    messages, summary = read(claude.read, DATA / "claude" / "conversations.json")
    assert [shown(m) for m in messages] == expected_messages("claude/expected.json")
    assert_summary(summary, "claude/expected.json")
    assert summary.dropped == expected("claude/expected.json")["skipped"]["dropped_blocks"]


def test_an_old_message_loses_the_tool_placeholders_of_its_text_and_an_empty_conversation_is_counted(
    tmp_path: Path,
) -> None:
    fence = "```\nThis block is not supported on your current device yet.\n```"
    conversation = {
        "uuid": "c1",
        "name": "",
        "summary": "Bread",
        "created_at": "2024-01-02T03:04:05Z",
        "chat_messages": [
            {
                "uuid": "m1",
                "sender": "assistant",
                "text": f"Looking.\n{fence}\n\n{fence}\n\nFound it.",
                "files": [{"file_name": ""}],
            }
        ],
    }
    empty = {"uuid": "c0", "name": "Nothing said", "created_at": "2024-01-01T00:00:00Z", "chat_messages": []}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([empty, conversation]), encoding="utf-8")
    messages, summary = read(claude.read, path)
    assert (summary.conversations, summary.empty_conversations) == (1, 1)
    assert [(m.title, m.content, m.created_at, m.estimated) for m in messages] == [
        ("Bread", "[file: unnamed]\nLooking.\n\nFound it.", "2024-01-02T03:04:05.000Z", True)
    ]
