"""The Anthropic ChatModel against the Messages API wire format (mocked with respx), its
factory's URLs and headers, how upstream failures reach the client, and the SSE framing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx

from companion_memory.adapters.chat.anthropic.model import AnthropicChatModel
from companion_memory.adapters.chat.routing import route
from companion_memory.adapters.chat.sse import DONE, SSEParser, format_sse, openai_events
from companion_memory.ports import ChatCall, ChatUsage, UpstreamError
from companion_memory.settings import Settings
from tests.adapters.chat.test_anthropic_format import STREAM_EVENTS

GATEWAY = "https://gateway.ai.cloudflare.com/v1/acct/gw"
MESSAGES = f"{GATEWAY}/anthropic/v1/messages"
SETTINGS = Settings(AI_GATEWAY_BASE_URL=GATEWAY + "/", CF_AIG_TOKEN="aig-token")
CALL = ChatCall(
    "claude-sonnet-4-5",
    {"messages": [{"role": "system", "content": "persona"}, {"role": "user", "content": "你好"}], "max_tokens": 100},
    "<memories>likes tea</memories>",
)
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "你好！"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 5, "output_tokens": 3, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0},
}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as client:
        yield client


def model(
    http: httpx.AsyncClient, settings: Settings = SETTINGS, name: str = "anthropic/claude-sonnet-4-5"
) -> AnthropicChatModel:
    chat_model = route(name, settings, http).chat_model
    assert isinstance(chat_model, AnthropicChatModel)
    return chat_model


def sse_body(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\r\ndata: {json.dumps(data, ensure_ascii=False)}\r\n\r\n".encode() for name, data in events
    )


class Pieces(httpx.AsyncByteStream):
    """A response body delivered in the given pieces, counting how many were read."""

    def __init__(self, body: bytes, size: int) -> None:
        self.pieces = [body[i : i + size] for i in range(0, len(body), size)]
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            self.read += 1
            yield piece


def streamed(body: bytes, size: int = 7) -> tuple[httpx.Response, Pieces]:
    pieces = Pieces(body, size)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=pieces), pieces


# -- factory ------------------------------------------------------------------------------


def test_factory_urls_headers_and_model_names(http: httpx.AsyncClient) -> None:
    anthropic = route("anthropic/claude-sonnet-4-5", SETTINGS, http)
    assert anthropic.model == "claude-sonnet-4-5" and anthropic.label == "anthropic/claude-sonnet-4-5"
    chat_model = anthropic.chat_model
    assert isinstance(chat_model, AnthropicChatModel)
    assert chat_model.url == MESSAGES
    assert chat_model.headers["anthropic-version"] == "2023-06-01"
    assert chat_model.headers["cf-aig-authorization"] == "Bearer aig-token"
    assert "x-api-key" not in chat_model.headers  # the provider key is kept by the gateway

    custom = route("custom-provider/claude-opus-4", SETTINGS, http)
    assert custom.chat_model.url == f"{GATEWAY}/custom-provider/messages"  # type: ignore[attr-defined]
    assert custom.model == "claude-opus-4"
    openrouter = route(
        "custom-openrouter/anthropic/claude-sonnet-4.5",
        Settings(AI_GATEWAY_BASE_URL=GATEWAY, CUSTOM_ANTHROPIC_MESSAGES_PATH="/v1/messages"),
        http,
    )
    assert openrouter.chat_model.url == f"{GATEWAY}/custom-openrouter/v1/messages"  # type: ignore[attr-defined]
    assert openrouter.model == "anthropic/claude-sonnet-4.5"
    assert "cf-aig-authorization" not in openrouter.chat_model.headers  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "label, url, model",
    [
        ("custom-openrouter/claude-x", f"{GATEWAY}/custom-openrouter/messages", "claude-x"),
        ("custom-my-proxy/claude-3-haiku", f"{GATEWAY}/custom-my-proxy/messages", "claude-3-haiku"),
        ("custom-or2/anthropic/claude-opus-4", f"{GATEWAY}/custom-or2/messages", "anthropic/claude-opus-4"),
        ("custom-openrouter/openai/gpt-4o", f"{GATEWAY}/compat/chat/completions", "custom-openrouter/openai/gpt-4o"),
        ("anthropic/claude-haiku-4-5", f"{GATEWAY}/anthropic/v1/messages", "claude-haiku-4-5"),
        ("anthropic/not-claude", f"{GATEWAY}/compat/chat/completions", "anthropic/not-claude"),
        ("deepseek/deepseek-chat", f"{GATEWAY}/compat/chat/completions", "deepseek/deepseek-chat"),
    ],
)
def test_every_custom_slug_reaches_its_native_messages_path(
    http: httpx.AsyncClient, label: str, url: str, model: str
) -> None:
    """custom-<slug>/claude-* is Claude in its own format through that provider, whatever the slug."""
    chosen = route(label, SETTINGS, http)
    assert chosen.chat_model.url == url  # type: ignore[attr-defined]
    assert chosen.model == model and chosen.label == label


def test_factory_without_a_gateway_is_not_configured(http: httpx.AsyncClient) -> None:
    for label in ("anthropic/claude-sonnet-4-5", "custom-openrouter/claude-x"):
        with pytest.raises(UpstreamError) as caught:
            route(label, Settings(), http)
        assert caught.value.status == 503 and caught.value.code == "not_configured"
        assert "AI_GATEWAY_BASE_URL" in caught.value.message


# -- complete -----------------------------------------------------------------------------


@respx.mock
async def test_complete(http: httpx.AsyncClient) -> None:
    route = respx.post(MESSAGES).mock(return_value=httpx.Response(200, json=MESSAGE))
    completion, usage = await model(http).complete(CALL)
    request = route.calls.last.request
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["cf-aig-authorization"] == "Bearer aig-token"
    assert request.headers["content-type"] == "application/json"
    sent = json.loads(request.content)
    assert "你好" in request.content.decode()  # UTF-8, not \u escapes
    assert sent["model"] == "claude-sonnet-4-5" and sent["max_tokens"] == 100 and "stream" not in sent
    assert sent["system"] == [{"type": "text", "text": "persona", "cache_control": {"type": "ephemeral"}}]
    assert sent["messages"][-1]["content"][-1] == {"type": "text", "text": "<memories>likes tea</memories>"}
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "你好！"}
    assert completion["choices"][0]["finish_reason"] == "stop"
    assert usage == ChatUsage(input_tokens=105, output_tokens=3, cache_read_tokens=100, cache_creation_tokens=0)


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (400, "invalid_request_error", 400),
        (401, "authentication_error", 401),
        (403, "permission_error", 403),
        (404, "not_found_error", 404),
        (413, "request_too_large", 413),
        (429, "rate_limit_error", 429),
        (500, "api_error", 502),
        (529, "overloaded_error", 502),
    ],
)
@respx.mock
async def test_upstream_statuses(http: httpx.AsyncClient, status: int, kind: str, expected: int) -> None:
    respx.post(MESSAGES).mock(return_value=httpx.Response(status, json=anthropic_error(kind, f"the {kind} detail")))
    with pytest.raises(UpstreamError) as caught:
        await model(http).complete(CALL)
    assert caught.value.status == expected
    assert "Anthropic" in caught.value.message and str(status) in caught.value.message
    assert f"the {kind} detail" in caught.value.message


@respx.mock
async def test_timeouts_connection_errors_and_odd_bodies(http: httpx.AsyncClient) -> None:
    route = respx.post(MESSAGES)
    route.mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(UpstreamError) as caught:
        await model(http).complete(CALL)
    assert caught.value.status == 504
    route.mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(UpstreamError) as caught:
        await model(http).complete(CALL)
    assert caught.value.status == 502
    route.mock(return_value=httpx.Response(200, text="<html>oops</html>"))
    with pytest.raises(UpstreamError) as caught:
        await model(http).complete(CALL)
    assert caught.value.status == 502
    route.mock(return_value=httpx.Response(200, json={"something": "else"}))
    with pytest.raises(UpstreamError) as caught:
        await model(http).complete(CALL)
    assert caught.value.status == 502


@respx.mock
async def test_custom_provider_names_itself_in_errors(http: httpx.AsyncClient) -> None:
    respx.post(f"{GATEWAY}/custom-provider/messages").mock(return_value=httpx.Response(502, text="bad gateway"))
    with pytest.raises(UpstreamError) as caught:
        await model(http, name="custom-provider/claude-x").complete(CALL)
    assert caught.value.status == 502 and "custom-provider" in caught.value.message


# -- stream -------------------------------------------------------------------------------


@respx.mock
async def test_stream_translates_chunk_by_chunk(http: httpx.AsyncClient) -> None:
    response, pieces = streamed(sse_body(STREAM_EVENTS), size=7)
    route = respx.post(MESSAGES).mock(return_value=response)
    chunks = model(http).stream(CALL)
    first = await anext(chunks)
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert pieces.read < len(pieces.pieces)  # answered before the body was all read
    rest = [chunk async for chunk in chunks]
    sent = json.loads(route.calls.last.request.content)
    assert sent["stream"] is True
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in rest if c["choices"])
    assert text == "Let me check."
    assert rest[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert rest[-1]["choices"] == [] and rest[-1]["usage"]["prompt_tokens"] == 2042


@respx.mock
async def test_stream_error_event_and_early_end(http: httpx.AsyncClient) -> None:
    failing = [
        STREAM_EVENTS[0],
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]
    respx.post(MESSAGES).mock(return_value=streamed(sse_body(failing))[0])
    chunks = model(http).stream(CALL)
    assert (await anext(chunks))["choices"][0]["delta"]["role"] == "assistant"
    with pytest.raises(UpstreamError) as caught:
        await anext(chunks)
    assert caught.value.status == 502 and "Overloaded" in caught.value.message

    respx.post(MESSAGES).mock(return_value=streamed(sse_body(STREAM_EVENTS[:9]))[0])
    with pytest.raises(UpstreamError) as caught:
        [chunk async for chunk in model(http).stream(CALL)]
    assert caught.value.status == 502 and "before the message was complete" in caught.value.message

    respx.post(MESSAGES).mock(return_value=streamed(b"event: message_start\ndata: {not json\n\n")[0])
    with pytest.raises(UpstreamError) as caught:
        [chunk async for chunk in model(http).stream(CALL)]
    assert caught.value.status == 502 and "malformed" in caught.value.message


@respx.mock
async def test_stream_refused_upfront(http: httpx.AsyncClient) -> None:
    respx.post(MESSAGES).mock(
        return_value=httpx.Response(429, json=anthropic_error("rate_limit_error", "Number of requests exceeded"))
    )
    with pytest.raises(UpstreamError) as caught:
        [chunk async for chunk in model(http).stream(CALL)]
    assert caught.value.status == 429 and "Number of requests exceeded" in caught.value.message

    respx.post(MESSAGES).mock(side_effect=httpx.ConnectTimeout("slow"))
    with pytest.raises(UpstreamError) as caught:
        [chunk async for chunk in model(http).stream(CALL)]
    assert caught.value.status == 504


# -- SSE framing --------------------------------------------------------------------------


def test_sse_parser_pieces_line_ends_comments_and_multiline_data() -> None:
    stream = (
        "\ufeff: keep-alive comment\r\n"
        "event: message_start\r\n"
        'data: {"a":\r\n'
        "data:  1}\r\n"
        "\r\n"
        "data: plain\n\n"
        "id: 7\rdata: 你好\r\r"
        "event: lonely\n\n"  # no data: not dispatched
    ).encode()
    expected = [("message_start", '{"a":\n 1}'), ("message", "plain"), ("message", "你好")]
    for size in (1, 2, 3, 5, len(stream)):
        parser = SSEParser()
        events = []
        for i in range(0, len(stream), size):
            events.extend(parser.feed(stream[i : i + size]))
        events.extend(parser.flush())
        assert events == expected, size
        assert parser.last_event_id == "7"


def test_sse_parser_flushes_an_unterminated_last_event_and_takes_text() -> None:
    parser = SSEParser()
    assert parser.feed("data: [DONE]") == []
    assert parser.flush() == [("message", "[DONE]")]


def test_format_sse() -> None:
    assert format_sse({"a": "é"}) == 'data: {"a": "é"}\n\n'.encode()
    assert format_sse("[DONE]") == DONE == b"data: [DONE]\n\n"
    assert format_sse("one\ntwo", event="note") == b"event: note\ndata: one\ndata: two\n\n"
    parser = SSEParser()
    assert parser.feed(format_sse({"x": [1, 2]}) + DONE) == [("message", '{"x": [1, 2]}'), ("message", "[DONE]")]


async def _pieces(*pieces: bytes) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


async def test_openai_events_stop_at_done_and_a_stream_without_it_was_cut_off() -> None:
    async def events(*pieces: bytes) -> list[dict[str, Any]]:
        return [event async for event in openai_events("P", _pieces(*pieces))]

    one = format_sse({"n": 1})
    assert await events(one[:5], one[5:] + DONE + format_sse({"n": 2})) == [{"n": 1}]
    assert await events(one + b"data: [DONE]") == [{"n": 1}]  # [DONE] without its blank line
    with pytest.raises(UpstreamError) as caught:
        await events(one)
    assert caught.value.status == 502 and "ended the stream early" in caught.value.message
    with pytest.raises(UpstreamError) as caught:
        await events(b"data: [1]\n\n" + DONE)
    assert caught.value.status == 502 and "malformed" in caught.value.message
