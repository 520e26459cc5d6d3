"""A Messages API answer as an OpenAI chat completion, with its usage; Anthropic's
stop reasons and error objects in OpenAI's and our terms."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ....domain.usage import openai_usage, usage_of
from ....ports import ChatUsage, UpstreamError
from ..completion import completion

# Anthropic stop_reason -> OpenAI finish_reason.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}

# Anthropic error types (in an error body or a stream ``error`` event) -> our status.
ERROR_STATUSES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
}


def message_usage(usage: Mapping[str, Any] | None) -> tuple[dict[str, Any], ChatUsage]:
    """A Messages ``usage`` object as OpenAI's (whose prompt_tokens include the cached
    ones) and as ChatUsage."""
    usage = usage or {}
    fresh = int(usage.get("input_tokens") or 0)
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    output = int(usage.get("output_tokens") or 0)
    converted = openai_usage(fresh + read + written, output, cache=(read, written))
    return converted, usage_of(converted)


def finish_reason(stop_reason: str | None) -> str:
    return FINISH_REASONS.get(stop_reason or "end_turn", "stop")


def completion_id(message_id: Any) -> str:
    return f"chatcmpl-{message_id}" if message_id else f"chatcmpl-{int(time.time() * 1000)}"


def from_anthropic(
    response: Mapping[str, Any], model: str, *, created: int | None = None
) -> tuple[dict[str, Any], ChatUsage]:
    """A Messages API response as an OpenAI ``chat.completion`` and its usage.

    Raises ``UpstreamError`` (502) when ``response`` is not a message."""
    content = response.get("content") if isinstance(response, Mapping) else None
    if not isinstance(content, list):
        raise UpstreamError("Anthropic answered something that is not a message", status=502)
    texts: list[str] = []
    thoughts: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking") or ""))
        elif kind == "tool_use":
            tool_calls.append(
                {
                    "id": str(block.get("id")),
                    "type": "function",
                    "function": {
                        "name": str(block.get("name")),
                        "arguments": json.dumps(block.get("input") or {}, ensure_ascii=False),
                    },
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts or not tool_calls else None}
    if thoughts:
        message["reasoning_content"] = "".join(thoughts)
    if tool_calls:
        message["tool_calls"] = tool_calls
    converted, usage = message_usage(response.get("usage"))
    answer = completion(
        completion_id(response.get("id")),
        model,
        message,
        finish_reason(response.get("stop_reason")),
        converted,
        created=created,
    )
    return answer, usage


def error_from_event(error: Any, provider: str = "Anthropic") -> UpstreamError:
    """An Anthropic ``error`` object (``{"type": ..., "message": ...}``) as UpstreamError:
    client-side kinds keep their status, the rest (api_error, overloaded_error) are 502."""
    kind = error.get("type") if isinstance(error, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    status = ERROR_STATUSES.get(str(kind), 502)
    text = f"{provider} reported {kind or 'an error'}: {message or 'no details'}"
    return UpstreamError(text, status=status, code="upstream_rejected" if status < 500 else "upstream_error")
