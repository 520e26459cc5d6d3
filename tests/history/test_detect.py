from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from companion_memory.errors import UnreadableHistory
from companion_memory.history.reading import read_history
from tests.history.fixtures import DATA


@pytest.mark.parametrize(
    ("path", "format"),
    [
        ("chatgpt/conversations.json", "chatgpt"),
        ("claude/conversations.json", "claude"),
        ("chatbox/backup-old.json", "chatbox"),
        ("chatbox/backup-new.json", "chatbox"),
        ("cherry-studio/data.json", "cherry-studio"),
        ("cherry-studio/data-v3.json", "cherry-studio"),
        ("cherry-studio/cherry-studio.202505120900.zip", "cherry-studio"),
        ("history.jsonl", "jsonl"),
        ("transcript.md", "markdown"),
    ],
)
def test_every_fixture_is_recognised_and_the_reason_said(path: str, format: str) -> None:
    with (DATA / path).open("rb") as file:
        found = read_history(file, Path(path).name)
        assert (found.format, bool(found.reason)) == (format, True)
        assert list(found.messages())


def zipped(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize(
    ("siblings", "format"),
    [({"users.json": b"[]"}, "claude"), ({"chat.html": b"<html>"}, "chatgpt"), ({}, "chatgpt")],
)
def test_an_export_zip_is_told_by_its_siblings_or_else_its_first_conversation(
    tmp_path: Path, siblings: dict[str, bytes], format: str
) -> None:
    conversations = (DATA / f"{format}/conversations.json").read_bytes()
    path = zipped(tmp_path, {"conversations.json": conversations, **siblings})
    with path.open("rb") as file:
        found = read_history(file, path.name)
        assert found.format == format
        assert [s.name for s in found.sources] == ["export.zip:conversations.json"]
        assert len(list(found.messages())) == {"chatgpt": 10, "claude": 8}[format]


def test_a_cherry_studio_direct_backup_is_refused_asking_for_a_legacy_backup() -> None:
    refused = pytest.raises(UnreadableHistory, match=r"direct backup \(version 6\).*make a Legacy backup instead")
    with (DATA / "cherry-studio/cherry-studio.direct-backup-v6.zip").open("rb") as file, refused:
        read_history(file, "cherry-studio.direct-backup-v6.zip")


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"", r"^notes\.txt: not an export this importer knows .*: an empty file$"),
        (b"Dear diary, nothing to see.\n", r"^notes\.txt: not an export .*: text with no turn line or checkpoint$"),
        (
            b'{"apiKey": "sk-secret", "theme": "dark"}',
            r"^notes\.txt: not an export .*: a JSON object with keys apiKey, theme$",
        ),
        (b'[{"a": 1}]', r"^notes\.txt\[0\]: not an export .*: a JSON array of objects with keys a$"),
        (b"[]", r"^notes\.txt: an empty JSON array"),
        ("[{}]".encode("utf-16"), r"^notes\.txt: UTF-16 text, not UTF-8"),
        ("- 09:00 [turn] u: café".encode("latin-1"), r"^notes\.txt: not UTF-8 text \(byte 21\)"),
    ],
)
def test_a_file_of_no_known_format_is_an_error_naming_it(data: bytes, error: str) -> None:
    with pytest.raises(UnreadableHistory, match=error) as raised:
        read_history(io.BytesIO(data), "notes.txt")
    assert "sk-secret" not in raised.value.message


def test_a_format_given_is_used_and_a_zip_of_another_is_refused(tmp_path: Path) -> None:
    with (DATA / "history.jsonl").open("rb") as file:
        assert read_history(file, "history.jsonl", format="jsonl").reason == "given"
    refused = pytest.raises(UnreadableHistory, match=r"asked to read it as chatgpt, but it is a Cherry Studio")
    with (DATA / "cherry-studio/cherry-studio.202505120900.zip").open("rb") as file, refused:
        read_history(file, "backup.zip", format="chatgpt")
    with pytest.raises(UnreadableHistory, match=r"^unknown format 'csv'"):
        read_history(io.BytesIO(b"[]"), "x.csv", format="csv")


def test_jsonl_whose_first_line_is_longer_than_the_head_is_still_jsonl() -> None:
    line = {"conversation_id": "c", "role": "user", "content": "long " * 20_000, "created_at": 1_700_000_000}
    data = (json.dumps(line) + "\n" + json.dumps(line | {"content": "short"}) + "\n").encode()
    run = read_history(io.BytesIO(data), "h.jsonl")
    assert (run.format, [len(m.content) for m in run.messages()]) == ("jsonl", [100_000, 5])
