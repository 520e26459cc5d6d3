from __future__ import annotations

import io
import json
from typing import Any

import pytest

from companion_memory.errors import UnreadableHistory
from companion_memory.history.json_stream import JsonStream
from tests.history.fixtures import DATA


def members(stream: JsonStream, where: str) -> dict[str, Any]:
    return {name: stream.value(path) for name, path in stream.members(where)}


@pytest.mark.parametrize("chunk", [1, 7, 4096])
@pytest.mark.parametrize("path", ["chatgpt/conversations.json", "claude/conversations.json"])
def test_an_array_read_in_chunks_of_any_size_is_the_document(path: str, chunk: int) -> None:
    data = (DATA / path).read_bytes()
    stream = JsonStream(io.BytesIO(data), "c.json", chunk=chunk)
    assert [element for _, element in stream.items("c.json")] == json.loads(data)
    stream.end()


@pytest.mark.parametrize("chunk", [1, 5, 4096])
def test_an_object_read_in_chunks_of_any_size_is_the_document(chunk: int) -> None:
    data = (DATA / "chatbox/backup-new.json").read_bytes()
    stream = JsonStream(io.BytesIO(data), "b.json", chunk=chunk)
    assert members(stream, "b.json") == json.loads(data)


@pytest.mark.parametrize("chunk", [1, 2, 3, 64])
def test_numbers_and_escapes_cut_by_a_chunk_are_read_whole(chunk: int) -> None:
    data = '[12345678901234, -1.5e3, "a\\"b\\u00e9", true, null, {"k": [1, 2]}, "雪🌕"]'.encode()
    stream = JsonStream(io.BytesIO(data), "n.json", chunk=chunk)
    assert [value for _, value in stream.items("n.json")] == json.loads(data)


def test_a_member_left_unread_is_skipped_and_trailing_text_refused() -> None:
    stream = JsonStream(io.BytesIO(b'{"settings": {"key": [1, {"x": 2}]}, "keep": 3} x'), "s.json", chunk=4)
    assert [(name, stream.value(path)) for name, path in stream.members("s.json") if name == "keep"] == [("keep", 3)]
    with pytest.raises(UnreadableHistory, match=r"^s\.json \(line 1\): unexpected 'x' after the JSON document"):
        stream.end()


def test_a_missing_separator_names_the_element() -> None:
    stream = JsonStream(io.BytesIO(b'[{"a": 1}\n{"b": 2}]'), "s.json")
    with pytest.raises(UnreadableHistory, match=r"^s\.json\[1\] \(line 2\): expected ',' or '\]', found '\{'"):
        list(stream.items("s.json"))


def test_an_error_mid_file_is_raised_where_it_is_without_reading_on() -> None:
    data = io.BytesIO(b'[{"a": 1},\n{"b": x}' + b" " * (8 << 20) + b"]")
    stream = JsonStream(data, "big.json", chunk=1 << 16)
    with pytest.raises(UnreadableHistory, match=r"^big\.json\[1\] \(line 2\): not valid JSON \(Expecting value\)$"):
        list(stream.items("big.json"))
    assert data.tell() <= 4 << 16
