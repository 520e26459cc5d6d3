"""What an import kept and what it left out, by reason, and the summary printed at the end."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .message import ImportedMessage

# Why a message of the export is not imported (FORMATS.md §0 rule 3).
SKIP_REASONS = (
    "system",
    "tool",
    "reasoning",
    "off_branch",
    "hidden",
    "example",
    "marker",
    "error",
    "empty",
    "undated",
)
MAX_WARNINGS = 100


@dataclass(frozen=True)
class Summary:
    conversations: int
    messages: int
    skipped: int
    skipped_by_reason: dict[str, int]
    # Parts or blocks dropped inside a kept message (thinking, tool calls, citations).
    dropped: dict[str, int]
    # Conversations the export lists with no message in them at all.
    empty_conversations: int
    first: str | None
    last: str | None
    warnings: tuple[str, ...]


@dataclass
class Tally:
    """Filled while a reader runs: the readers count skips and drops; ``read_export``
    counts each message yielded."""

    skipped: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    messages: int = 0
    empty_conversations: int = 0
    first: str | None = None
    last: str | None = None
    _conversations: set[str] = field(default_factory=set)

    def skip(self, reason: str, count: int = 1) -> None:
        assert reason in SKIP_REASONS, reason
        self.skipped[reason] += count

    def drop(self, kind: str) -> None:
        self.dropped[kind] += 1

    def warn(self, text: str) -> None:
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(text)

    def kept(self, message: ImportedMessage) -> None:
        self.messages += 1
        self._conversations.add(message.conversation_id)
        # The stored form sorts as text in time order.
        if self.first is None or message.created_at < self.first:
            self.first = message.created_at
        if self.last is None or message.created_at > self.last:
            self.last = message.created_at

    def summary(self) -> Summary:
        return Summary(
            conversations=len(self._conversations),
            messages=self.messages,
            skipped=sum(self.skipped.values()),
            skipped_by_reason=dict(self.skipped),
            dropped=dict(self.dropped),
            empty_conversations=self.empty_conversations,
            first=self.first,
            last=self.last,
            warnings=tuple(self.warnings),
        )
