"""The messages of an OpenAI-style chat turn, as the gateway stores them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any


def message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return ""


def turn_id(messages: Sequence[Mapping[str, Any]]) -> str:
    """The key the gateway stores a turn's user message under (its reply: the key and
    ":reply"): the whole conversation as sent, so a client's retry (within the ingest's
    retry window) is stored once."""
    canonical = json.dumps(list(messages), sort_keys=True, ensure_ascii=False)
    return "chat:" + hashlib.sha256(canonical.encode()).hexdigest()
