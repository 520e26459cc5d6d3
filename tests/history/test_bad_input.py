"""Every bad input is one ``UnreadableHistory`` naming the file and where in it; the
messages before it were valid, none after it is yielded."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from companion_memory.errors import InvalidInput, UnreadableHistory
from companion_memory.history.reading import read_history
from companion_memory.history.source import Limits
from tests.history.fixtures import DATA


@pytest.mark.parametrize(
    ("path", "error"),
    [
        ("chatgpt/conversations.json", r"^conversations\.json\[1\] \(line \d+\): not valid JSON .*cut short"),
        ("claude/conversations.json", r"^conversations\.json\[0\] \(line \d+\): not valid JSON"),
        ("chatbox/backup-new.json", r"^backup-new\.json\.session:c0ffee00-1111-4222-8333-444455556666 \(line \d+\)"),
        ("cherry-studio/data.json", r"^data\.json\.indexedDB\.message_blocks\[\d+\] \(line \d+\): not valid JSON"),
    ],
)
def test_truncated_json_is_an_error_at_its_json_path(path: str, error: str) -> None:
    data = (DATA / path).read_bytes()
    cut = data[: len(data) * 3 // 4]
    with pytest.raises(UnreadableHistory, match=error):
        list(read_history(io.BytesIO(cut), Path(path).name).messages())


def test_the_conversations_before_the_damage_were_valid_and_nothing_after_is_yielded() -> None:
    data = (DATA / "chatgpt/conversations.json").read_bytes()
    run = read_history(io.BytesIO(data[: len(data) * 3 // 4]), "conversations.json")
    seen = []
    with pytest.raises(UnreadableHistory):
        for message in run.messages():
            seen.append(message.conversation_id)
    assert set(seen) == {"chatgpt:67d3f1a0-5c2e-8004-9a1b-3e5f7c9d2a10"}


def test_a_wrong_encoding_names_the_byte_and_a_bom_is_fine() -> None:
    data = (DATA / "claude/conversations.json").read_bytes()
    assert len(list(read_history(io.BytesIO(b"\xef\xbb\xbf" + data), "c.json").messages())) == 8
    latin = data.decode("utf-8").replace("🌕", "").replace("帮我把这句话翻译成英文：今天的月亮很圆", "Caf\xe9")
    with pytest.raises(UnreadableHistory, match=r"^c\.json: not UTF-8 text \(byte \d+\)"):
        list(read_history(io.BytesIO(latin.encode("latin-1", errors="replace")), "c.json", format="claude").messages())


def test_it_is_an_invalid_input_of_the_service_family() -> None:
    assert issubclass(UnreadableHistory, InvalidInput)
    assert UnreadableHistory("x").code == "unreadable_history"


def bomb(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", b"[]")
        archive.writestr("conversations.json", b"[" + b" " * size + b"]")
    return path


def test_a_zip_bomb_is_refused_by_its_inflation_ratio(tmp_path: Path) -> None:
    path = bomb(tmp_path, 4 << 20)  # 4 MiB of spaces deflate about a thousand times
    with path.open("rb") as file, pytest.raises(UnreadableHistory, match=r"zip bomb"):
        list(read_history(file, path.name).messages())


def test_a_zip_whose_header_lies_is_refused_while_it_is_read(tmp_path: Path) -> None:
    path = bomb(tmp_path, 1 << 20)
    data = bytearray(path.read_bytes())
    # Claim a tiny unpacked size in the local and central headers: only reading tells.
    archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = archive.getinfo("conversations.json")
    for offset in (info.header_offset + 22, data.rfind(b"PK\x01\x02", 0) + 24):
        data[offset : offset + 4] = (10).to_bytes(4, "little")
    with pytest.raises(UnreadableHistory, match=r"^export\.zip:conversations\.json: the zip is damaged"):
        list(read_history(io.BytesIO(bytes(data)), "export.zip", format="claude").messages())


def test_members_unpacking_past_the_cap_together_are_refused_while_read(tmp_path: Path) -> None:
    def batch(start: int) -> bytes:
        return json.dumps([{"uuid": f"c{i}", "chat_messages": []} for i in range(start, start + 100)]).encode()

    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", b"[]")
        archive.writestr("conversations-0000.json", batch(0))
        archive.writestr("conversations-0001.json", batch(100))
    # Each member is under the cap; only their sum is over it.
    cap = len(batch(0)) + len(batch(100)) // 2
    with (
        path.open("rb") as file,
        pytest.raises(UnreadableHistory, match=rf"-0001\.json: the zip unpacks to more than {cap} bytes"),
    ):
        list(read_history(file, path.name, limits=Limits(unpacked=cap, ratio=10_000)).messages())


def test_an_error_inside_a_zip_names_the_zip_and_its_member(tmp_path: Path) -> None:
    data = (DATA / "claude/conversations.json").read_bytes()
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", b"[]")
        archive.writestr("conversations.json", data[: len(data) // 2])
    error = r"^export\.zip:conversations\.json\[0\] \(line \d+\): not valid JSON"
    with path.open("rb") as file, pytest.raises(UnreadableHistory, match=error):
        list(read_history(file, path.name).messages())
