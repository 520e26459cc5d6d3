"""An OpenAI chat completions body as an Anthropic Messages body, as pure functions.

Anthropic caches a prompt prefix only when it is byte-identical from turn to turn, so
the conversion is stable: tools are sorted by name and every key inside them is sorted,
so the same tools give the same bytes whatever order the client lists them in; system
and developer messages become ``system`` text blocks, converted the same way every turn.
Client-sent ``cache_control`` is dropped, as the gateway owns the breakpoints: ``cache``
places them and appends the memory patch after them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ....ports import ChatCall, UpstreamError
from ....settings import Settings
from .cache import Block, CachePolicy, append_patch, place_breakpoints

DEFAULT_MAX_TOKENS = 8192
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def _bad_request(message: str) -> UpstreamError:
    return UpstreamError(message, status=400, code="invalid_request")


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
        place_breakpoints(result, current, own_blocks, cache_policy(settings))
    if call.memory_patch:
        append_patch(messages, current, call.memory_patch)
    return result


def cache_policy(settings: Settings) -> CachePolicy:
    return CachePolicy(
        ttl=settings.ANTHROPIC_CACHE_TTL,
        rolling=settings.ANTHROPIC_ROLLING_CACHE_ENABLED,
        window=settings.ANTHROPIC_ROLLING_CACHE_WINDOW_SIZE,
    )


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
