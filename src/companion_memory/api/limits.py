"""Refuse oversized request bodies before anyone parses them."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_MAX_BODY = 1024 * 1024


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than {limit} bytes")


class BodyLimit:
    """ASGI middleware: a 413 for a body over the limit, whether it declares a
    Content-Length or arrives chunked (then it is counted as it is read)."""

    def __init__(
        self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY, overrides: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.overrides = overrides or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.overrides.get(scope.get("path", ""), self.max_bytes)
        declared = dict(scope.get("headers") or []).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            # Still routed, so the error comes back in the app's own JSON shape.
            async def refuse() -> Message:
                raise BodyTooLarge(limit)

            await self.app(scope, refuse, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        await self.app(scope, counted, send)
