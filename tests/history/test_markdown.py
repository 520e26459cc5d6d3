from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from companion_memory.errors import UnreadableHistory
from companion_memory.history import markdown
from companion_memory.history.day_file import entry_id, parse_daily
from companion_memory.history.options import ReadOptions
from tests.history.fixtures import DATA, expected, expected_messages, read, shown

SINGAPORE = ReadOptions(time_zone="Asia/Singapore")


def test_a_day_file_is_read_as_the_github_daily_source_reads_it() -> None:
    messages, summary = read(markdown.read, DATA / "transcript.md", SINGAPORE)
    wanted = expected_messages("transcript.expected.json")
    assert [shown(m) | {"id": None} for m in messages] == wanted
    assert [summary.conversations, summary.messages, summary.skipped, [summary.first, summary.last]] == list(
        expected("transcript.expected.json")["summary"].values()
    )


def test_the_message_ids_are_the_nightly_sources_so_a_pulled_day_is_not_stored_twice() -> None:
    messages, _ = read(markdown.read, DATA / "transcript.md", ReadOptions(time_zone="Asia/Singapore", repo="me/notes"))
    entries = parse_daily((DATA / "transcript.md").read_text(encoding="utf-8"))
    assert [m.source_id for m in messages] == [entry_id("me/notes", date(2025, 5, 6), e) for e in entries]


def test_the_day_comes_from_the_name_else_the_heading_else_the_option(tmp_path: Path) -> None:
    turn = "- 09:00 [turn] u: hi ⇢ a: hello\n"
    (tmp_path / "2024-02-03.md").write_text(turn, encoding="utf-8")
    (tmp_path / "notes.md").write_text(turn, encoding="utf-8")
    assert read(markdown.read, tmp_path / "2024-02-03.md")[0][0].created_at == "2024-02-03T09:00:00.000Z"
    given = ReadOptions(day=date(2024, 2, 4))
    assert read(markdown.read, tmp_path / "notes.md", given)[0][0].conversation_id == "github-daily:2024-02-04"
    with pytest.raises(UnreadableHistory, match=r"^notes\.md:1: no day"):
        read(markdown.read, tmp_path / "notes.md")


def test_a_file_not_in_utf8_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "2024-02-03.md").write_bytes(b"# 2024-02-03\n\n- 09:00 [turn] u: caf\xe9\n")
    with pytest.raises(UnreadableHistory, match=r"^2024-02-03\.md:3: not UTF-8"):
        read(markdown.read, tmp_path / "2024-02-03.md")
