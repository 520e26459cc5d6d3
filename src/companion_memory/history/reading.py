"""The one entry of the readers: an export file in, its messages out, one at a time, with
the format (detected and said, or given) and a tally of what was left out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, Protocol

from . import chatbox, chatgpt, cherry_studio, claude, jsonl, markdown
from .detect import detect, sources_for
from .message import ImportedMessage
from .options import ReadOptions
from .source import Export, Limits, Source
from .tally import Tally


class Reader(Protocol):
    def __call__(self, sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]: ...


READERS: dict[str, Reader] = {
    "chatgpt": chatgpt.read,
    "claude": claude.read,
    "chatbox": chatbox.read,
    "cherry-studio": cherry_studio.read,
    "jsonl": jsonl.read,
    "markdown": markdown.read,
}


@dataclass
class HistoryRead:
    format: str
    # Why this format: what detection saw, or "given".
    reason: str
    sources: tuple[Source, ...]
    options: ReadOptions
    tally: Tally = field(default_factory=Tally)

    def messages(self) -> Iterator[ImportedMessage]:
        """Each message, counted as it goes; an ``UnreadableHistory`` stops the stream at
        the first bad place (what came before was valid)."""
        for message in READERS[self.format](self.sources, self.tally, self.options):
            self.tally.kept(message)
            yield message


def read_history(
    file: BinaryIO,
    name: str,
    *,
    format: str = "auto",
    options: ReadOptions | None = None,
    limits: Limits | None = None,
) -> HistoryRead:
    """``file`` is a seekable binary file (a zip is recognised by its first bytes);
    ``name`` is the file's name, as errors and Markdown day detection use it."""
    export = Export(file, name, limits)
    if format == "auto":
        found = detect(export)
        return HistoryRead(found.format, found.reason, found.sources, options or ReadOptions())
    return HistoryRead(format, "given", sources_for(export, format), options or ReadOptions())
