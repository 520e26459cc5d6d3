"""Anthropic's stream, event by event, as OpenAI ``chat.completion.chunk`` objects."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ....ports import ChatUsage
from ..completion import chunk, usage_chunk
from .response import completion_id, error_from_event, finish_reason, message_usage


class AnthropicStreamTranslator:
    """Turns Anthropic stream events into OpenAI ``chat.completion.chunk`` objects, one
    event at a time.

    Text arrives as ``content`` deltas, thinking as ``reasoning_content`` deltas (the
    field DeepSeek-style clients show), each ``tool_use`` block as one OpenAI tool call
    (its own ``index``, ``id`` and name first, then argument fragments). The finish
    chunk and a usage chunk (``choices: []``) follow ``message_stop``. An ``error``
    event raises ``UpstreamError``.
    """

    def __init__(self, model: str, *, provider: str = "Anthropic", created: int | None = None) -> None:
        self.model = model
        self.provider = provider
        self.created = int(time.time()) if created is None else created
        self.id = completion_id(None)
        self.finished = False
        self.usage = ChatUsage()
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._started = False
        self._tools: dict[int, int] = {}  # content block index -> OpenAI tool call index
        self._tool_has_arguments: dict[int, bool] = {}

    def feed(self, event: str | None, data: Mapping[str, Any]) -> list[dict[str, Any]]:
        kind = data.get("type") or event
        if kind == "error":
            raise error_from_event(data.get("error"), self.provider)
        if kind == "message_start":
            return self._message_start(data.get("message") or {})
        chunks = [] if self._started else self._message_start({})
        if kind == "content_block_start":
            chunks.extend(self._block_start(int(data.get("index", 0)), data.get("content_block") or {}))
        elif kind == "content_block_delta":
            chunks.extend(self._block_delta(int(data.get("index", 0)), data.get("delta") or {}))
        elif kind == "content_block_stop":
            chunks.extend(self._block_stop(int(data.get("index", 0))))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            if delta.get("stop_reason"):
                self._stop_reason = delta["stop_reason"]
            self._add_usage(data.get("usage"))
        elif kind == "message_stop":
            chunks.extend(self._finish())
        # ping and event types added later carry nothing for the client.
        return chunks

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return chunk(self.id, self.created, self.model, delta, finish)

    def _message_start(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        if message.get("id"):
            self.id = completion_id(message["id"])
        self._add_usage(message.get("usage"))
        if self._started:
            return []
        self._started = True
        return [self._chunk({"role": "assistant", "content": ""})]

    def _add_usage(self, usage: Any) -> None:
        # message_delta's usage is cumulative: a later figure replaces an earlier one.
        if isinstance(usage, Mapping):
            for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
                if isinstance(usage.get(key), int):
                    self._usage[key] = usage[key]

    def _block_start(self, index: int, block: Mapping[str, Any]) -> list[dict[str, Any]]:
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            return [self._chunk({"content": block["text"]})]
        if kind == "thinking" and block.get("thinking"):
            return [self._chunk({"reasoning_content": block["thinking"]})]
        if kind == "tool_use":
            position = len(self._tools)
            self._tools[index] = position
            arguments = ""
            if block.get("input"):  # normally {} here, the input follows as JSON fragments
                arguments = json.dumps(block["input"], ensure_ascii=False)
            self._tool_has_arguments[index] = bool(arguments)
            call = {
                "index": position,
                "id": str(block.get("id")),
                "type": "function",
                "function": {"name": str(block.get("name")), "arguments": arguments},
            }
            return [self._chunk({"tool_calls": [call]})]
        return []

    def _block_delta(self, index: int, delta: Mapping[str, Any]) -> list[dict[str, Any]]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [self._chunk({"content": delta["text"]})]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [self._chunk({"reasoning_content": delta["thinking"]})]
        if kind == "input_json_delta" and delta.get("partial_json") and index in self._tools:
            self._tool_has_arguments[index] = True
            call = {"index": self._tools[index], "function": {"arguments": delta["partial_json"]}}
            return [self._chunk({"tool_calls": [call]})]
        return []  # signature_delta, citations_delta: nothing an OpenAI client reads

    def _block_stop(self, index: int) -> list[dict[str, Any]]:
        if index in self._tools and not self._tool_has_arguments.get(index):
            # A tool without input sends no fragments; "" would not parse as JSON.
            self._tool_has_arguments[index] = True
            return [self._chunk({"tool_calls": [{"index": self._tools[index], "function": {"arguments": "{}"}}]})]
        return []

    def _finish(self) -> list[dict[str, Any]]:
        if self.finished:
            return []
        self.finished = True
        converted, self.usage = message_usage(self._usage)
        return [
            self._chunk({}, finish_reason(self._stop_reason)),
            usage_chunk(self.id, self.created, self.model, converted),
        ]
