"""Outbound HTTP in the Worker: httpx over the runtime's ``fetch`` (FetchTransport), tested
with a fake ``fetch`` that really goes to a local provider speaking the OpenAI format."""

from __future__ import annotations

import gzip
import json
import socket
from collections.abc import AsyncIterator

import httpx
import pytest

from companion_memory.adapters.cloudflare.fetch import FetchTransport
from companion_memory.adapters.cloudflare.runtime import build_runtime
from companion_memory.api.app import create_app
from tests.conftest import OWNER_KEY, auth
from tests.fakes.fetch import FakeFetch, FakeFetchResponse, FakeTimeoutSignal, _Reader, _Stream
from tests.fakes.worker_env import migrate, worker_env
from tests.upstreams import RecordingUpstream


@pytest.fixture
async def fetch() -> AsyncIterator[FakeFetch]:
    fake = FakeFetch()
    yield fake
    await fake.aclose()


@pytest.fixture
async def worker_client(upstream: RecordingUpstream, fetch: FakeFetch) -> AsyncIterator[httpx.AsyncClient]:
    env = worker_env(
        CHATBOX_API_KEY=OWNER_KEY,
        CHAT_BASE_URL=upstream.url + "/v1",
        CHAT_MODEL="local-model",
        ENABLE_MEMORY_RERANKER="false",
    )
    runtime = await build_runtime(env, fetch=fetch)
    await migrate(env)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(runtime)), base_url="http://worker"
    ) as client:
        yield client


async def test_chat_goes_out_through_fetch(
    worker_client: httpx.AsyncClient, upstream: RecordingUpstream, fetch: FakeFetch
) -> None:
    upstream.reply_text = "Hello from the provider"
    answer = await worker_client.post(
        "/v1/chat/completions",
        headers=auth(),
        json={"model": "companion", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "Hello from the provider"
    call = fetch.calls[-1]
    assert call["url"] == upstream.url + "/v1/chat/completions" and call["method"] == "POST"
    assert json.loads(call["body"])["model"] == "local-model"


async def test_a_streamed_answer_arrives_in_pieces(
    worker_client: httpx.AsyncClient, upstream: RecordingUpstream, fetch: FakeFetch
) -> None:
    upstream.reply_text = "one two three four five six seven"
    upstream.chunk_size = 4
    # The provider sends its events one by one: each only once the one before was read.
    upstream.hold_stream(after=1)
    fetch.on_chunk = upstream.release
    pieces = []
    async with worker_client.stream(
        "POST",
        "/v1/chat/completions",
        headers=auth(),
        json={
            "model": "companion",
            "stream": True,
            "messages": [{"role": "user", "content": "count"}],
        },
    ) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.startswith("data: {"):
                delta = json.loads(line[6:])["choices"]
                if delta and delta[0]["delta"].get("content"):
                    pieces.append(delta[0]["delta"]["content"])
    assert "".join(pieces) == "one two three four five six seven" and len(pieces) == 9
    assert fetch.calls[-1]["chunks"] >= 9  # read from the body stream as the events came, not in one piece


async def test_provider_errors_keep_their_status(worker_client: httpx.AsyncClient, upstream: RecordingUpstream) -> None:
    upstream.fail_with(429, times=1)
    answer = await worker_client.post(
        "/v1/chat/completions",
        headers=auth(),
        json={"model": "companion", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert answer.status_code == 429 and answer.json()["error"]["message"]


async def test_a_body_fetch_already_decoded_is_not_decoded_twice() -> None:
    payload = {"answer": "déjà vu"}

    async def gzipped_fetch(url: str, init: object) -> FakeFetchResponse:
        class Decoded:
            def __init__(self) -> None:
                self.chunks = iter([json.dumps(payload).encode()])

            def __aiter__(self) -> Decoded:
                return self

            async def __anext__(self) -> bytes:
                try:
                    return next(self.chunks)
                except StopIteration:
                    raise StopAsyncIteration from None

        class Closed:
            async def aclose(self) -> None:
                pass

        headers = [
            ("Content-Type", "application/json"),
            ("Content-Encoding", "gzip"),
            ("Content-Length", str(len(gzip.compress(json.dumps(payload).encode())))),
        ]
        return FakeFetchResponse(200, headers, _Stream(_Reader(Decoded(), Closed())))  # type: ignore[arg-type]

    async with httpx.AsyncClient(transport=FetchTransport(gzipped_fetch)) as client:
        response = await client.get("https://api.example/thing")
    assert response.json() == payload and "content-encoding" not in response.headers


async def test_timeouts_and_refused_connections_become_httpx_errors(
    upstream: RecordingUpstream, fetch: FakeFetch
) -> None:
    upstream.delay(2.0)
    transport = FetchTransport(fetch, timeout_signal=FakeTimeoutSignal)
    async with httpx.AsyncClient(transport=transport, timeout=0.3) as client:
        with pytest.raises(httpx.ReadTimeout):
            await client.post(upstream.url + "/v1/chat/completions", json={"model": "m", "messages": []})
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
        sock.close()
        with pytest.raises(httpx.ConnectError, match="fetch failed"):
            await client.get(f"http://127.0.0.1:{closed_port}/")


async def test_a_redirect_is_answered_not_followed() -> None:
    """fetch follows redirects by default; a transport must not (httpx follows one only
    when asked), or a caller that checks each address it is sent to never sees the next:
    a metadata document redirecting to the Worker's own network, say."""
    seen: list[dict[str, object]] = []

    async def redirecting_fetch(url: str, init: object) -> FakeFetchResponse:
        seen.append(dict(init))  # type: ignore[call-overload]
        return FakeFetchResponse(302, [("Location", "https://2130706433/c.json")], None)

    async with httpx.AsyncClient(transport=FetchTransport(redirecting_fetch)) as client:
        response = await client.get("https://app.example/c.json")
    assert response.status_code == 302 and response.headers["location"] == "https://2130706433/c.json"
    assert seen[0]["redirect"] == "manual"


async def test_the_worker_names_the_client_by_cf_connecting_ip(fetch: FakeFetch) -> None:
    """Cloudflare sets cf-connecting-ip on every request to the Worker, over any a client
    sent: the one place that header is believed."""
    runtime = await build_runtime(worker_env(ENABLE_MEMORY_RERANKER="false"), fetch=fetch)
    assert runtime.client_address_header == "cf-connecting-ip" and runtime.public_http is None
