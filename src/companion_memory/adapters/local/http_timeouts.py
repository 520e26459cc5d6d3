"""Time limits on the local server's connections. The Worker never imports this module:
on Cloudflare the edge owns the connections.

uvicorn (h11) closes a connection left idle after a response (``timeout_keep_alive``),
but sets no limit on a request's headers or on its body: a client that connects and
sends half its headers, or its headers and then not the body it announced, holds the
connection (and, mid-body, a request task) for as long as it likes. So:

- headers: ``HeaderTimeoutH11Protocol`` closes a connection whose request headers are
  not complete ``header_seconds`` after it opened (or, on a kept-alive connection,
  after the first bytes of the next request);
- body: ``BodyTimeout`` bounds each wait for the next piece of a request body; a client
  silent that long gets a 408 in the app's JSON error shape, and the connection closes.
  A slow but steady upload is fine: the limit is on each gap, not on the whole body.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class RequestTimeout(HTTPException):
    def __init__(self, seconds: float) -> None:
        super().__init__(408, f"no request body arrived for {seconds:g} seconds")


class BodyTimeout:
    """ASGI middleware: a 408 when the client stops sending a request body midway."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        complete = timed_out = False

        async def bounded() -> Message:
            nonlocal complete, timed_out
            if complete:  # the body is in: what comes next is the disconnect, whenever it comes
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.seconds)
            except TimeoutError:
                timed_out = True
                # Raised inside the app, like BodyLimit's 413, so the app renders it.
                raise RequestTimeout(self.seconds) from None
            complete = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def closing(message: Message) -> None:
            # The rest of the body may still come: the connection cannot carry another request.
            if timed_out and message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"connection" for name, _ in headers):
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, bounded, closing)


def header_timeout_protocol(header_seconds: float) -> type[Any]:
    """uvicorn's h11 protocol, closing connections whose request headers take longer than
    ``header_seconds`` to arrive."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderTimeoutH11Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_headers()

        def data_received(self, data: bytes) -> None:
            # The first bytes of a next request on a kept-alive connection start the clock
            # (until then uvicorn's keep-alive limit applies).
            if self._header_timer is None and self.conn.their_state is h11.IDLE:
                self._await_headers()
            super().data_received(data)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                self._stop_waiting()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            super().connection_lost(exc)

        def _await_headers(self) -> None:
            self._header_timer = self.loop.call_later(header_seconds, self._headers_too_slow)

        def _stop_waiting(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutH11Protocol
