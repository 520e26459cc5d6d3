from __future__ import annotations

import json
from pathlib import Path

import pytest

from companion_memory.history import chatbox
from tests.history.fixtures import DATA, assert_summary, expected, expected_messages, read, shown


@pytest.mark.parametrize("name", ["backup-old", "backup-new"])
def test_the_sessions_of_either_shape_are_read_without_the_settings(name: str) -> None:
    messages, summary = read(chatbox.read, DATA / "chatbox" / f"{name}.json")
    assert [shown(m) for m in messages] == expected_messages(f"chatbox/{name}.expected.json")
    assert_summary(summary, f"chatbox/{name}.expected.json")
    assert summary.dropped == expected(f"chatbox/{name}.expected.json")["skipped"].get("dropped_parts", {})


def test_a_listed_session_missing_from_the_backup_is_reported_and_the_rest_read(tmp_path: Path) -> None:
    backup = json.loads((DATA / "chatbox" / "backup-new.json").read_text(encoding="utf-8"))
    backup["chat-sessions-list"].append({"id": "gone", "name": "Lost"})
    path = tmp_path / "backup.json"
    path.write_text(json.dumps(backup), encoding="utf-8")
    messages, summary = read(chatbox.read, path)
    assert len(messages) == 6
    assert summary.warnings == ("backup.json: session gone is listed but not in the backup",)
