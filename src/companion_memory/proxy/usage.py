"""Token usage from an OpenAI-format ``usage`` object.

Besides the standard fields, adapters for formats that report prompt-cache writes
(Anthropic) add ``cache_creation_tokens``; clients ignore the extra key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ports import ChatUsage


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
