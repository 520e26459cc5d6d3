"""The fake upstreams speak the real wire formats: the official openai SDK parses the OpenAI side,
a plain SSE parser walks the Anthropic event sequence, and every fault does what it says."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import openai
import pytest

from tests.upstreams import RecordingUpstream

USER = "Please remember that my cat is called Miso and she is nine years old."
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": USER}]
ECHO = "echo: " + USER[:40]


def sync_client(upstream: RecordingUpstream, prefix: str = "/v1", **kw: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=upstream.url + prefix, api_key="sk-test", max_retries=0, **kw)


def anthropic_post(upstream: RecordingUpstream, path: str = "/anthropic/v1/messages", **body: Any) -> httpx.Response:
    payload = {"model": "claude-test", "max_tokens": 256, "messages": [{"role": "user", "content": USER}]} | body
    return httpx.post(upstream.url + path, json=payload, headers={"x-api-key": "k", "anthropic-version": "2023-06-01"})


def sse_events(text: str) -> list[tuple[str | None, dict[str, Any]]]:
    """(event name, parsed data) for each SSE event of an Anthropic stream."""
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields.get("event"), json.loads(fields["data"])))
    return events


# -- OpenAI wire format, through the official SDK ---------------------------------------------------


def test_openai_sdk_sync_completion_and_recording(upstream: RecordingUpstream) -> None:
    reply = sync_client(upstream).chat.completions.create(model="gpt-test", messages=MESSAGES)

    assert isinstance(reply, openai.types.chat.ChatCompletion)
    assert reply.object == "chat.completion" and reply.model == "gpt-test"
    assert reply.choices[0].message.content == ECHO and reply.choices[0].finish_reason == "stop"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (25, 10, 35)
    [seen] = upstream.requests
    assert (seen.method, seen.path, seen.provider, seen.completed) == ("POST", "/v1/chat/completions", "openai", True)
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.json["messages"] == MESSAGES and seen.at <= time.monotonic()


async def test_openai_sdk_async_stream_with_usage_chunk(upstream: RecordingUpstream) -> None:
    upstream.reply_text = "Miso is nine years old."
    upstream.usage = {"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 900}
    client = openai.AsyncOpenAI(base_url=upstream.url + "/v1", api_key="sk-test", max_retries=0)

    stream = await client.chat.completions.create(
        model="gpt-test", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]

    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert "".join(text) == upstream.reply_text and len(text) == 3  # 8-character pieces
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and all(c.usage is None for c in chunks[:-1])
    usage = chunks[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1000, 7, 1007)
    assert usage.prompt_tokens_details.cached_tokens == 900
    await client.close()


async def test_openai_sdk_async_completion_on_the_compat_path(upstream: RecordingUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=upstream.url + "/compat", api_key="sk-test", max_retries=0)
    parts = [{"role": "user", "content": [{"type": "text", "text": USER}]}]  # content parts are echoed too
    reply = await client.chat.completions.create(model="workers-ai/@cf/meta/llama", messages=parts)
    assert reply.choices[0].message.content == ECHO
    assert upstream.requests[0].path == "/compat/chat/completions"
    await client.close()


def test_openai_sdk_sync_stream_without_usage_ends_with_done(upstream: RecordingUpstream) -> None:
    chunks = list(sync_client(upstream).chat.completions.create(model="m", messages=MESSAGES, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == ECHO
    assert chunks[-1].choices[0].finish_reason == "stop" and all(c.usage is None for c in chunks)
    raw = httpx.post(upstream.url + "/v1/chat/completions", json={"messages": MESSAGES, "stream": True}).text
    assert raw.endswith("data: [DONE]\n\n") and '"usage"' not in raw


def test_openai_tool_calls_plain_and_streamed(upstream: RecordingUpstream) -> None:
    upstream.tool_calls = [{"name": "recall", "arguments": {"query": "cat's name"}}]
    client = sync_client(upstream)

    reply = client.chat.completions.create(model="m", messages=MESSAGES)
    [call] = reply.choices[0].message.tool_calls
    assert reply.choices[0].finish_reason == "tool_calls" and reply.choices[0].message.content is None
    assert call.type == "function" and call.function.name == "recall"
    assert json.loads(call.function.arguments) == {"query": "cat's name"}

    chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    deltas = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].id and deltas[0].function.name == "recall" and len(deltas) > 2
    assert json.loads("".join(d.function.arguments or "" for d in deltas)) == {"query": "cat's name"}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


# -- OpenAI Responses (Codex's wire format), through the official SDK ---------------------------------


def test_openai_sdk_responses_plain_and_streamed(upstream: RecordingUpstream) -> None:
    upstream.reply_text = "Miso is nine years old."
    upstream.chunk_size = 5
    client = sync_client(upstream)

    reply = client.responses.create(model="gpt-test", input=USER)
    assert reply.status == "completed" and reply.output_text == "Miso is nine years old."
    assert reply.usage and (reply.usage.input_tokens, reply.usage.output_tokens) == (25, 10)
    with client.responses.stream(model="gpt-test", input=[{"role": "user", "content": USER}]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:2] == ["response.created", "response.in_progress"] and kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") == 5 and final.output_text == "Miso is nine years old."
    [seen] = [r for r in upstream.requests if r.json.get("stream")]
    assert (seen.path, seen.provider, seen.completed) == ("/v1/responses", "responses", True)


def test_responses_tool_calls_come_first_then_the_text(upstream: RecordingUpstream) -> None:
    upstream.tool_calls = [{"name": "memory_recall", "namespace": "mcp__memory", "arguments": {"query": "cat"}}]
    client = sync_client(upstream)

    with client.responses.stream(model="m", input=USER) as stream:
        first = stream.get_final_response()
    [call] = first.output
    assert call.type == "function_call" and call.name == "memory_recall"
    assert json.loads(call.arguments) == {"query": "cat"} and call.to_dict()["namespace"] == "mcp__memory"
    answered = [
        {"role": "user", "content": USER},
        call.to_dict(),
        {"type": "function_call_output", "call_id": call.call_id, "output": "Miso"},
    ]
    second = client.responses.create(model="m", input=answered)  # type: ignore[arg-type]
    assert [item.type for item in second.output] == ["message"] and second.output_text == ECHO


# -- Anthropic wire format -------------------------------------------------------------------------


def test_anthropic_message(upstream: RecordingUpstream) -> None:
    upstream.usage = {
        "input_tokens": 3,
        "output_tokens": 5,
        "cache_read_input_tokens": 40,
        "cache_creation_input_tokens": 9,
    }
    reply = anthropic_post(upstream)

    assert reply.status_code == 200 and reply.headers["request-id"]
    body = reply.json()
    assert body["type"] == "message" and body["role"] == "assistant" and body["model"] == "claude-test"
    assert body["content"] == [{"type": "text", "text": ECHO}]
    assert body["stop_reason"] == "end_turn" and body["stop_sequence"] is None
    assert body["usage"] == {
        "input_tokens": 3,
        "cache_creation_input_tokens": 9,
        "cache_read_input_tokens": 40,
        "output_tokens": 5,
    }
    assert upstream.requests[0].headers["x-api-key"] == "k" and upstream.requests[0].provider == "anthropic"


def test_anthropic_stream_event_sequence(upstream: RecordingUpstream) -> None:
    upstream.reply_text = "Miso, nine."
    upstream.usage = {"cache_read_input_tokens": 40, "cache_creation_input_tokens": 9}
    reply = anthropic_post(upstream, "/custom-provider/messages", stream=True)

    assert reply.headers["content-type"].startswith("text/event-stream")
    events = sse_events(reply.text)
    assert all(name == data["type"] for name, data in events)
    assert [name for name, _ in events] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None and start["usage"]["cache_read_input_tokens"] == 40
    assert events[1][1] == {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    assert "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta") == "Miso, nine."
    delta = events[-2][1]
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert delta["usage"] == {
        "input_tokens": 25,
        "cache_creation_input_tokens": 9,
        "cache_read_input_tokens": 40,
        "output_tokens": 10,
    }


def test_anthropic_stream_tool_use(upstream: RecordingUpstream) -> None:
    upstream.reply_text = "Let me check."
    upstream.tool_calls = [{"name": "recall", "arguments": {"query": "cat"}, "id": "toolu_1"}]
    events = sse_events(anthropic_post(upstream, stream=True).text)

    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert starts == [
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "toolu_1", "name": "recall", "input": {}},
    ]
    partial = [d["delta"]["partial_json"] for n, d in events if n == "content_block_delta" and d["index"] == 1]
    assert all(
        d["delta"]["type"] == "input_json_delta" for n, d in events if n == "content_block_delta" and d["index"] == 1
    )
    assert json.loads("".join(partial)) == {"query": "cat"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    plain = anthropic_post(upstream).json()
    assert plain["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "recall", "input": {"query": "cat"}}


# -- pacing ----------------------------------------------------------------------------------------


async def test_stream_chunks_arrive_one_by_one(upstream: RecordingUpstream) -> None:
    upstream.chunk_size = 4
    upstream.hold_stream(after=1)
    sent_at_arrival = []
    async with httpx.AsyncClient() as client:
        payload = {"messages": MESSAGES, "stream": True}
        async with client.stream("POST", upstream.url + "/v1/chat/completions", json=payload) as reply:
            async for line in reply.aiter_lines():
                if line.startswith("data: {"):
                    sent_at_arrival.append(upstream.requests[-1].sent)
                    upstream.release()
    assert len(sent_at_arrival) == 2 + len(ECHO) // 4 + 1
    # Each event reached the client while the next one was still held back: one by one, not batched.
    assert sent_at_arrival == list(range(1, len(sent_at_arrival) + 1))


# -- faults ----------------------------------------------------------------------------------------


def test_fail_with_uses_each_providers_error_shape(upstream: RecordingUpstream) -> None:
    upstream.fail_with(429)
    with pytest.raises(openai.RateLimitError) as caught:
        sync_client(upstream).chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.status_code == 429
    assert caught.value.body == {
        "message": "fake upstream error 429",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }

    upstream.fail_with(529)
    reply = anthropic_post(upstream, stream=True)
    assert reply.status_code == 529
    assert reply.json()["type"] == "error"
    assert reply.json()["error"] == {"type": "overloaded_error", "message": "fake upstream error 529"}

    upstream.fail_with(503, "upstream connect error", headers={"retry-after": "1"})
    reply = anthropic_post(upstream)
    assert (reply.status_code, reply.text, reply.headers["retry-after"]) == (503, "upstream connect error", "1")
    assert len(upstream.requests) == 3


def test_fail_with_times_then_recovers(upstream: RecordingUpstream) -> None:
    upstream.fail_with(
        500, {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}, times=1
    )
    with pytest.raises(openai.InternalServerError, match="boom"):
        sync_client(upstream).chat.completions.create(model="m", messages=MESSAGES)
    assert (
        sync_client(upstream).chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content == ECHO
    )


def test_malformed_bodies_and_streams(upstream: RecordingUpstream) -> None:
    upstream.malformed()
    reply = httpx.post(upstream.url + "/v1/chat/completions", json={"messages": MESSAGES})
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    with pytest.raises(json.JSONDecodeError):
        reply.json()
    with pytest.raises(json.JSONDecodeError):
        list(sync_client(upstream).chat.completions.create(model="m", messages=MESSAGES, stream=True))
    text = anthropic_post(upstream, stream=True).text
    assert text.startswith("event: message_start") and "message_stop" not in text
    with pytest.raises(json.JSONDecodeError):
        sse_events(text)


def test_delay_triggers_client_timeouts(upstream: RecordingUpstream) -> None:
    # A delay far longer than the bound: a busy machine never blurs timing out with waiting it out.
    upstream.delay(60, times=1)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        sync_client(upstream, timeout=0.3).chat.completions.create(model="m", messages=MESSAGES)
    assert time.monotonic() - started < 30
    assert anthropic_post(upstream).status_code == 200  # times=1: the next request is served at once


def test_disconnect_mid_stream(upstream: RecordingUpstream) -> None:
    upstream.disconnect_mid_stream(after=2)
    received = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in sync_client(upstream).chat.completions.create(model="m", messages=MESSAGES, stream=True):
            received.append(chunk.choices[0].delta.content)
    assert received == ["", ECHO[:8], ECHO[8:16]]

    lines = []
    payload = {"messages": MESSAGES, "stream": True}
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", upstream.url + "/x/messages", json=payload) as r,
    ):
        lines.extend(r.iter_lines())
    assert sum(line == "event: content_block_delta" for line in lines) == 2 and "event: message_stop" not in lines

    with pytest.raises(httpx.RemoteProtocolError):  # a plain reply is cut in half
        httpx.post(upstream.url + "/v1/chat/completions", json={"messages": MESSAGES})
    assert [r.completed for r in upstream.requests] == [False, False, False]


async def test_client_hang_up_is_visible(upstream: RecordingUpstream) -> None:
    upstream.chunk_delay = 0.05
    payload = {"messages": MESSAGES, "stream": True}
    async with (
        httpx.AsyncClient() as client,
        client.stream("POST", upstream.url + "/v1/chat/completions", json=payload) as r,
    ):
        async for _ in r.aiter_lines():
            break
    for _ in range(40):
        if upstream.requests[0].completed is False:
            break
        await asyncio.sleep(0.05)
    assert upstream.requests[0].completed is False


def test_reset_and_unknown_paths(upstream: RecordingUpstream) -> None:
    assert anthropic_post(upstream).status_code == 200
    upstream.fail_with(500)
    upstream.delay(60)
    upstream.reset()
    assert upstream.requests == []
    started = time.monotonic()
    assert anthropic_post(upstream).status_code == 200 and time.monotonic() - started < 30
    missing = httpx.post(upstream.url + "/v1/embeddings", json={})
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "invalid_request_error"
    assert [r.path for r in upstream.requests] == ["/anthropic/v1/messages", "/v1/embeddings"]
