"""A chat call's token usage (``ChatUsage``), and OpenAI's ``usage`` shape both ways:
built from a provider's figures, and read back as ``ChatUsage``.

Besides the standard fields, adapters for formats that report prompt-cache writes
(Anthropic) add ``cache_creation_tokens``; clients ignore the extra key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChatUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0


def openai_usage(prompt: int, completion: int, cache: tuple[int, int] | None = None) -> dict[str, Any]:
    """An OpenAI ``usage`` object. ``cache`` is ``(read, written)`` prompt tokens for a
    provider that reports them; ``prompt`` counts them too, as OpenAI's does."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cache is not None:
        read, written = cache
        usage["prompt_tokens_details"] = {"cached_tokens": read, "cache_write_tokens": written}
        usage["cache_creation_tokens"] = written  # read back by usage_of
    return usage


def usage_of(usage: Mapping[str, Any] | None) -> ChatUsage:
    if not usage:
        return ChatUsage()
    details = usage.get("prompt_tokens_details") or {}
    return ChatUsage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_tokens=int(details.get("cached_tokens") or 0),
        cache_creation_tokens=int(usage.get("cache_creation_tokens") or 0),
    )
