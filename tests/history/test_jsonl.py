from __future__ import annotations

from pathlib import Path

import pytest

from companion_memory.errors import UnreadableHistory
from companion_memory.history import jsonl
from companion_memory.history.options import ReadOptions
from tests.history.fixtures import DATA, assert_summary, expected_messages, read, shown


def test_each_line_is_a_message_with_its_conversation_title_and_time() -> None:
    messages, summary = read(jsonl.read, DATA / "history.jsonl")
    assert [shown(m) for m in messages] == expected_messages("history.expected.json")
    assert_summary(summary, "history.expected.json")
    assert messages[4].metadata == {"model": "local-llm"}


def test_a_time_without_offset_is_local_and_warned_of(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"conversation_id": "c", "role": "user", "content": "hi", "created_at": "2025-06-01T08:00:00"}\n'
    )
    messages, summary = read(jsonl.read, path, ReadOptions(time_zone="Asia/Singapore"))
    assert [m.created_at for m in messages] == ["2025-06-01T00:00:00.000Z"]
    assert summary.warnings == ("h.jsonl:1: created_at: '2025-06-01T08:00:00' has no offset; read in Asia/Singapore",)


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b'{"conversation_id": "c", "role": "user", "content": "hi"', r"^h\.jsonl:2: not a JSON object"),
        (b'["c", "user", "hi"]', r"^h\.jsonl:2: not a JSON object but \["),
        (b'{"conversation_id": "c", "role": "human", "content": "hi", "created_at": 1}', r"^h\.jsonl:2: role: 'human'"),
        (b'{"role": "user", "content": "hi", "created_at": 1}', r"^h\.jsonl:2: conversation_id: expected an id"),
        (
            b'{"conversation_id": "c", "role": "user", "content": "hi", "created_at": 1748765100000}',
            r"looks like milliseconds",
        ),
        (
            b'{"conversation_id": "c", "role": "user", "content": "hi", "created_at": "June"}',
            r"^h\.jsonl:2: created_at: 'June' is not",
        ),
        (b'{"conversation_id": "c", "role": "user", "content": "caf\xe9", "created_at": 1}', r"^h\.jsonl:2: not UTF-8"),
    ],
)
def test_a_bad_line_is_an_error_naming_the_file_and_line(tmp_path: Path, line: bytes, error: str) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b'{"conversation_id": "c", "role": "user", "content": "ok", "created_at": 1}\n' + line + b"\n")
    with pytest.raises(UnreadableHistory, match=error):
        read(jsonl.read, path)
