"""OpenAI <-> Anthropic Messages conversion: requests (content, tools, cache breakpoints,
thinking), responses, and the stream translation."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest

from companion_memory.adapters.chat.anthropic.cache import MAX_CACHE_BREAKPOINTS
from companion_memory.adapters.chat.anthropic.request import to_anthropic
from companion_memory.adapters.chat.anthropic.response import from_anthropic
from companion_memory.adapters.chat.anthropic.stream import AnthropicStreamTranslator
from companion_memory.ports import ChatCall, ChatUsage, UpstreamError
from companion_memory.settings import Settings

MODEL = "claude-sonnet-4-5"
EPHEMERAL = {"type": "ephemeral"}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {"unit": {"type": "string"}, "city": {"type": "string"}},
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {"name": "clock", "description": "The time", "parameters": {"type": "object", "properties": {}}},
}


def convert(body: dict[str, Any], patch: str = "", **settings: Any) -> dict[str, Any]:
    return to_anthropic(ChatCall(MODEL, body, patch), Settings(**settings))


def markers(body: dict[str, Any]) -> list[str]:
    """Where the cache_control markers are, as readable paths."""
    found = []
    for i, tool in enumerate(body.get("tools") or []):
        if "cache_control" in tool:
            found.append(f"tools[{i}]")
    for i, block in enumerate(body.get("system") or []):
        if "cache_control" in block:
            found.append(f"system[{i}]")
    for m, message in enumerate(body["messages"]):
        for b, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append(f"messages[{m}][{b}]")
    return found


def without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_markers(v) for v in value]
    return value


def history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        messages.append({"role": "user", "content": f"question {n}"})
        messages.append({"role": "assistant", "content": f"answer {n}"})
    return messages


# -- messages -----------------------------------------------------------------------------


def test_system_and_developer_messages_become_system_blocks_and_turns_alternate() -> None:
    body = convert(
        {
            "messages": [
                {"role": "system", "content": "You are Aelios."},
                {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
                {"role": "user", "content": "hi"},
                {"role": "user", "content": [{"type": "text", "text": "are you there?"}]},
                {"role": "assistant", "content": "yes"},
                {"role": "user", "content": "good"},
            ]
        },
        ANTHROPIC_CACHE_ENABLED=False,
    )
    assert body["model"] == MODEL
    assert body["system"] == [{"type": "text", "text": "You are Aelios."}, {"type": "text", "text": "Be brief."}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "are you there?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "yes"}]},
        {"role": "user", "content": [{"type": "text", "text": "good"}]},
    ]
    assert body["max_tokens"] > 0
    assert "stream" not in body and "metadata" not in body and "thinking" not in body


def test_sampling_options_and_max_tokens() -> None:
    body = convert(
        {
            "messages": [{"role": "user", "content": "hi"}],
            "max_completion_tokens": 300,
            "max_tokens": 100,
            "temperature": 1.6,
            "top_p": 0.9,
            "stop": ["END", "  "],
        }
    )
    assert body["max_tokens"] == 300  # max_completion_tokens wins
    assert body["temperature"] == 1.0  # Claude's range ends at 1
    assert body["top_p"] == 0.9
    assert body["stop_sequences"] == ["END"]  # whitespace-only sequences are refused upstream
    assert convert({"messages": [{"role": "user", "content": "hi"}], "stop": "##"})["stop_sequences"] == ["##"]
    assert convert({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 64})["max_tokens"] == 64


def test_images_from_data_urls_and_https_urls() -> None:
    body = convert(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "what is this?"},
                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "high"}},
                        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                    ],
                }
            ]
        },
        ANTHROPIC_CACHE_ENABLED=False,
    )
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
    ]


@pytest.mark.parametrize("url", ["data:image/bmp;base64,AAAA", "data:image/png,rawtext", "ftp://example.com/x.png"])
def test_unusable_images_are_refused_with_400(url: str) -> None:
    with pytest.raises(UpstreamError) as caught:
        convert({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]})
    assert caught.value.status == 400


def test_tool_calls_and_tool_results() -> None:
    body = convert(
        {
            "messages": [
                {"role": "user", "content": "weather in Paris and the time?"},
                {
                    "role": "assistant",
                    "content": "Let me look.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                        },
                        {"id": "call_2", "type": "function", "function": {"name": "clock", "arguments": ""}},
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "18°C"},
                {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "12:00"}]},
                {"role": "user", "content": "thanks"},
            ],
            "tools": [WEATHER, CLOCK],
        },
        ANTHROPIC_CACHE_ENABLED=False,
    )
    assistant, results = body["messages"][1], body["messages"][2]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "call_2", "name": "clock", "input": {}},
        ],
    }
    # Both results and the next user message are one user turn, results first.
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "18°C"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": [{"type": "text", "text": "12:00"}]},
            {"type": "text", "text": "thanks"},
        ],
    }
    assert len(body["messages"]) == 3


def test_tool_results_open_the_user_turn_they_are_merged_into() -> None:
    body = convert(
        {
            "messages": [
                {"role": "user", "content": "go"},
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "clock", "arguments": "{}"}}],
                },
                {"role": "user", "content": "hurry"},
                {"role": "tool", "tool_call_id": "t1", "content": "noon"},
            ]
        },
        ANTHROPIC_CACHE_ENABLED=False,
    )
    assert [block["type"] for block in body["messages"][-1]["content"]] == ["tool_result", "text"]


def test_tools_are_sorted_and_byte_stable_whatever_the_client_order() -> None:
    messages = [{"role": "user", "content": "hi"}]
    one = convert({"messages": messages, "tools": [WEATHER, CLOCK]})
    reordered = copy.deepcopy(WEATHER)
    reordered["function"] = {k: reordered["function"][k] for k in ("parameters", "description", "name")}
    two = convert({"messages": messages, "tools": [CLOCK, reordered]})
    assert json.dumps(one["tools"]) == json.dumps(two["tools"])
    assert [tool["name"] for tool in one["tools"]] == ["clock", "weather"]
    weather = one["tools"][1]
    assert list(weather) == ["description", "input_schema", "name", "cache_control"]  # the marker comes last
    assert list(weather["input_schema"]["properties"]) == ["city", "unit"]
    assert weather["input_schema"]["required"] == ["city"]  # lists keep their order


def test_tool_choice_mapping() -> None:
    def choice(value: Any, **extra: Any) -> Any:
        body = {"messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER], "tool_choice": value, **extra}
        return convert(body).get("tool_choice")

    assert choice("auto") == {"type": "auto"}
    assert choice("none") == {"type": "none"}
    assert choice("required") == {"type": "any"}
    assert choice({"type": "function", "function": {"name": "weather"}}) == {"type": "tool", "name": "weather"}
    assert choice("required", parallel_tool_calls=False) == {"type": "any", "disable_parallel_tool_use": True}
    assert "tool_choice" not in convert({"messages": [{"role": "user", "content": "hi"}], "tools": [WEATHER]})
    # Without tools there is nothing to choose.
    assert "tool_choice" not in convert({"messages": [{"role": "user", "content": "hi"}], "tool_choice": "required"})


def test_metadata_user_id() -> None:
    body = convert({"messages": [{"role": "user", "content": "hi"}]}, ANTHROPIC_CACHE_USER_ID="chatbox-7")
    assert body["metadata"] == {"user_id": "chatbox-7"}


# -- prompt cache -------------------------------------------------------------------------


def test_breakpoints_on_tools_system_and_tail_with_the_patch_after_them() -> None:
    body = convert(
        {
            "messages": [{"role": "system", "content": "persona"}, *history(2), {"role": "user", "content": "now?"}],
            "tools": [WEATHER, CLOCK],
        },
        patch="<memories>likes tea</memories>",
    )
    assert markers(body) == ["tools[1]", "system[0]", "messages[4][0]"]
    current = body["messages"][-1]["content"]
    assert current[0] == {"type": "text", "text": "now?", "cache_control": EPHEMERAL}
    assert current[-1] == {"type": "text", "text": "<memories>likes tea</memories>"}  # no cache_control


def test_long_history_gets_a_bridge_that_stays_put() -> None:
    def bridge_of(turns: int) -> list[str]:
        body = convert(
            {"messages": [{"role": "system", "content": "p"}, *history(turns), {"role": "user", "content": "q"}]},
            patch="m",
        )
        found = markers(body)
        assert len(found) <= MAX_CACHE_BREAKPOINTS
        return found

    assert bridge_of(10) == ["system[0]", "messages[20][0]"]  # 20 history messages: no bridge yet
    assert bridge_of(11) == ["system[0]", "messages[19][0]", "messages[22][0]"]
    assert bridge_of(20) == ["system[0]", "messages[19][0]", "messages[40][0]"]  # same bridge
    assert bridge_of(21) == ["system[0]", "messages[39][0]", "messages[42][0]"]  # moves by a window
    # With tools too, all four breakpoints are used and none more.
    body = convert(
        {
            "messages": [{"role": "system", "content": "p"}, *history(11), {"role": "user", "content": "q"}],
            "tools": [CLOCK],
        }
    )
    assert markers(body) == ["tools[0]", "system[0]", "messages[19][0]", "messages[22][0]"]
    # The window is configurable.
    body = convert({"messages": [*history(3), {"role": "user", "content": "q"}]}, ANTHROPIC_ROLLING_CACHE_WINDOW_SIZE=4)
    assert markers(body) == ["messages[3][0]", "messages[6][0]"]


def test_cache_settings() -> None:
    messages = [{"role": "system", "content": "p"}, *history(11), {"role": "user", "content": "q"}]
    assert markers(convert({"messages": messages}, ANTHROPIC_CACHE_ENABLED=False)) == []
    assert markers(convert({"messages": messages, "tools": [CLOCK]}, ANTHROPIC_ROLLING_CACHE_ENABLED=False)) == [
        "tools[0]",
        "system[0]",
    ]
    body = convert({"messages": messages}, ANTHROPIC_CACHE_TTL="1h")
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert all(
        block["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
        for message in body["messages"]
        for block in message["content"]
        if "cache_control" in block
    )


def test_tail_falls_back_to_history_when_the_current_turn_is_empty() -> None:
    body = convert({"messages": [*history(1), {"role": "user", "content": ""}]}, patch="<memories/>")
    assert markers(body) == ["messages[1][0]"]
    assert len(body["messages"]) == 3
    assert body["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": "<memories/>"}]}


def test_a_prefill_stays_last_and_the_patch_goes_to_the_user_turn_before_it() -> None:
    body = convert(
        {
            "messages": [
                {"role": "user", "content": "name a colour"},
                {"role": "assistant", "content": "The colour is "},
            ]
        },
        patch="<memories/>",
    )
    assert body["messages"][-1] == {"role": "assistant", "content": [{"type": "text", "text": "The colour is"}]}
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "name a colour", "cache_control": EPHEMERAL},
        {"type": "text", "text": "<memories/>"},
    ]


def test_client_cache_control_is_not_passed_on() -> None:
    body = convert(
        {
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "p", "cache_control": {"type": "ephemeral"}}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                        {"type": "text", "text": "b"},
                    ],
                },
            ]
        },
        ANTHROPIC_CACHE_ENABLED=False,
    )
    assert markers(body) == []


def _before_patch(body: dict[str, Any]) -> str:
    body = copy.deepcopy(body)
    last = body["messages"][-1]["content"]
    assert "cache_control" not in last[-1]
    last.pop()
    return json.dumps(body, sort_keys=False, ensure_ascii=False)


def test_prefix_is_byte_identical_whatever_the_memories_across_three_turns() -> None:
    system = {"role": "system", "content": "You are Aelios, a companion."}
    conversation: list[dict[str, Any]] = []
    tools = [WEATHER, CLOCK]
    bodies = []
    for turn, patch in enumerate(["<memories>A</memories>", "<memories>B, C</memories>", "<memories>D</memories>"]):
        conversation.append({"role": "user", "content": f"message {turn}"})
        body = convert({"messages": [system, *conversation], "tools": tools}, patch=patch)
        # Whatever the memories (or none), everything before the patch is the same bytes.
        for other in ("", "<memories>something else entirely</memories>"):
            again = convert({"messages": [system, *conversation], "tools": tools}, patch=other)
            if other:
                assert _before_patch(again) == _before_patch(body)
            else:
                assert json.dumps(again) == _before_patch(body)
        assert body["messages"][-1]["content"][-1]["text"] == patch
        assert len(markers(body)) <= MAX_CACHE_BREAKPOINTS
        bodies.append(body)
        conversation.append({"role": "assistant", "content": f"reply {turn}"})
    # Turn to turn, tools and system are the same bytes, and each turn's messages (less
    # the patch and the moving tail marker) open the next turn's.
    for earlier, later in itertools.pairwise(bodies):
        assert json.dumps(earlier["tools"]) == json.dumps(later["tools"])
        assert json.dumps(earlier["system"]) == json.dumps(later["system"])
        sent = without_markers(earlier["messages"])
        sent[-1]["content"].pop()  # the patch is never part of the history
        assert without_markers(later["messages"])[: len(sent)] == sent


# -- thinking -----------------------------------------------------------------------------


def test_thinking_raises_max_tokens_and_drops_what_claude_refuses_with_it() -> None:
    body = convert(
        {
            "messages": [{"role": "user", "content": "think"}],
            "max_tokens": 500,
            "temperature": 0.3,
            "top_k": 5,
            "top_p": 0.5,
            "tools": [WEATHER],
            "tool_choice": "required",
        },
        ANTHROPIC_THINKING_ENABLED=True,
        ANTHROPIC_THINKING_BUDGET=2048,
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 2548
    assert body["tool_choice"] == {"type": "auto"}
    assert "temperature" not in body and "top_k" not in body and "top_p" not in body
    big = convert({"messages": [{"role": "user", "content": "x"}], "max_tokens": 9000}, ANTHROPIC_THINKING_ENABLED=True)
    assert big["max_tokens"] == 9000 and big["thinking"]["budget_tokens"] == 1024


def test_thinking_is_left_off_inside_a_tool_loop() -> None:
    messages = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "sunny"},
    ]
    body = convert({"messages": messages, "tools": [WEATHER]}, ANTHROPIC_THINKING_ENABLED=True)
    assert "thinking" not in body


# -- responses ----------------------------------------------------------------------------


def test_from_anthropic_text_tools_and_usage() -> None:
    response = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [
            {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig"},
            {"type": "text", "text": "Checking "},
            {"type": "text", "text": "now."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "巴黎"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 20,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 50,
        },
    }
    completion, usage = from_anthropic(response, "companion", created=123)
    assert completion["object"] == "chat.completion"
    assert completion["model"] == "companion" and completion["created"] == 123
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Checking now."
    assert choice["message"]["reasoning_content"] == "The user wants weather."
    assert choice["message"]["tool_calls"] == [
        {"id": "toolu_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "巴黎"}'}}
    ]
    assert completion["usage"]["prompt_tokens"] == 1060
    assert completion["usage"]["completion_tokens"] == 20
    assert completion["usage"]["total_tokens"] == 1080
    assert completion["usage"]["prompt_tokens_details"]["cached_tokens"] == 1000
    assert usage == ChatUsage(input_tokens=1060, output_tokens=20, cache_read_tokens=1000, cache_creation_tokens=50)


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
    ],
)
def test_finish_reasons(stop_reason: str, finish: str) -> None:
    response = {"id": "m", "content": [{"type": "text", "text": "x"}], "stop_reason": stop_reason, "usage": {}}
    assert from_anthropic(response, MODEL)[0]["choices"][0]["finish_reason"] == finish


def test_from_anthropic_refuses_what_is_not_a_message() -> None:
    with pytest.raises(UpstreamError) as caught:
        from_anthropic({"type": "weird"}, MODEL)
    assert caught.value.status == 502


# -- streams ------------------------------------------------------------------------------

STREAM_EVENTS: list[tuple[str, dict[str, Any]]] = [
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_stream",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": MODEL,
                "stop_reason": None,
                "usage": {
                    "input_tokens": 12,
                    "cache_read_input_tokens": 2000,
                    "cache_creation_input_tokens": 30,
                    "output_tokens": 1,
                },
            },
        },
    ),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Weather tool."}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "abc"}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ("ping", {"type": "ping"}),
    ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Let me "}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "check."}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "weather", "input": {}},
        },
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"city": '}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 2}),
    (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {"type": "tool_use", "id": "toolu_10", "name": "clock", "input": {}},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 3}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 42},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
]


def test_stream_translation_event_by_event() -> None:
    translator = AnthropicStreamTranslator("companion", created=7)
    out: list[list[dict[str, Any]]] = [translator.feed(event, data) for event, data in STREAM_EVENTS]
    chunks = [chunk for produced in out for chunk in produced]

    # Each delta is translated as it arrives: nothing waits for the end.
    assert out[2][0]["choices"][0]["delta"] == {"reasoning_content": "Weather tool."}
    assert out[7][0]["choices"][0]["delta"] == {"content": "Let me "}
    assert out[5] == [] and out[3] == []  # ping, signature

    assert all(c["object"] == "chat.completion.chunk" and c["id"] == "chatcmpl-msg_stream" for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Let me check."

    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk["choices"]:
            for call in choice["delta"].get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
                entry["id"] += call.get("id", "")
                entry["name"] += call.get("function", {}).get("name", "")
                entry["arguments"] += call.get("function", {}).get("arguments", "")
    assert calls == {
        0: {"id": "toolu_9", "name": "weather", "arguments": '{"city": "Paris"}'},
        1: {"id": "toolu_10", "name": "clock", "arguments": "{}"},
    }
    first_call = next(c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("tool_calls"))
    assert first_call["choices"][0]["delta"]["tool_calls"][0]["type"] == "function"

    finish, usage_chunk = out[-1]
    assert finish["choices"][0]["finish_reason"] == "tool_calls" and finish["choices"][0]["delta"] == {}
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-2])
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["prompt_tokens"] == 2042
    assert usage_chunk["usage"]["completion_tokens"] == 42
    assert usage_chunk["usage"]["prompt_tokens_details"]["cached_tokens"] == 2000
    assert translator.finished
    assert translator.usage == ChatUsage(
        input_tokens=2042, output_tokens=42, cache_read_tokens=2000, cache_creation_tokens=30
    )


def test_stream_error_event_raises() -> None:
    translator = AnthropicStreamTranslator(MODEL)
    translator.feed("message_start", STREAM_EVENTS[0][1])
    with pytest.raises(UpstreamError) as caught:
        translator.feed("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert caught.value.status == 502
    assert "Overloaded" in caught.value.message and "Anthropic" in caught.value.message
    with pytest.raises(UpstreamError) as caught:
        translator.feed("error", {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    assert caught.value.status == 429


def test_stream_max_tokens_finish() -> None:
    translator = AnthropicStreamTranslator(MODEL)
    translator.feed("message_start", STREAM_EVENTS[0][1])
    translator.feed(
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 5}},
    )
    finish, usage = translator.feed("message_stop", {"type": "message_stop"})
    assert finish["choices"][0]["finish_reason"] == "length"
    assert usage["usage"]["completion_tokens"] == 5
