"""A 2 GB export is read in bounded memory: one element at a time from chunks, never the
whole file. Checked on a generated export by what the reader holds, never by time."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

from companion_memory.history.json_stream import CHUNK, JsonStream
from companion_memory.history.reading import read_history


def conversation(index: int, words: int = 40) -> bytes:
    """A small ChatGPT conversation: a root and one user message."""
    said = " ".join(f"word{index}-{n}" for n in range(words))
    return json.dumps(
        {
            "id": f"c{index}",
            "title": f"Chat {index}",
            "create_time": 1_700_000_000 + index,
            "current_node": "m",
            "mapping": {
                "root": {"id": "root", "message": None, "parent": None, "children": ["m"]},
                "m": {
                    "id": "m",
                    "parent": "root",
                    "children": [],
                    "message": {
                        "id": f"m{index}",
                        "author": {"role": "user"},
                        "create_time": 1_700_000_000 + index,
                        "content": {"content_type": "text", "parts": [said]},
                    },
                },
            },
        }
    ).encode()


class GeneratedArray(io.RawIOBase):
    """A JSON array of generated elements, made as it is read: the test holds no file.
    ``served`` counts the bytes handed out; ``starts`` is where each element begins."""

    def __init__(self, count: int, element: Callable[[int], bytes]) -> None:
        self.count, self.element = count, element
        self.starts: list[int] = []
        self.seek(0)

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        assert (offset, whence) == (0, 0), "the readers only rewind"
        self.served, self._next, self._pending = 0, 0, b"["
        self.starts = []
        return 0

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while len(self._pending) < len(buffer) and self._next <= self.count:
            if self._next == self.count:
                self._pending += b"]"
            else:
                separator = b"," if self._next else b""
                self.starts.append(self.served + len(self._pending) + len(separator))
                self._pending += separator + self.element(self._next)
            self._next += 1
        data, self._pending = self._pending[: len(buffer)], self._pending[len(buffer) :]
        buffer[: len(data)] = data
        self.served += len(data)
        return len(data)


def test_the_stream_holds_a_chunk_or_two_however_long_the_array() -> None:
    source = GeneratedArray(20_000, conversation)  # about 15 MB
    stream = JsonStream(io.BufferedReader(source, CHUNK), "conversations.json")
    held = 0
    for count, (_, element) in enumerate(stream.items("conversations.json"), 1):
        assert element["id"] == f"c{count - 1}"
        held = max(held, stream.held)
    assert count == 20_000 and source.served > 100 * CHUNK
    assert held <= 3 * CHUNK


def test_an_element_larger_than_a_chunk_is_held_alone_at_most_twice_over() -> None:
    big = len(conversation(0, words=100_000))  # about 1.5 MB each
    stream = JsonStream(io.BufferedReader(GeneratedArray(4, lambda i: conversation(i, 100_000)), CHUNK), "c.json")
    held = 0
    for _, _element in stream.items("c.json"):
        held = max(held, stream.held)
    assert big < held <= 2 * big + 2 * CHUNK


def test_read_history_yields_each_conversation_having_read_no_further_than_a_few_chunks_past_it() -> None:
    source = GeneratedArray(20_000, conversation)
    run = read_history(io.BufferedReader(source, CHUNK), "conversations.json")  # type: ignore[arg-type]
    assert run.format == "chatgpt"
    for index, message in enumerate(run.messages()):
        assert message.source_id == f"chatgpt:m{index}"
        # Everything before this conversation's start has been let go; what is read and
        # not yet let go is at most a few chunks.
        assert source.served - source.starts[index] <= 3 * CHUNK
    assert run.tally.summary().messages == 20_000
