"""Server-sent events: an incremental parser for what providers stream to us, and the
framing of what we stream to our clients.

The parser follows the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CRLF
split across two network reads is still one line end), ``:`` starts a comment, ``data``
lines of one event are joined with ``\\n``, one space after the colon is dropped, and a
blank line dispatches the event (an event without data is not dispatched).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from ...ports import UpstreamError
from .upstream import event_json

_LINE_END = re.compile(r"\r\n|\r|\n")

DEFAULT_EVENT = "message"


class SSEParser:
    """Feed it the stream in whatever pieces the network delivers; get back the complete
    events as ``(event_name, data)`` pairs. ``event_name`` is ``"message"`` when the
    event named none; ``data`` is the raw text, left for the caller to decode."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._started = False
        self._skip_lf = False  # the last piece ended in CR: an LF opening the next one is its pair
        self._event = ""
        self._data: list[str] = []
        self.last_event_id = ""

    def feed(self, chunk: bytes | str) -> list[tuple[str, str]]:
        text = self._decoder.decode(chunk) if isinstance(chunk, (bytes, bytearray)) else chunk
        if not text:
            return []
        if self._skip_lf:
            self._skip_lf = False
            text = text.removeprefix("\n")
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        self._buffer += text
        events: list[tuple[str, str]] = []
        start = 0
        for match in _LINE_END.finditer(self._buffer):
            line = self._buffer[start : match.start()]
            start = match.end()
            event = self._line(line)
            if event is not None:
                events.append(event)
        self._buffer = self._buffer[start:]
        if text.endswith("\r"):
            self._skip_lf = True
        return events

    def flush(self) -> list[tuple[str, str]]:
        """At the end of the stream: the last event when the server did not close it with
        a blank line. (The standard drops it; being lenient costs nothing here.)"""
        events = self.feed(self._decoder.decode(b"", final=True))
        if self._buffer:
            event = self._line(self._buffer)
            self._buffer = ""
            if event is not None:
                events.append(event)
        event = self._line("")
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: str) -> tuple[str, str] | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self.last_event_id = value
        # "retry" and unknown fields are ignored.
        return None

    def _dispatch(self) -> tuple[str, str] | None:
        if not self._data:
            self._event = ""
            return None
        event = (self._event or DEFAULT_EVENT, "\n".join(self._data))
        self._event = ""
        self._data = []
        return event


async def openai_events(provider: str, pieces: AsyncIterable[bytes | str]) -> AsyncGenerator[dict[str, Any], None]:
    """The JSON objects of an OpenAI-style stream (``data: {...}`` events ending with
    ``data: [DONE]``), read from ``pieces`` as the network delivers them. A malformed
    event, or a stream that ends without ``[DONE]`` (it was cut off), is a 502."""
    parser = SSEParser()
    async for piece in pieces:
        for _, payload in parser.feed(piece):
            if payload.strip() == "[DONE]":
                return
            yield event_json(provider, payload)
    for _, payload in parser.flush():
        if payload.strip() == "[DONE]":
            return
        yield event_json(provider, payload)
    raise UpstreamError(f"{provider} ended the stream early", status=502)


def format_sse(data: dict[str, Any] | str, *, event: str | None = None) -> bytes:
    """One event as bytes: ``data: {...}\\n\\n`` for a JSON object, ``data: [DONE]\\n\\n``
    for the string ``"[DONE]"``. A string with line breaks becomes several data lines."""
    text = json.dumps(data, ensure_ascii=False) if not isinstance(data, str) else data
    lines = [f"event: {event}"] if event else []
    lines.extend(f"data: {line}" for line in _LINE_END.split(text))
    return ("\n".join(lines) + "\n\n").encode()


DONE = format_sse("[DONE]")
