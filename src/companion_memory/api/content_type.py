"""Read form-typed bodies as JSON.

No route here takes a form but the OAuth endpoints (under /oauth/, where RFC 6749 says
forms), and `curl -d '{...}'` labels its JSON body
``application/x-www-form-urlencoded``. Relabelling it lets such a request work, and
a body that really is a form gets the usual "not valid JSON" error.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

_FORM = b"application/x-www-form-urlencoded"


class JsonBodies:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].startswith("/oauth/"):
            headers = scope.get("headers") or []
            if any(name == b"content-type" and value.split(b";")[0].strip() == _FORM for name, value in headers):
                # In place, not a copy: what a route changes in its scope (the MCP routes
                # cut ?token= out of the query) must reach the server's, which logs it.
                scope["headers"] = [(n, b"application/json" if n == b"content-type" else v) for n, v in headers]
        await self.app(scope, receive, send)
