"""The local server's connection time limits, seen from raw sockets: headers that never
finish, a body that never comes, a connection that idles."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from companion_memory.settings import Settings
from tests.conftest import OWNER_KEY
from tests.hosts.test_local_server import Server
from tests.live_server import LiveServer

LIMIT = 0.5  # seconds, for headers, each gap in a body, and keep-alive
WITHIN = 10  # how long a socket waits before the test calls the connection held


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    settings = Settings(
        CHATBOX_API_KEY=OWNER_KEY,
        SERVER_HEADER_TIMEOUT_SECONDS=LIMIT,
        SERVER_BODY_TIMEOUT_SECONDS=LIMIT,
        SERVER_KEEP_ALIVE_SECONDS=LIMIT,
    )
    live = LiveServer(settings, tmp_path_factory.mktemp("timeouts") / "data", embedder)
    yield live
    live.stop()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WITHIN)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes; fails if it holds the connection."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise AssertionError(f"the server held the connection for {WITHIN}s; got {received!r}") from None
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def read_response(sock: socket.socket) -> bytes:
    """One whole response (with a Content-Length) from a connection that stays open."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:"))
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def post_headers(content_length: int) -> bytes:
    return (
        "POST /v1/memories HTTP/1.1\r\nHost: localhost\r\n"
        f"Authorization: Bearer {OWNER_KEY}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {content_length}\r\n\r\n"
    ).encode()


def test_headers_and_no_body_get_a_408_and_the_connection_closes(server: LiveServer) -> None:
    with connect(server.port) as sock:
        started = time.monotonic()
        sock.sendall(post_headers(100))
        answer = read_until_closed(sock)
        waited = time.monotonic() - started
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer
    assert b"connection: close" in head.lower()
    error = json.loads(body)["error"]
    assert set(error) >= {"message", "type", "code"} and "body" in error["message"]
    assert waited >= LIMIT * 0.9


def test_half_a_body_gets_a_408(server: LiveServer) -> None:
    with connect(server.port) as sock:
        sock.sendall(post_headers(100) + b'{"content": "half')
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 408"), answer


def test_half_the_headers_and_the_connection_closes(server: LiveServer) -> None:
    with connect(server.port) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        assert read_until_closed(sock) == b""
        assert time.monotonic() - started >= LIMIT * 0.9


def test_headers_sent_a_byte_at_a_time_do_not_buy_more_time(server: LiveServer) -> None:
    request = b"GET /health HTTP/1.1\r\nHost: localhost\r\n" + b"X-Pad: " + b"a" * 200 + b"\r\n\r\n"
    with connect(server.port) as sock:
        started = time.monotonic()
        try:
            for byte in request:
                sock.sendall(bytes([byte]))
                time.sleep(LIMIT / 10)
        except OSError:  # closed under us: what we want
            pass
        assert read_until_closed(sock) == b""
        assert time.monotonic() - started < LIMIT * 10


def test_a_silent_connection_closes(server: LiveServer) -> None:
    with connect(server.port) as sock:
        assert read_until_closed(sock) == b""


def test_an_idle_kept_alive_connection_closes_and_a_half_next_request_too(server: LiveServer) -> None:
    request = b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
    with connect(server.port) as sock:
        sock.sendall(request)
        assert read_until_closed(sock).startswith(b"HTTP/1.1 200")
    with connect(server.port) as sock:
        sock.sendall(request)
        assert read_response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /health HTTP/1.1\r\n")  # and no more
        assert read_until_closed(sock) == b""


def test_a_slow_but_steady_body_is_fine(server: LiveServer) -> None:
    body = json.dumps(
        {
            "content": "Likes green tea in the afternoon, " + "very much " * 20,
            "fact_key": "tea.slow",
            "type": "preference",
        }
    ).encode()
    # Short gaps: a busy machine that wakes this thread late still keeps each one under the limit.
    pieces = [body[i : i + 20] for i in range(0, len(body), 20)]
    assert len(pieces) * LIMIT / 5 > LIMIT * 2  # the whole body takes longer than one limit
    with connect(server.port) as sock:
        sock.sendall(post_headers(len(body)).replace(b"Content-Length", b"Connection: close\r\nContent-Length"))
        for piece in pieces:
            time.sleep(LIMIT / 5)
            sock.sendall(piece)
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 201"), answer


def test_ordinary_clients_are_unaffected(server: LiveServer) -> None:
    headers = {"Authorization": f"Bearer {OWNER_KEY}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=WITHIN) as client:
        created = client.post(
            "/v1/memories", json={"content": "Walks the dog at seven", "fact_key": "dog.walk", "type": "habit"}
        )
        assert created.status_code == 201, created.text
        time.sleep(LIMIT * 2)  # the kept-alive connection is closed meanwhile; httpx reconnects
        assert client.get("/health").status_code == 200


def test_serve_applies_the_limits(tmp_path: Path) -> None:
    server = Server(
        tmp_path / "data",
        cwd=tmp_path,
        CHATBOX_API_KEY=OWNER_KEY,
        SERVER_HEADER_TIMEOUT_SECONDS=str(LIMIT),
        SERVER_BODY_TIMEOUT_SECONDS=str(LIMIT),
    )
    try:
        with connect(server.port) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
            assert read_until_closed(sock) == b""
        with connect(server.port) as sock:
            sock.sendall(post_headers(100))
            assert read_until_closed(sock).startswith(b"HTTP/1.1 408")
    finally:
        server.stop()
