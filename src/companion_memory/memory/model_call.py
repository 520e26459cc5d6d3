"""One chat call from a background job (dream, rollups), with the backoff they share:
a rate limit or a provider error waits 2 s, then 8 s, then gives up."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..ports import ChatCall, ChatModel, UpstreamError

BACKOFF_SECONDS = (2.0, 8.0)
RETRIED_STATUSES = (429, 500, 502, 503, 504)


@dataclass(frozen=True)
class Answer:
    text: str
    # The provider stopped at max_tokens: the text is cut off.
    truncated: bool


@dataclass
class JobModel:
    chat_model: ChatModel
    model: str
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep)

    async def ask(self, body: dict[str, Any]) -> Answer:
        waits = list(BACKOFF_SECONDS)
        while True:
            try:
                completion, _ = await self.chat_model.complete(ChatCall(self.model, body))
            except UpstreamError as error:
                if error.status not in RETRIED_STATUSES or not waits:
                    raise
                await self.sleep(waits.pop(0))
                continue
            choice = (completion.get("choices") or [{}])[0]
            text = (choice.get("message") or {}).get("content") or ""
            return Answer(text, choice.get("finish_reason") == "length")
