"""A JSON document read as a stream: the elements of an array and the members of an
object one at a time, from a binary file read in chunks, never the whole file.

Each element is decoded by ``json.JSONDecoder.raw_decode`` (the C scanner), so a 2 GB
``conversations.json`` costs the memory of its largest conversation plus a chunk or two.
A library (ijson) would walk tokens instead, but the Worker's Pyodide does not ship it
and the pure core imports only the standard library.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import Any, BinaryIO

from ..errors import UnreadableHistory

CHUNK = 1 << 16
_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER_GOES_ON = frozenset("0123456789.eE+-")
# "-Infinity" less its last letter, "\\uXXXX" less its last digit: the longest cut tails.
_LONGEST_CUT = 9


class JsonStream:
    """A cursor over one JSON text. ``items`` and ``members`` walk a container lazily;
    inside them ``value`` decodes the next value whole. A member whose value the caller
    does not read is skipped."""

    def __init__(self, file: BinaryIO, name: str, *, chunk: int = CHUNK) -> None:
        self.name = name
        self._file = file
        self._chunk = chunk
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self._decoder = json.JSONDecoder()
        self._buffer = ""
        self._at = 0
        self._eof = False
        self._bytes = 0  # bytes read so far, for the position of a bad one
        self._lines = 0  # newlines dropped from the buffer's front, for error lines
        self._pending = False  # a member's key was handed out, its value not read yet

    @property
    def held(self) -> int:
        """Characters held in memory (what the streaming test bounds)."""
        return len(self._buffer)

    def _fill(self, at_least: int = 1) -> bool:
        """Read until ``at_least`` more characters are held (fewer at the end of the file).
        The consumed front of the buffer is dropped first."""
        if self._at:
            self._lines += self._buffer.count("\n", 0, self._at)
            self._buffer = self._buffer[self._at :]
            self._at = 0
        added = 0
        while added < at_least and not self._eof:
            data = self._file.read(self._chunk)
            self._eof = not data
            try:
                text = self._utf8.decode(data, final=self._eof)
            except UnicodeDecodeError as error:
                raise UnreadableHistory(
                    f"{self.name}: not UTF-8 text (byte {self._bytes + error.start}); export it again as UTF-8"
                ) from None
            self._bytes += len(data)
            self._buffer += text
            added += len(text)
        return added > 0

    def _where(self, path: str, offset: int) -> str:
        line = self._lines + self._buffer.count("\n", 0, offset) + 1
        return f"{path} (line {line})"

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end)."""
        while True:
            self._at = _SPACE.match(self._buffer, self._at).end()  # type: ignore[union-attr]
            if self._at < len(self._buffer):
                return self._buffer[self._at]
            if not self._fill():
                return ""

    def _expect(self, char: str, path: str, what: str) -> None:
        found = self.peek()
        if found != char:
            shown = repr(found) if found else "the end of the file"
            raise UnreadableHistory(f"{self._where(path, self._at)}: expected {what}, found {shown}")
        self._at += 1

    def value(self, path: str) -> Any:
        """The next value, whole. Decoding is retried on more text while the value is
        cut by the buffer's end; the buffer at least doubles each time, so a large value
        costs a few decodes, not one per chunk."""
        self._pending = False
        self.peek()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buffer, self._at)
            except json.JSONDecodeError as error:
                if self._eof:
                    where = self._where(path, error.pos)
                    raise UnreadableHistory(f"{where}: not valid JSON ({error.msg}); is the file cut short?") from None
                if not _maybe_cut(error, len(self._buffer)):
                    raise UnreadableHistory(f"{self._where(path, error.pos)}: not valid JSON ({error.msg})") from None
            else:
                # Only a number can look whole and go on in the next chunk ("-1" of "-1.5e3").
                if self._eof or not _cut_number(value, self._buffer, end):
                    self._at = end
                    return value
            self._fill(max(self._chunk, len(self._buffer) - self._at))

    def items(self, path: str) -> Iterator[tuple[str, Any]]:
        """The elements of the array that comes next, each with its path."""
        self._pending = False
        self._expect("[", path, "a JSON array")
        index = 0
        while True:
            if self.peek() == "]":
                self._at += 1
                return
            if index:
                self._expect(",", f"{path}[{index}]", "',' or ']'")
            element = f"{path}[{index}]"
            yield element, self.value(element)
            index += 1

    def members(self, path: str) -> Iterator[tuple[str, str]]:
        """The keys of the object that comes next, each with its value's path; read the
        value (``value``, ``items``, ``members``) before the next key, or it is skipped."""
        self._pending = False
        self._expect("{", path, "a JSON object")
        first = True
        while True:
            if self.peek() == "}":
                self._at += 1
                return
            if not first:
                self._expect(",", path, "',' or '}'")
            first = False
            if self.peek() != '"':
                self._expect('"', path, "a member name")
            key = self.value(path)
            self._expect(":", path, "':'")
            member = f"{path}.{key}"
            self._pending = True
            yield key, member
            if self._pending:
                self.value(member)

    def end(self) -> None:
        """Nothing but whitespace may follow the document."""
        found = self.peek()
        if found:
            raise UnreadableHistory(f"{self._where(self.name, self._at)}: unexpected {found!r} after the JSON document")


def _maybe_cut(error: json.JSONDecodeError, held: int) -> bool:
    """Whether more text may mend the error: it is at the buffer's end (a cut literal or
    escape is at most ``_LONGEST_CUT`` characters back), or a string runs past it. Any
    other error is in the file, and reading on would only fill memory."""
    return error.pos >= held - _LONGEST_CUT or error.msg.startswith("Unterminated string")


def _cut_number(value: Any, buffer: str, end: int) -> bool:
    """Whether ``value``, decoded up to ``end``, may be a number the buffer's end cut."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return end == len(buffer) or buffer[end] in _NUMBER_GOES_ON


def records(stream: JsonStream) -> Iterator[tuple[str, Any]]:
    """The conversations of an export: the elements of a top-level array, or the one
    object a browser extension saves; then nothing but whitespace."""
    if stream.peek() == "{":
        yield stream.name, stream.value(stream.name)
    else:
        yield from stream.items(stream.name)
    stream.end()
