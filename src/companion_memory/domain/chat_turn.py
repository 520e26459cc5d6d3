"""The messages of an OpenAI-style chat turn, as the gateway stores them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .private_spans import strip_private


def message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def without_private(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """The message with the ``<private>`` spans of its text cut, as it may be stored."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": strip_private(content)}
    if isinstance(content, list):
        parts = [
            {**p, "text": strip_private(p["text"])} if isinstance(p, Mapping) and isinstance(p.get("text"), str) else p
            for p in content
        ]
        return {**message, "content": parts}
    return message


def turn_id(messages: Sequence[Mapping[str, Any]]) -> str:
    """The key the gateway stores a turn's user message under (its reply: the key and
    ":reply"): the whole conversation as sent, so a client's retry (within the ingest's
    retry window) is stored once."""
    canonical = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
    return "chat:" + hashlib.sha256(canonical.encode()).hexdigest()
