"""Folding a long chat: the pure parts (gateway/folding.py does the rest).

A conversation's leading system messages are its head and are never folded. The rest
folds only at a user message, the oldest turns first, keeping the last ``keep_turns``
turns as they are. A fold is found again by the hash of the messages it covers (as the
client sent them), so the next turn, which repeats those messages, gets the same summary:
the provider's cached prefix stays byte-identical until the next fold.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .chat_turn import message_text, turn_id
from .tokens import text_tokens

# Retention removes folds no conversation has used for this long.
FOLDS_KEPT_DAYS = 30

Message = Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class Fold:
    """One row of ``context_folds``: the summary that replaced a conversation's messages
    before ``upto``, found again by the hash of those messages (``prefix_hash``). It keeps
    the folded messages as the client sent them (but for their ``<private>`` spans), the
    ids they are stored under, and the fold it grew from."""

    id: str
    namespace: str
    prefix_hash: str
    upto: int
    summary: str
    summarizer: str
    messages: list[Message]
    anchors: list[str]
    previous_id: str | None = None
    created_at: str
    used_at: str

    def replace(self, **changes: Any) -> Fold:
        return dataclasses.replace(self, **changes)


FOLD_FIELDS = tuple(f.name for f in dataclasses.fields(Fold))

# A tool's output longer than this is cut to its head and tail (the reference's pruner).
TOOL_OUTPUT_MAX_CHARS = 8000
TOOL_OUTPUT_HEAD_CHARS = 6000
TOOL_OUTPUT_TAIL_CHARS = 1500
_TOOL_ROLES = ("tool", "function")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def head_length(messages: Sequence[Message]) -> int:
    """How many leading system (or developer) messages the conversation has."""
    count = 0
    for message in messages:
        if message.get("role") not in ("system", "developer"):
            break
        count += 1
    return count


def trimmed(message: Message) -> Message:
    """A tool output over ``TOOL_OUTPUT_MAX_CHARS`` as its head and tail, saying how much
    was cut; any other message as it is. The same input always gives the same bytes."""
    content = message.get("content")
    if message.get("role") not in _TOOL_ROLES or not isinstance(content, str) or len(content) <= TOOL_OUTPUT_MAX_CHARS:
        return message
    cut = len(content) - TOOL_OUTPUT_HEAD_CHARS - TOOL_OUTPUT_TAIL_CHARS
    middle = f"\n[… {cut} characters of tool output left out …]\n"
    return {**message, "content": content[:TOOL_OUTPUT_HEAD_CHARS] + middle + content[-TOOL_OUTPUT_TAIL_CHARS:]}


def estimate_tokens(messages: Sequence[Message]) -> int:
    """About how many tokens the messages take (``text_tokens``, and a few for each
    message's role); tool calls count by their JSON."""
    total = 0
    for message in messages:
        text = message_text(message)
        if message.get("tool_calls"):
            text += json.dumps(message["tool_calls"], ensure_ascii=False)
        total += 4 + text_tokens(text)
    return total


def prefix_hashes(messages: Sequence[Message]) -> list[str]:
    """``hashes[n]``: the hash of the first ``n`` messages (``hashes[0]`` of none)."""
    hashes = [hashlib.sha256(b"").hexdigest()]
    for message in messages:
        canonical = json.dumps(message, sort_keys=True, ensure_ascii=False)
        hashes.append(hashlib.sha256((hashes[-1] + canonical).encode()).hexdigest())
    return hashes


def fold_boundary(messages: Sequence[Message], start: int, keep_turns: int) -> int | None:
    """Where a fold of the messages from ``start`` ends: the user message that opens the
    last ``keep_turns`` turns; None when that leaves nothing to fold."""
    users = [i for i in range(start, len(messages)) if messages[i].get("role") == "user"]
    if len(users) <= keep_turns:
        return None
    boundary = users[len(users) - keep_turns]
    return boundary if boundary > start else None


def anchors(messages: Sequence[Message], start: int, end: int) -> list[str]:
    """The ids the gateway stored the folded user messages and replies under (see
    ``turn_id``): each user message at ``i`` with the conversation up to it, the assistant
    reply that follows it with the same id and ":reply"."""
    found: list[str] = []
    for index in range(start, end):
        role = messages[index].get("role")
        if role == "user":
            found.append(turn_id(messages[: index + 1]))
        elif role == "assistant" and index > 0 and messages[index - 1].get("role") == "user":
            found.append(turn_id(messages[:index]) + ":reply")
    return found


def extractive_summary(previous: str, messages: Sequence[Message], max_chars: int) -> str:
    """A summary without a model: the earlier summary, then the first sentence of each
    folded user message and reply; the oldest lines go first when it runs over."""
    lines = [previous] if previous else []
    for message in messages:
        role = message.get("role")
        if role not in ("user", "assistant"):
            continue
        text = " ".join(message_text(message).split())
        if not text:
            continue
        first = _SENTENCE_END.split(text, maxsplit=1)[0]
        lines.append(f"{role}: {first[:160]}{'…' if len(first) > 160 or len(first) < len(text) else ''}")
    while len(lines) > 1 and len("\n".join(lines)) > max_chars:
        lines.pop(0)
    return "\n".join(lines)[:max_chars]


def summary_message(fold_id: str, folded: int, summary: str) -> dict[str, Any]:
    """The folded turns as one system message, right after the conversation's head."""
    return {
        "role": "system",
        "content": f"Earlier in this conversation ({folded} messages folded; context_expand with fold_id "
        f"{fold_id} returns them word for word):\n{summary}",
    }
