"""Fake model providers for end-to-end tests: one local uvicorn server (127.0.0.1, a free port,
a background thread) that speaks three real wire formats and records every request.

* OpenAI chat completions: any POST path ending in ``/chat/completions``
  (``/v1/chat/completions``, AI Gateway's ``/compat/chat/completions``).
* Anthropic Messages: any POST path ending in ``/messages``
  (``/anthropic/v1/messages``, ``/custom-provider/messages``).
* OpenAI Responses (what Codex speaks): any POST path ending in ``/responses``. A turn is
  the tool calls alone, then (once the input holds a ``function_call_output``) the text.

    with RecordingUpstream() as upstream:
        upstream.reply_text = "Hi!"                 # default: "echo: " + first 40 chars of the last user message
        upstream.usage = {"input_tokens": 10, "cache_read_input_tokens": 90}
        upstream.tool_calls = [{"name": "recall", "arguments": {"query": "cat"}}]  # "namespace": on Responses
        upstream.chunk_size, upstream.chunk_delay = 4, 0.05   # streamed pieces, pause between SSE events
        upstream.hold_stream(after=1)               # then one more SSE event per upstream.release()
        upstream.fail_with(529)                     # or .malformed() / .delay(5) / .disconnect_mid_stream()
        ... point the gateway at upstream.url ...
        upstream.requests[-1].json["messages"]      # what the gateway actually sent

Formats (checked by tests/adapters/chat/test_upstreams.py with the official openai SDK and a raw SSE parser):
OpenAI: ``chat.completion`` / ``chat.completion.chunk`` objects, ``data: [DONE]`` last; with
``stream_options.include_usage`` every chunk carries ``"usage": null`` and one extra chunk with
``"choices": []`` and the usage comes before ``[DONE]``; errors ``{"error": {message, type, param, code}}``.
Anthropic: ``event: message_start`` / ``content_block_start`` / ``ping`` / ``content_block_delta``
(``text_delta``, ``input_json_delta``) / ``content_block_stop`` / ``message_delta`` (stop_reason, cumulative
usage) / ``message_stop``; errors ``{"type": "error", "error": {type, message}, "request_id"}``.
Responses: a ``response`` object; streamed, ``response.created`` / ``response.in_progress``, then per
output item ``response.output_item.added``, its deltas (``response.output_text.delta`` within a
content part, or ``response.function_call_arguments.delta``) and ``response.output_item.done``,
last ``response.completed`` with the whole response and its usage; errors as OpenAI's.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

DEFAULT_USAGE = {
    "input_tokens": 25,
    "output_tokens": 10,
    "cache_read_input_tokens": 0,
    "cache_creation_input_tokens": 0,
}

# status -> (error.type, error.code); other 4xx/5xx fall back to the first/second default.
_OPENAI_ERRORS = {
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_PROVIDERS = (("/messages", "anthropic"), ("/chat/completions", "openai"), ("/responses", "responses"))
_SSE_HEADERS = {"cache-control": "no-cache", "content-type": "text/event-stream; charset=utf-8"}
_CUT = b"<drop the connection here>"  # marker yielded by a body iterator (never sent)
HOLD_TIMEOUT = 10.0  # seconds a held stream waits for release() before it sends the rest anyway


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]  # lowercased names
    body: bytes
    json: Any  # parsed body, None when it is not JSON
    at: float  # time.monotonic() on arrival
    provider: str | None  # "openai", "anthropic", "responses", or None (unknown path)
    completed: bool | None = None  # True: the last byte was handed over; False: cut (fault, or the client hung up)
    sent: int = 0  # SSE events handed over so far


@dataclass
class _Fault:
    kind: str
    times: int | None  # None: every request until reset()
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    after: int = 0


class _CuttableStream(StreamingResponse):
    """A streaming body that may end by dropping the TCP connection: no terminal chunk is sent,
    so the client sees the peer close an incomplete body (uvicorn closes the transport)."""

    async def stream_response(self, send) -> None:  # type: ignore[no-untyped-def]
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        async for chunk in self.body_iterator:
            if chunk is _CUT:
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _data(obj: Any) -> bytes:
    return f"data: {_dumps(obj)}\n\n".encode()


def _event(obj: dict[str, Any]) -> bytes:
    return f"event: {obj['type']}\ndata: {_dumps(obj)}\n\n".encode()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), max(1, size))]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts or Anthropic content blocks
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _last_input_text(body: dict[str, Any]) -> str:
    """The last user text of a Responses request (its ``input``: a string or a list of items)."""
    given = body.get("input")
    if isinstance(given, str):
        return given
    for item in reversed(given if isinstance(given, list) else []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            parts = content if isinstance(content, list) else []
            return " ".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "input_text")
    return ""


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


class RecordingUpstream:
    """See the module docstring. Configuration is read per request, so a test may change it between calls."""

    def __init__(self) -> None:
        self.reply_text: str | None = None  # None: echo the last user message (no text when tool_calls are set)
        self.usage: dict[str, int] = dict(DEFAULT_USAGE)  # Anthropic names; mapped to OpenAI names on that wire
        self.tool_calls: list[dict[str, Any]] = []  # {"name", "arguments": dict | JSON str, "id"?}
        self.chunk_size = 8  # characters of text / tool arguments per streamed delta
        self.chunk_delay = 0.0  # seconds between SSE events
        self.requests: list[RecordedRequest] = []
        self._fault: _Fault | None = None
        self._delay: _Fault | None = None
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self._closing = False  # set by stop(): delayed and streaming responses end at once
        self._hold_after: int | None = None
        self._releases = threading.Semaphore(0)
        self._released_all = threading.Event()
        self._replies = {
            "openai": (self._openai_completion, self._openai_events),
            "anthropic": (self._anthropic_message, self._anthropic_events),
            "responses": (self._responses_object, self._responses_events),
        }
        self._app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "PUT", "DELETE"])])

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._closing = False
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app, lifespan="off", log_config=None, log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name=f"upstream:{self.port}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake upstream did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._closing = self._server.should_exit = True
            self._thread.join(timeout=3)
            self._server.force_exit = True  # a response still hanging: stop waiting for it
            self._thread.join(timeout=3)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- faults ------------------------------------------------------------------------------------

    def fail_with(
        self, status: int, body: Any = None, *, times: int | None = None, headers: dict[str, str] | None = None
    ) -> None:
        """Answer with ``status`` and the provider's own error shape (or ``body``: a dict/list is sent
        as JSON, a str/bytes as text/plain). ``times``: only the next N requests; None: until reset()."""
        self._fault = _Fault("fail", times, status=status, body=body, headers=dict(headers or {}))

    def malformed(self, *, times: int | None = None) -> None:
        """200 with a body that is not JSON (labelled application/json); streams send one good event, then
        an event whose JSON is cut off, and never finish properly (no usage, no message_stop)."""
        self._fault = _Fault("malformed", times)

    def disconnect_mid_stream(self, after: int = 2, *, times: int | None = None) -> None:
        """Drop the connection right after the ``after``-th content delta (text or tool arguments) of a
        stream (a reply with fewer deltas completes); a non-streamed reply is cut halfway through its
        body (Content-Length promises more)."""
        self._fault = _Fault("disconnect", times, after=after)

    def delay(self, seconds: float, *, times: int | None = None) -> None:
        """Wait ``seconds`` before any response byte (headers included): lets client timeouts fire.
        Combines with the other faults."""
        self._delay = _Fault("delay", times, seconds=seconds)

    def hold_stream(self, after: int = 1) -> None:
        """Streams send their first ``after`` SSE events, then one more per ``release()``: a test sees
        what reached the client before the rest exists, instead of timing gaps between events."""
        self._hold_after = after
        self._releases = threading.Semaphore(0)
        self._released_all.clear()

    def release(self, events: int | None = 1) -> None:
        """Let ``events`` more held SSE events go; None: all the rest, and hold no more."""
        if events is None:
            self._released_all.set()
        else:
            for _ in range(events):
                self._releases.release()

    def _wait_for_release(self) -> None:
        # Nobody releasing in time means the client is waiting for the end of the stream (buffered):
        # stop holding, so the test gets to its assertions instead of hanging.
        deadline = time.monotonic() + HOLD_TIMEOUT
        while not (self._released_all.is_set() or self._closing):
            if self._releases.acquire(timeout=0.05):
                return
            if time.monotonic() > deadline:
                self._released_all.set()

    def reset(self) -> None:
        """Forget faults and recorded requests (reply configuration is kept)."""
        with self._lock:
            self._fault = self._delay = None
            self.requests.clear()

    def _take(self, slot: str) -> _Fault | None:
        with self._lock:
            fault: _Fault | None = getattr(self, slot)
            if fault is not None and fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    setattr(self, slot, None)
            return fault

    # -- the server --------------------------------------------------------------------------------

    async def _handle(self, request: Request) -> Response:
        at = time.monotonic()
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = request.url.path
        provider = next((name for suffix, name in _PROVIDERS if path.endswith(suffix)), None)
        record = RecordedRequest(
            request.method, path, request.url.query, dict(request.headers), raw, body, at, provider
        )
        self.requests.append(record)
        if (pause := self._take("_delay")) is not None:
            until = time.monotonic() + pause.seconds
            while time.monotonic() < until and not self._closing:  # noqa: ASYNC110 - _closing is set from another thread
                await asyncio.sleep(min(0.05, until - time.monotonic()))
        if provider is None or request.method != "POST":
            return self._error(provider or "openai", 404, f"no fake route for {request.method} {path}")
        fault = self._take("_fault")
        if fault is not None and fault.kind == "fail":
            return self._error(provider, fault.status, None, fault.body, fault.headers)
        if not isinstance(body, dict):
            return self._error(provider, 400, "request body is not a JSON object")

        n = next(self._seq)
        headers = {"request-id" if provider == "anthropic" else "x-request-id": f"req_fake{n}"}
        kind = fault.kind if fault else None
        if not body.get("stream"):
            payload = self._replies[provider][0](body, n)
            data = _dumps(payload).encode()
            if kind == "malformed":
                data = b'<html><body>502 Bad Gateway</body></html> {"id": '
            headers |= {"content-type": "application/json", "content-length": str(len(data))}
            cut = len(data) // 2 if kind == "disconnect" else None
            return _CuttableStream(self._send_body(data, cut, record), headers=headers)

        events = self._replies[provider][1](body, n)
        if kind == "malformed":
            broken = {
                "openai": b'data: {"id":"chatcmpl-broken","choices":[{"index":0,"delta":{"content":"tru\n\n',
                "anthropic": b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"ty\n\n',
                "responses": b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","del\n\n',
            }[provider]
            events = [events[0], (broken, False)]
        cut_after = fault.after if kind == "disconnect" else None
        return _CuttableStream(self._send_events(events, cut_after, record), headers=headers | _SSE_HEADERS)

    async def _send_body(self, data: bytes, cut: int | None, record: RecordedRequest) -> AsyncIterator[bytes]:
        record.completed = False
        if cut is not None:
            yield data[:cut]
            yield _CUT
            return
        record.completed = True  # set before the last byte leaves, so a client never sees it still False
        yield data

    async def _send_events(
        self, events: list[tuple[bytes, bool]], cut_after: int | None, record: RecordedRequest
    ) -> AsyncIterator[bytes]:
        record.completed = False
        deltas = 0
        for i, (event, is_delta) in enumerate(events):
            if i and self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            if self._hold_after is not None and i >= self._hold_after:
                await asyncio.to_thread(self._wait_for_release)
            if self._closing:
                yield _CUT
                return
            deltas += is_delta
            if cut_after is not None and deltas >= cut_after:
                record.sent += 1
                yield event
                yield _CUT
                return
            record.completed = i == len(events) - 1
            record.sent += 1
            yield event

    def _error(
        self, provider: str, status: int, message: str | None, body: Any = None, headers: dict[str, str] | None = None
    ) -> Response:
        if isinstance(body, (str, bytes)):
            return Response(body, status, headers=headers, media_type="text/plain")
        if body is None:
            message = message or f"fake upstream error {status}"
            if provider != "anthropic":
                kind, code = _OPENAI_ERRORS.get(
                    status, ("invalid_request_error" if status < 500 else "server_error", None)
                )
                body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
            else:
                kind = _ANTHROPIC_ERRORS.get(status, "invalid_request_error" if status < 500 else "api_error")
                body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake_error"}
        return JSONResponse(body, status, headers=headers)

    # -- replies -----------------------------------------------------------------------------------

    def _reply(self, body: dict[str, Any], n: int, id_prefix: str) -> tuple[str, list[tuple[str, str, str]]]:
        """(text, [(tool id, name, JSON arguments)]) for this request."""
        text = self.reply_text
        if text is None:
            text = "" if self.tool_calls else f"echo: {_last_user_text(body)[:40]}"
        tools = []
        for i, call in enumerate(self.tool_calls):
            arguments = call.get("arguments", {})
            arguments = arguments if isinstance(arguments, str) else _dumps(arguments)
            tools.append((call.get("id") or f"{id_prefix}{n}_{i}", call["name"], arguments))
        return text, tools

    def _usage(self) -> dict[str, int]:
        return {**DEFAULT_USAGE, **self.usage}

    def _openai_usage(self) -> dict[str, Any]:
        u = self._usage()
        prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        return {
            "prompt_tokens": prompt,
            "completion_tokens": u["output_tokens"],
            "total_tokens": prompt + u["output_tokens"],
            "prompt_tokens_details": {"cached_tokens": u["cache_read_input_tokens"], "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def _anthropic_usage(self) -> dict[str, int]:
        u = self._usage()
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
        return {k: u[k] for k in keys}

    def _openai_completion(self, body: dict[str, Any], n: int) -> dict[str, Any]:
        text, tools = self._reply(body, n, "call_fake")
        message: dict[str, Any] = {"role": "assistant", "content": text if text or not tools else None, "refusal": None}
        if tools:
            message["tool_calls"] = [
                {"id": id_, "type": "function", "function": {"name": name, "arguments": args}}
                for id_, name, args in tools
            ]
        return {
            "id": f"chatcmpl-fake{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or "fake-model",
            "system_fingerprint": "fp_fake",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if tools else "stop"}
            ],
            "usage": self._openai_usage(),
        }

    def _openai_events(self, body: dict[str, Any], n: int) -> list[tuple[bytes, bool]]:
        text, tools = self._reply(body, n, "call_fake")
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        base = {
            "id": f"chatcmpl-fake{n}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or "fake-model",
            "system_fingerprint": "fp_fake",
        }

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            return _data({**base, "choices": [choice]} | ({"usage": None} if include_usage else {}))

        events = [(chunk({"role": "assistant", "content": "", "refusal": None}), False)]
        events += [(chunk({"content": piece}), True) for piece in _pieces(text, self.chunk_size)]
        for i, (id_, name, args) in enumerate(tools):
            start = {"index": i, "id": id_, "type": "function", "function": {"name": name, "arguments": ""}}
            events.append((chunk({"tool_calls": [start]}), False))
            events += [
                (chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), True)
                for piece in _pieces(args, self.chunk_size)
            ]
        events.append((chunk({}, "tool_calls" if tools else "stop"), False))
        if include_usage:
            events.append((_data({**base, "choices": [], "usage": self._openai_usage()}), False))
        events.append((b"data: [DONE]\n\n", False))
        return events

    def _anthropic_message(self, body: dict[str, Any], n: int) -> dict[str, Any]:
        text, tools = self._reply(body, n, "toolu_fake")
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool_use", "id": id_, "name": name, "input": json.loads(args)} for id_, name, args in tools
        ]
        return {
            "id": f"msg_fake{n}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "fake-model",
            "content": content,
            "stop_reason": "tool_use" if tools else "end_turn",
            "stop_sequence": None,
            "usage": self._anthropic_usage(),
        }

    def _anthropic_events(self, body: dict[str, Any], n: int) -> list[tuple[bytes, bool]]:
        message = self._anthropic_message(body, n)
        text, tools = self._reply(body, n, "toolu_fake")
        usage = message["usage"]
        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        events = [(_event({"type": "message_start", "message": start}), False)]
        blocks: list[tuple[dict[str, Any], str, str, str]] = []  # (start block, delta type, delta field, full text)
        if text:
            blocks.append(({"type": "text", "text": ""}, "text_delta", "text", text))
        for id_, name, args in tools:
            blocks.append(
                ({"type": "tool_use", "id": id_, "name": name, "input": {}}, "input_json_delta", "partial_json", args)
            )
        for index, (block, delta_type, key, full) in enumerate(blocks):
            events.append((_event({"type": "content_block_start", "index": index, "content_block": block}), False))
            events += [
                (
                    _event({"type": "content_block_delta", "index": index, "delta": {"type": delta_type, key: piece}}),
                    True,
                )
                for piece in _pieces(full, self.chunk_size)
            ]
            events.append((_event({"type": "content_block_stop", "index": index}), False))
        events.insert(min(2, len(events)), (_event({"type": "ping"}), False))  # after the first block starts
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        events.append((_event({"type": "message_delta", "delta": delta, "usage": usage}), False))
        events.append((_event({"type": "message_stop"}), False))
        return events

    def _responses_reply(self, body: dict[str, Any], n: int) -> tuple[str, list[tuple[str, str, str]]]:
        """The tool calls alone first; once the tools have answered, the turn ends with text."""
        items = body.get("input") if isinstance(body.get("input"), list) else []
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        _, tools = self._reply(body, n, "call_fake")
        if tools and not answered:
            return "", tools
        text = self.reply_text if self.reply_text is not None else f"echo: {_last_input_text(body)[:40]}"
        return text, []

    def _responses_output(self, body: dict[str, Any], n: int) -> list[dict[str, Any]]:
        text, tools = self._responses_reply(body, n)
        output: list[dict[str, Any]] = []
        if text:
            part = {"type": "output_text", "text": text, "annotations": []}
            output.append(
                {"id": f"msg_fake{n}", "type": "message", "status": "completed", "role": "assistant", "content": [part]}
            )
        for i, ((id_, name, args), call) in enumerate(zip(tools, self.tool_calls, strict=False)):
            item = {"id": f"fc_fake{n}_{i}", "type": "function_call", "status": "completed", "call_id": id_}
            # A tool of a namespace (Codex puts each MCP server's tools in one) is called by both names.
            namespace = {"namespace": call["namespace"]} if call.get("namespace") else {}
            output.append(item | namespace | {"name": name, "arguments": args})
        return output

    def _responses_usage(self) -> dict[str, Any]:
        u = self._usage()
        prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
        return {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": u["cache_read_input_tokens"]},
            "output_tokens": u["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + u["output_tokens"],
        }

    def _responses_object(
        self, body: dict[str, Any], n: int, output: list[dict[str, Any]] | None = None, status: str = "completed"
    ) -> dict[str, Any]:
        return {
            "id": f"resp_fake{n}",
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": body.get("model") or "fake-model",
            "output": self._responses_output(body, n) if output is None else output,
            "parallel_tool_calls": True,
            "tool_choice": body.get("tool_choice") or "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "usage": self._responses_usage() if status == "completed" else None,
        }

    def _responses_events(self, body: dict[str, Any], n: int) -> list[tuple[bytes, bool]]:
        output = self._responses_output(body, n)
        sequence = itertools.count()

        def event(kind: str, is_delta: bool = False, **fields: Any) -> tuple[bytes, bool]:
            return _event({"type": kind, "sequence_number": next(sequence), **fields}), is_delta

        pending = self._responses_object(body, n, [], "in_progress")
        events = [event("response.created", response=pending), event("response.in_progress", response=pending)]
        for index, item in enumerate(output):
            at = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                text = item["content"][0]["text"]
                events.append(
                    event(
                        "response.output_item.added",
                        output_index=index,
                        item={**item, "content": [], "status": "in_progress"},
                    )
                )
                empty = {"type": "output_text", "text": "", "annotations": []}
                events.append(event("response.content_part.added", **at, content_index=0, part=empty))
                events += [
                    event("response.output_text.delta", True, **at, content_index=0, delta=piece, logprobs=[])
                    for piece in _pieces(text, self.chunk_size)
                ]
                events.append(event("response.output_text.done", **at, content_index=0, text=text, logprobs=[]))
                events.append(event("response.content_part.done", **at, content_index=0, part=item["content"][0]))
            else:
                args = item["arguments"]
                events.append(
                    event(
                        "response.output_item.added",
                        output_index=index,
                        item={**item, "arguments": "", "status": "in_progress"},
                    )
                )
                events += [
                    event("response.function_call_arguments.delta", True, **at, delta=piece)
                    for piece in _pieces(args, self.chunk_size)
                ]
                events.append(event("response.function_call_arguments.done", **at, arguments=args))
            events.append(event("response.output_item.done", output_index=index, item=item))
        events.append(event("response.completed", response=self._responses_object(body, n, output)))
        return events
