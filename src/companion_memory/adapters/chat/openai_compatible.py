"""The ChatModel port over any OpenAI-compatible ``/chat/completions`` endpoint: the AI
Gateway's ``/compat`` path, or a self-hosted server (Ollama, llama.cpp, vLLM)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any, TypeGuard

import httpx

from ...domain.usage import usage_of
from ...ports import ChatCall, ChatUsage, UpstreamError
from .sse import openai_events
from .upstream import raise_for_upstream, upstream_failure


def with_patch(body: dict[str, Any], patch: str) -> dict[str, Any]:
    """The body with the memory patch appended to the last user message, where no
    provider's prefix cache reaches; everything before it is left byte-identical."""
    if not patch:
        return body
    messages = [dict(m) for m in body["messages"]]
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                message["content"] = [*content, {"type": "text", "text": patch}]
            else:
                message["content"] = f"{content or ''}\n\n{patch}"
            break
    return {**body, "messages": messages}


class OpenAICompatChatModel:
    def __init__(self, http: httpx.AsyncClient, url: str, headers: dict[str, str], provider: str) -> None:
        self.http = http
        self.url = url
        self.headers = headers
        self.provider = provider

    def _body(self, call: ChatCall, stream: bool) -> dict[str, Any]:
        body = with_patch({**call.body, "model": call.model}, call.memory_patch)
        body.pop("stream_options", None)
        body["stream"] = stream
        if stream:
            # Always ask for usage: the gateway logs it, and hides it from a client
            # that did not ask.
            body["stream_options"] = {"include_usage": True}
        return body

    async def complete(self, call: ChatCall) -> tuple[dict[str, Any], ChatUsage]:
        try:
            response = await self.http.post(self.url, json=self._body(call, False), headers=self.headers)
        except httpx.HTTPError as error:
            raise upstream_failure(self.provider, error) from error
        raise_for_upstream(self.provider, response.status_code, response.content)
        try:
            completion = response.json()
        except ValueError:
            completion = None
        if not _is_completion(completion):
            raise UpstreamError(f"{self.provider} answered something that is not a chat completion", status=502)
        return completion, usage_of(completion.get("usage"))

    def _checked(self, chunk: dict[str, Any]) -> dict[str, Any]:
        if "error" in chunk:
            error = chunk["error"]
            raise UpstreamError(
                f"{self.provider}: {error.get('message', error) if isinstance(error, dict) else error}", status=502
            )
        return chunk

    async def stream(self, call: ChatCall) -> AsyncIterator[dict[str, Any]]:
        try:
            async with self.http.stream(
                "POST", self.url, json=self._body(call, True), headers=self.headers
            ) as response:
                if response.status_code >= 400:
                    raise_for_upstream(self.provider, response.status_code, await response.aread())
                async with aclosing(openai_events(self.provider, response.aiter_bytes())) as chunks:
                    async for chunk in chunks:
                        yield self._checked(chunk)
        except httpx.HTTPError as error:
            raise upstream_failure(self.provider, error) from error


def _is_completion(value: Any) -> TypeGuard[dict[str, Any]]:
    """The shape the gateway and the jobs read: a list of choices, each an object whose
    message (when there is one) is an object too."""
    choices = value.get("choices") if isinstance(value, dict) else None
    return isinstance(choices, list) and all(
        isinstance(choice, dict) and isinstance(choice.get("message", {}), dict) for choice in choices
    )
