"""OpenAI chat completions <-> Anthropic Messages, as pure functions (no I/O).

Requests: ``to_anthropic`` turns the client's OpenAI body into a Messages body and places
the prompt-cache breakpoints. Anthropic renders a request as tools -> system -> messages
and caches the prefix up to each block that carries ``cache_control``; a later request
reads the cache only when its prefix is byte-identical. So:

- tools are sorted by name, and every key inside them is sorted, so the same tools give
  the same bytes whatever order the client lists them in;
- system and developer messages become ``system`` text blocks, converted the same way
  every turn; the last one is the stable system anchor;
- the tail breakpoint sits on the current user turn's own last block, the bridge on a
  history message whose position only moves every ANTHROPIC_ROLLING_CACHE_WINDOW_SIZE
  messages (the server looks back about 20 blocks from a breakpoint for an earlier
  entry; the bridge keeps one within reach in long histories);
- the memory patch, which changes every turn, is appended after all of them as the last
  text block of the current user turn and never carries ``cache_control``. Breakpoints
  are at most four; client-sent ``cache_control`` is dropped, as the gateway owns them.

Responses: ``from_anthropic`` for a whole message, ``AnthropicStreamTranslator`` for the
stream, event by event.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..ports import ChatCall, ChatUsage, UpstreamError
from ..settings import Settings

MAX_CACHE_BREAKPOINTS = 4
DEFAULT_MAX_TOKENS = 8192
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})

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

Block = dict[str, Any]


def _bad_request(message: str) -> UpstreamError:
    return UpstreamError(message, status=400, code="invalid_request")


# -- request ------------------------------------------------------------------------------


def to_anthropic(call: ChatCall, settings: Settings) -> dict[str, Any]:
    """The Messages API body for ``call`` (without ``stream``; the adapter adds it)."""
    body = call.body
    raw_messages = body.get("messages") or []
    if not isinstance(raw_messages, Sequence) or isinstance(raw_messages, (str, bytes)):
        raise _bad_request("messages must be a list")

    system: list[Block] = []
    turns: list[tuple[str, list[Block]]] = []
    for position, message in enumerate(raw_messages):
        if not isinstance(message, Mapping):
            raise _bad_request(f"messages[{position}] is not an object")
        role = message.get("role")
        if role in ("system", "developer"):
            system.extend(_text_blocks(message.get("content"), f"messages[{position}]"))
        elif role == "user":
            turns.append(("user", _user_blocks(message.get("content"), f"messages[{position}]")))
        elif role == "assistant":
            turns.append(("assistant", _assistant_blocks(message, f"messages[{position}]")))
        elif role in ("tool", "function"):
            turns.append(("user", [_tool_result(message, f"messages[{position}]")]))
        else:
            raise _bad_request(f"messages[{position}] has an unknown role {role!r}")
    messages = _merge(turns)
    prefill = bool(turns) and turns[-1][0] == "assistant"
    if prefill and messages and messages[-1]["role"] == "assistant":
        _strip_prefill(messages[-1])

    current = _current_user_turn(messages, prefill)
    own_blocks = len(messages[current]["content"]) if current is not None else 0

    tools = _tools(body.get("tools"))
    result: dict[str, Any] = {"model": call.model, "max_tokens": _max_tokens(body)}
    if system:
        result["system"] = system
    result["messages"] = messages
    if tools:
        result["tools"] = tools
        tool_choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
        if tool_choice is not None:
            result["tool_choice"] = tool_choice
    _sampling(body, result)
    if settings.ANTHROPIC_CACHE_USER_ID:
        result["metadata"] = {"user_id": settings.ANTHROPIC_CACHE_USER_ID}
    if settings.ANTHROPIC_THINKING_ENABLED and _thinking_allowed(messages):
        _enable_thinking(result, settings.ANTHROPIC_THINKING_BUDGET)

    if settings.ANTHROPIC_CACHE_ENABLED:
        _place_breakpoints(result, current, own_blocks, settings)
    if call.memory_patch:
        _append_patch(messages, current, call.memory_patch)
    return result


def _parts(content: Any, where: str) -> list[Any]:
    """Message content as a list of parts: a string is one text part, empty is none."""
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise _bad_request(f"{where}.content must be a string or a list of parts")
    return content


def _text_blocks(content: Any, where: str) -> list[Block]:
    """System (and developer) content: text only, empty text dropped."""
    blocks = []
    for part in _parts(content, where):
        if isinstance(part, Mapping) and part.get("type") in ("text", "input_text"):
            if part.get("text"):
                blocks.append({"type": "text", "text": str(part["text"])})
        else:
            raise _bad_request(f"{where}: system messages may only hold text parts")
    return blocks


def _user_blocks(content: Any, where: str) -> list[Block]:
    blocks = []
    for index, part in enumerate(_parts(content, where)):
        block = _user_part(part, f"{where}.content[{index}]")
        if block is not None:
            blocks.append(block)
    return blocks


def _user_part(part: Any, where: str) -> Block | None:
    if isinstance(part, str):
        return {"type": "text", "text": part} if part else None
    if not isinstance(part, Mapping):
        raise _bad_request(f"{where} is not a content part")
    kind = part.get("type")
    if kind in ("text", "input_text"):
        text = part.get("text")
        return {"type": "text", "text": str(text)} if text else None
    if kind in ("image_url", "input_image"):
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        if not isinstance(url, str) or not url:
            raise _bad_request(f"{where}: image_url needs a url")
        return {"type": "image", "source": _image_source(url, where)}
    if kind == "image" and isinstance(part.get("source"), Mapping):  # already Claude's shape
        return {"type": "image", "source": _sorted(part["source"])}
    if kind == "file":
        file = part.get("file")
        data = file.get("file_data") if isinstance(file, Mapping) else None
        if isinstance(data, str) and data.startswith("data:application/pdf;base64,"):
            source = {"type": "base64", "media_type": "application/pdf", "data": data.partition(",")[2]}
            return {"type": "document", "source": source}
        raise _bad_request(f"{where}: only PDF files given as data: URLs can be sent to Claude")
    raise _bad_request(f"{where}: Claude cannot take {kind!r} content")


def _image_source(url: str, where: str) -> dict[str, str]:
    if url.startswith("data:"):
        header, comma, data = url[5:].partition(",")
        media_type, _, encoding = header.partition(";")
        if not comma or encoding.lower() != "base64":
            raise _bad_request(f"{where}: an image data: URL must be base64")
        media_type = media_type.lower()
        if media_type == "image/jpg":
            media_type = "image/jpeg"
        if media_type not in IMAGE_MEDIA_TYPES:
            raise _bad_request(
                f"{where}: Claude takes JPEG, PNG, GIF or WebP images, not {media_type or 'untyped data'}"
            )
        return {"type": "base64", "media_type": media_type, "data": data}
    if url.startswith(("https://", "http://")):
        return {"type": "url", "url": url}
    raise _bad_request(f"{where}: an image URL must be https:// or a data: URL")


def _assistant_blocks(message: Mapping[str, Any], where: str) -> list[Block]:
    blocks: list[Block] = []
    content = message.get("content")
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") in ("text", "output_text", "refusal"):
                text = part.get("text") if part.get("type") != "refusal" else part.get("refusal")
                if text:
                    blocks.append({"type": "text", "text": str(text)})
            elif isinstance(part, str) and part:
                blocks.append({"type": "text", "text": part})
    elif content is not None:
        raise _bad_request(f"{where}.content must be a string or a list of parts")
    for index, tool_call in enumerate(message.get("tool_calls") or []):
        function = tool_call.get("function") if isinstance(tool_call, Mapping) else None
        if not isinstance(function, Mapping) or not function.get("name") or not tool_call.get("id"):
            raise _bad_request(f"{where}.tool_calls[{index}] needs an id and a function name")
        blocks.append(
            {
                "type": "tool_use",
                "id": str(tool_call["id"]),
                "name": str(function["name"]),
                "input": _tool_input(function.get("arguments")),
            }
        )
    return blocks


def _tool_input(arguments: Any) -> dict[str, Any]:
    """Claude wants the input as an object; OpenAI carries it as a JSON string."""
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if not arguments:
        return {}
    try:
        parsed = json.loads(arguments)
    except (TypeError, ValueError):
        return {"_raw_arguments": str(arguments)}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _tool_result(message: Mapping[str, Any], where: str) -> Block:
    tool_use_id = message.get("tool_call_id")
    if not tool_use_id:
        raise _bad_request(f"{where}: a tool message needs tool_call_id")
    content = message.get("content")
    if isinstance(content, list):
        result: Any = _user_blocks(content, where)
    else:
        result = "" if content is None else str(content)
    return {"type": "tool_result", "tool_use_id": str(tool_use_id), "content": result}


def _merge(turns: list[tuple[str, list[Block]]]) -> list[dict[str, Any]]:
    """Consecutive turns of one role become one (tool results then a user message is
    one user turn, results first as Claude requires); empty turns are dropped."""
    messages: list[dict[str, Any]] = []
    for role, blocks in turns:
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            content = messages[-1]["content"]
            for block in blocks:
                if block["type"] == "tool_result":  # tool results open a user turn
                    at = sum(1 for b in content if b["type"] == "tool_result")
                    content.insert(at, block)
                else:
                    content.append(block)
        else:
            messages.append({"role": role, "content": list(blocks)})
    return messages


def _strip_prefill(message: dict[str, Any]) -> None:
    # Claude refuses a final assistant turn (a prefill) that ends in whitespace.
    last = message["content"][-1]
    if last.get("type") == "text":
        last["text"] = last["text"].rstrip()
        if not last["text"]:
            message["content"].pop()


def _current_user_turn(messages: list[dict[str, Any]], prefill: bool) -> int | None:
    """The index of the turn being answered: the last message, or the user turn before
    a prefill. None when the client's last user message was empty (and so dropped)."""
    if not prefill:
        return len(messages) - 1 if messages and messages[-1]["role"] == "user" else None
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "user":
            return index
    return None


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sorted(item) for item in value]
    return value


def _tools(tools: Any) -> list[Block]:
    if not tools:
        return []
    if not isinstance(tools, list):
        raise _bad_request("tools must be a list")
    converted = []
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if (
            not isinstance(tool, Mapping)
            or tool.get("type", "function") != "function"
            or not isinstance(function, Mapping)
        ):
            raise _bad_request(f"tools[{index}]: only function tools can be sent to Claude")
        if not function.get("name"):
            raise _bad_request(f"tools[{index}] needs a function name")
        schema = function.get("parameters") or {"type": "object", "properties": {}}
        entry: Block = {"name": str(function["name"])}
        if function.get("description"):
            entry["description"] = str(function["description"])
        entry["input_schema"] = schema
        converted.append(_sorted(entry))
    return sorted(converted, key=lambda entry: entry["name"])


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    if choice is None or choice == "auto":
        result: dict[str, Any] = {"type": "auto"}
    elif choice == "none":
        return {"type": "none"}
    elif choice == "required":
        result = {"type": "any"}
    elif isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping) and choice["function"].get("name"):
        result = {"type": "tool", "name": str(choice["function"]["name"])}
    else:
        raise _bad_request(f"tool_choice {choice!r} is not understood")
    if parallel is False:
        result["disable_parallel_tool_use"] = True
    elif choice is None:
        return None  # the default: leave it out
    return result


def _max_tokens(body: Mapping[str, Any]) -> int:
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def _sampling(body: Mapping[str, Any], result: dict[str, Any]) -> None:
    temperature = body.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        result["temperature"] = min(max(float(temperature), 0.0), 1.0)  # OpenAI goes to 2, Claude to 1
    top_p = body.get("top_p")
    if isinstance(top_p, (int, float)) and not isinstance(top_p, bool):
        result["top_p"] = float(top_p)
    top_k = body.get("top_k")
    if isinstance(top_k, int) and not isinstance(top_k, bool) and top_k > 0:
        result["top_k"] = top_k
    stop = body.get("stop")
    sequences = [stop] if isinstance(stop, str) else list(stop) if isinstance(stop, list) else []
    # Claude refuses stop sequences that are only whitespace.
    sequences = [s for s in sequences if isinstance(s, str) and s.strip()]
    if sequences:
        result["stop_sequences"] = sequences


def _thinking_allowed(messages: list[dict[str, Any]]) -> bool:
    """Thinking is left off where Claude would refuse it for what OpenAI clients cannot
    send back: a prefill, or a tool loop in progress (the assistant's tool_use turn must
    then start with its signed thinking block, which the OpenAI format does not carry)."""
    if not messages or messages[-1]["role"] == "assistant":
        return False
    return not any(block.get("type") == "tool_result" for block in messages[-1]["content"])


def _enable_thinking(result: dict[str, Any], budget: int) -> None:
    result["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if result["max_tokens"] <= budget:
        # The budget counts toward max_tokens, which must exceed it: keep the client's
        # allowance for the answer itself.
        result["max_tokens"] += budget
    # With thinking on, Claude refuses temperature and top_k, top_p below 0.95, and
    # forced tool use.
    result.pop("temperature", None)
    result.pop("top_k", None)
    if result.get("top_p", 1.0) < 0.95:
        result.pop("top_p")
    choice = result.get("tool_choice")
    if choice and choice["type"] in ("any", "tool"):
        result["tool_choice"] = {
            "type": "auto",
            **{k: v for k, v in choice.items() if k == "disable_parallel_tool_use"},
        }


def _marker(settings: Settings) -> dict[str, str]:
    # The 5-minute default is sent without ``ttl``, as the API's own default.
    return {"type": "ephemeral", "ttl": "1h"} if settings.ANTHROPIC_CACHE_TTL == "1h" else {"type": "ephemeral"}


def _place_breakpoints(result: dict[str, Any], current: int | None, own_blocks: int, settings: Settings) -> None:
    """Up to four breakpoints, most stable first: tools, system, tail, bridge. Over
    budget, the bridge goes first, then the tail."""
    messages: list[dict[str, Any]] = result["messages"]
    candidates: list[tuple[str, Block]] = []
    if result.get("tools"):
        candidates.append(("tools", result["tools"][-1]))
    if result.get("system"):
        candidates.append(("system", result["system"][-1]))
    if settings.ANTHROPIC_ROLLING_CACHE_ENABLED and messages:
        tail = _tail_block(messages, current, own_blocks)
        if tail is not None:
            candidates.append(("tail", tail))
        history = current if current is not None else len(messages)
        bridge = _bridge_block(messages, history, settings.ANTHROPIC_ROLLING_CACHE_WINDOW_SIZE)
        if bridge is not None and bridge is not tail:
            candidates.append(("bridge", bridge))
    for dropped in ("bridge", "tail"):
        if len(candidates) <= MAX_CACHE_BREAKPOINTS:
            break
        candidates = [c for c in candidates if c[0] != dropped]
    for _, block in candidates[:MAX_CACHE_BREAKPOINTS]:
        block["cache_control"] = _marker(settings)


def _tail_block(messages: list[dict[str, Any]], current: int | None, own_blocks: int) -> Block | None:
    """The current user turn's own last block; without one, the last block before it."""
    if current is not None and own_blocks:
        return messages[current]["content"][own_blocks - 1]
    end = current if current is not None else len(messages)
    for index in range(end - 1, -1, -1):
        if messages[index]["content"]:
            return messages[index]["content"][-1]
    return None


def _bridge_block(messages: list[dict[str, Any]], history: int, window: int) -> Block | None:
    """In a history longer than ``window`` messages, the last block of the message at
    a multiple of ``window``: it stays put for ``window`` messages, so the entry it
    writes is read by the following turns, and it is never the history's last message."""
    if history <= window:
        return None
    index = ((history - 1) // window) * window - 1
    return messages[index]["content"][-1] if index >= 0 else None


def _append_patch(messages: list[dict[str, Any]], current: int | None, patch: str) -> None:
    block = {"type": "text", "text": patch}
    if current is None:
        messages.append({"role": "user", "content": [block]})
    else:
        messages[current]["content"].append(block)


# -- response -----------------------------------------------------------------------------


def _usage(usage: Mapping[str, Any] | None) -> tuple[dict[str, Any], ChatUsage]:
    usage = usage or {}
    fresh = int(usage.get("input_tokens") or 0)
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    output = int(usage.get("output_tokens") or 0)
    prompt = fresh + read + written  # OpenAI's prompt_tokens include the cached ones
    openai_usage = {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": read, "cache_write_tokens": written},
        # Read back by proxy.usage.usage_of; clients ignore it.
        "cache_creation_tokens": written,
    }
    return openai_usage, ChatUsage(
        input_tokens=prompt, output_tokens=output, cache_read_tokens=read, cache_creation_tokens=written
    )


def finish_reason(stop_reason: str | None) -> str:
    return FINISH_REASONS.get(stop_reason or "end_turn", "stop")


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
    openai_usage, usage = _usage(response.get("usage"))
    completion = {
        "id": _completion_id(response.get("id")),
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason(response.get("stop_reason")),
                "logprobs": None,
            }
        ],
        "usage": openai_usage,
    }
    return completion, usage


def _completion_id(message_id: Any) -> str:
    return f"chatcmpl-{message_id}" if message_id else f"chatcmpl-{int(time.time() * 1000)}"


def error_from_event(error: Any, provider: str = "Anthropic") -> UpstreamError:
    """An Anthropic ``error`` object (``{"type": ..., "message": ...}``) as UpstreamError:
    client-side kinds keep their status, the rest (api_error, overloaded_error) are 502."""
    kind = error.get("type") if isinstance(error, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    status = ERROR_STATUSES.get(str(kind), 502)
    text = f"{provider} reported {kind or 'an error'}: {message or 'no details'}"
    return UpstreamError(text, status=status, code="upstream_rejected" if status < 500 else "upstream_error")


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
        self.id = _completion_id(None)
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
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    def _message_start(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        if message.get("id"):
            self.id = _completion_id(message["id"])
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
        openai_usage, self.usage = _usage(self._usage)
        usage_chunk = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": openai_usage,
        }
        return [self._chunk({}, finish_reason(self._stop_reason)), usage_chunk]
