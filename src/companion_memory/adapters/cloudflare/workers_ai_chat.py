"""``ports.ChatModel`` over the Worker's ``env.AI`` binding, for ``workers-ai/@cf/...``
models: in the Worker they need no account id or API token.

The binding takes ``{messages, max_tokens, temperature, ..., stream}``. Its answers come
in the shapes Workers AI models use: the classic ``{response, usage, tool_calls?}``, an
OpenAI chat completion (newer models), or a Responses API object (the gpt-oss family); a
stream is a ``ReadableStream`` of SSE events, each ``{response: "<piece>"}`` or an OpenAI
chunk, ending with ``[DONE]``. All of them are turned into OpenAI chat completions and
chunks here, the format the gateway speaks.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

from ...domain.usage import openai_usage, usage_of
from ...ports import ChatCall, ChatUsage, UpstreamError
from ..chat.completion import chunk, completion, usage_chunk
from ..chat.openai_compatible import with_patch
from ..chat.sse import openai_events
from . import ffi

PROVIDER = "Workers AI"
# What the text-generation models accept besides messages (their published schemas).
_OPTIONS = (
    "max_tokens",
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "repetition_penalty",
    "frequency_penalty",
    "presence_penalty",
    "tools",
    "response_format",
)


def _openai_usage(usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """Usage under either name the models report it by."""
    usage = usage or {}
    prompt = int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0)
    output = int(usage.get("completion_tokens") or usage.get("output_tokens") or 0)
    return openai_usage(prompt, output)


def _new_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex}"


def _tool_calls(calls: Any) -> list[dict[str, Any]]:
    out = []
    for index, call in enumerate(calls or []):
        function = call.get("function") or call
        arguments = function.get("arguments", {})
        out.append(
            {
                "index": index,
                "id": call.get("id") or f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {
                    "name": function.get("name", ""),
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return out


def _responses_text(result: Mapping[str, Any]) -> str:
    parts = []
    for item in result.get("output") or []:
        if isinstance(item, Mapping) and item.get("type") == "message":
            parts += [c.get("text", "") for c in item.get("content") or [] if c.get("type") in ("output_text", "text")]
    return "".join(parts)


def completion_of(result: Any, model: str) -> dict[str, Any]:
    """An OpenAI chat completion from whatever shape the model answered in."""
    if isinstance(result, Mapping) and result.get("choices"):
        return {
            "id": _new_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            **result,
            "usage": _openai_usage(result.get("usage")),
        }
    text: str | None
    if isinstance(result, Mapping) and "output" in result:
        text, calls = _responses_text(result), []
    elif isinstance(result, Mapping) and ("response" in result or "tool_calls" in result):
        response = result.get("response")
        text = response if isinstance(response, str) or response is None else json.dumps(response, ensure_ascii=False)
        calls = _tool_calls(result.get("tool_calls"))
    elif isinstance(result, str):
        text, calls = result, []
    else:
        raise UpstreamError(f"{PROVIDER} answered something that is not a chat answer", status=502)
    message: dict[str, Any] = {"role": "assistant", "content": text or ("" if not calls else None)}
    if calls:
        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
    usage = _openai_usage(result.get("usage") if isinstance(result, Mapping) else None)
    return completion(_new_id(), model, message, "tool_calls" if calls else "stop", usage)


def _failure(error: Exception) -> UpstreamError:
    """The binding's errors read ``AiError: <code>: <description>``."""
    text = str(error)
    if "3040" in text or "3036" in text or "apacity" in text or "rate limit" in text.lower():
        return UpstreamError(f"{PROVIDER} is over capacity or rate-limited: {text}", status=429, code="rate_limited")
    if "5007" in text or "No such model" in text:
        return UpstreamError(f"{PROVIDER}: {text}", status=404, code="model_not_found")
    if "5006" in text or "5021" in text:  # schema errors, context window exceeded
        return UpstreamError(f"{PROVIDER} refused the request: {text}", status=400, code="invalid_request")
    return UpstreamError(f"{PROVIDER} failed: {text}", status=502)


class WorkersAIChat:
    provider = PROVIDER

    def __init__(self, binding: Any) -> None:
        self._binding = binding

    def _inputs(self, call: ChatCall, stream: bool) -> dict[str, Any]:
        body = with_patch(dict(call.body), call.memory_patch)
        inputs: dict[str, Any] = {"messages": body["messages"]}
        inputs.update({key: body[key] for key in _OPTIONS if body.get(key) is not None})
        if "max_tokens" not in inputs and body.get("max_completion_tokens"):
            inputs["max_tokens"] = body["max_completion_tokens"]
        if stream:
            inputs["stream"] = True
        return inputs

    async def _run(self, call: ChatCall, stream: bool) -> Any:
        try:
            return await self._binding.run(call.model, ffi.to_js(self._inputs(call, stream)))
        except Exception as error:  # broad on purpose: whatever the binding throws becomes the port's error
            raise _failure(error) from error

    async def complete(self, call: ChatCall) -> tuple[dict[str, Any], ChatUsage]:
        answer = completion_of(ffi.to_py(await self._run(call, False)), call.model)
        return answer, usage_of(answer["usage"])

    async def stream(self, call: ChatCall) -> AsyncIterator[dict[str, Any]]:
        stream = await self._run(call, True)
        chunk_id, created = _new_id(), int(time.time())
        usage: dict[str, Any] | None = None
        closed = False
        pieces = ffi.stream_chunks(stream)
        try:
            async with aclosing(openai_events(PROVIDER, pieces)) as events:
                async for event in events:
                    if event.get("usage"):
                        usage = _openai_usage(event["usage"])
                    if event.get("choices"):
                        closed = closed or any(c.get("finish_reason") for c in event["choices"])
                        yield {**event, "id": chunk_id, "object": "chat.completion.chunk", "model": call.model}
                    elif event.get("response"):
                        yield chunk(chunk_id, created, call.model, {"content": event["response"]})
                    elif event.get("tool_calls"):
                        yield chunk(chunk_id, created, call.model, {"tool_calls": _tool_calls(event["tool_calls"])})
        except UpstreamError:
            raise
        except Exception as error:  # broad on purpose: whatever the binding throws becomes the port's error
            raise _failure(error) from error
        finally:
            await pieces.aclose()
        if not closed:
            yield chunk(chunk_id, created, call.model, {}, "stop")
        yield usage_chunk(chunk_id, created, call.model, usage or _openai_usage(None))
