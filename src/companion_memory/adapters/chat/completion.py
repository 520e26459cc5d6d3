"""OpenAI ``chat.completion`` and ``chat.completion.chunk`` objects, built the same way
by every adapter that translates another format into them."""

from __future__ import annotations

import time
from typing import Any


def completion(
    completion_id: str,
    model: str,
    message: dict[str, Any],
    finish_reason: str,
    usage: dict[str, Any],
    *,
    created: int | None = None,
) -> dict[str, Any]:
    """A one-choice chat completion."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage,
    }


def chunk(
    completion_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    """A one-choice stream chunk."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def usage_chunk(completion_id: str, created: int, model: str, usage: dict[str, Any]) -> dict[str, Any]:
    """The stream's last chunk: no choices, only the usage (``stream_options.include_usage``)."""
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": usage,
    }
