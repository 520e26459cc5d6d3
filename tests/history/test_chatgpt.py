from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion_memory.errors import UnreadableHistory
from companion_memory.history import chatgpt
from tests.history.fixtures import DATA, assert_summary, expected_messages, read, shown


def test_the_branch_shown_is_read_with_its_times_and_markers() -> None:
    messages, summary = read(chatgpt.read, DATA / "chatgpt" / "conversations.json")
    assert [shown(m) for m in messages] == expected_messages("chatgpt/expected.json")
    assert_summary(summary, "chatgpt/expected.json")


def test_without_current_node_the_newest_leaf_is_the_branch_and_the_summary_says_so(tmp_path: Path) -> None:
    conversations = json.loads((DATA / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    del conversations[0]["current_node"]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    messages, summary = read(chatgpt.read, path)
    # The regenerated reply (0004) is older than the chosen branch's leaf (0009).
    assert [m.source_id for m in messages] == [m["id"] for m in expected_messages("chatgpt/expected.json")]
    assert summary.warnings == ("conversations.json[0]: no current_node; took the branch ending in the newest message",)


def test_a_bad_time_names_its_json_path(tmp_path: Path) -> None:
    conversations = json.loads((DATA / "chatgpt" / "conversations.json").read_text(encoding="utf-8"))
    conversations[1]["mapping"]["9c41f7e2-0001-4b8a-8f10-5d6e7f8a9b01"]["message"]["create_time"] = "yesterday"
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    with pytest.raises(
        UnreadableHistory,
        match=r"^conversations\.json\[1\]\.mapping\.9c41f7e2-0001-4b8a-8f10-5d6e7f8a9b01\.message\.create_time: 'yesterday' is not a number",
    ):
        read(chatgpt.read, path)
