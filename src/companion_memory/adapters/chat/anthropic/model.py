"""The ChatModel port over the Anthropic Messages API, through Cloudflare AI Gateway.

Two routes reach it (``adapters/chat/routing.py`` builds both):

- ``anthropic/claude-*`` goes to the gateway's Anthropic provider,
  ``{AI_GATEWAY_BASE_URL}/anthropic/v1/messages``;
- ``custom-<slug>/claude-*`` goes to a gateway custom provider,
  ``{AI_GATEWAY_BASE_URL}/custom-<slug>/{CUSTOM_ANTHROPIC_MESSAGES_PATH}``. The gateway
  appends what follows ``custom-<slug>/`` to the base URL the provider was registered
  with, so a provider registered as ``https://openrouter.ai/api/v1`` is called at
  ``.../api/v1/messages`` with the default path ``messages``. That keeps Claude in its
  native format (and its prompt cache) when it is reached through OpenRouter.

Either way the provider key lives in the gateway (BYOK); we send only the gateway's own
``cf-aig-authorization`` token and ``anthropic-version``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import httpx

from ....ports import ChatCall, ChatUsage, UpstreamError
from ....settings import Settings
from ..sse import SSEParser
from ..upstream import event_json, raise_for_upstream, upstream_failure
from .request import to_anthropic
from .response import error_from_event, from_anthropic
from .stream import AnthropicStreamTranslator


def _encode(body: dict[str, Any]) -> bytes:
    # UTF-8 rather than \u escapes: a Chinese history is a third of the size.
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


class AnthropicChatModel:
    provider: str

    def __init__(
        self,
        http: httpx.AsyncClient,
        url: str,
        headers: dict[str, str],
        *,
        settings: Settings | None = None,
        provider: str = "Anthropic",
    ) -> None:
        self.http = http
        self.url = url
        self.headers = {**headers, "content-type": "application/json"}
        self.settings = settings or Settings()
        self.provider = provider

    async def complete(self, call: ChatCall) -> tuple[dict[str, Any], ChatUsage]:
        body = to_anthropic(call, self.settings)
        try:
            response = await self.http.post(self.url, content=_encode(body), headers=self.headers)
        except httpx.HTTPError as error:
            raise upstream_failure(self.provider, error) from error
        raise_for_upstream(self.provider, response.status_code, response.content)
        try:
            payload = response.json()
        except ValueError:
            raise UpstreamError(
                f"{self.provider} answered {response.status_code} with a body that is not JSON", status=502
            ) from None
        if isinstance(payload, dict) and payload.get("type") == "error":
            raise error_from_event(payload.get("error"), self.provider)
        return from_anthropic(payload, call.model)

    async def stream(self, call: ChatCall) -> AsyncIterator[dict[str, Any]]:
        body = {**to_anthropic(call, self.settings), "stream": True}
        translator = AnthropicStreamTranslator(call.model, provider=self.provider)
        parser = SSEParser()
        try:
            async with self.http.stream("POST", self.url, content=_encode(body), headers=self.headers) as response:
                if response.status_code >= 400:
                    raise_for_upstream(self.provider, response.status_code, await response.aread())
                if response.headers.get("content-type", "").startswith("application/json"):
                    self._not_a_stream(await response.aread())
                async for data in response.aiter_bytes():
                    for chunk in self._translate(parser.feed(data), translator):
                        yield chunk
                    if translator.finished:
                        return
                for chunk in self._translate(parser.flush(), translator):
                    yield chunk
        except httpx.HTTPError as error:
            raise upstream_failure(self.provider, error) from error
        if not translator.finished:
            raise UpstreamError(f"{self.provider} ended the stream before the message was complete", status=502)

    def _translate(
        self, events: Iterable[tuple[str, str]], translator: AnthropicStreamTranslator
    ) -> list[dict[str, Any]]:
        chunks: list[dict[str, Any]] = []
        for event, payload in events:
            chunks.extend(translator.feed(event, event_json(self.provider, payload, event)))
        return chunks

    def _not_a_stream(self, content: bytes) -> None:
        try:
            payload = json.loads(content)
        except ValueError:
            payload = None
        if isinstance(payload, dict) and payload.get("type") == "error":
            raise error_from_event(payload.get("error"), self.provider)
        raise UpstreamError(f"{self.provider} answered a streaming request with plain JSON", status=502)
