"""API keys → profiles → scopes, checked in constant time."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Request
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from ..application.principal import OAUTH_CALLER, Principal, principal_for
from ..application.use_case import UseCase
from ..domain.scopes import CHAT, DEBUG, EXPORT, GUIDE_DOG, MEMORY_READ, MEMORY_WRITE, OWNER
from ..errors import Unauthenticated
from ..settings import Settings
from .errors import error_response

# (setting, profile name, scopes), as the reference defines the keys.
_MEMBER = frozenset({CHAT, MEMORY_READ, MEMORY_WRITE})
PROFILES: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("CHATBOX_API_KEY", "chatbox", _MEMBER | {EXPORT, DEBUG, OWNER, GUIDE_DOG}),
    ("IM_API_KEY", "im", _MEMBER),
    ("DEBUG_API_KEY", "debug", _MEMBER | {EXPORT, DEBUG}),
    ("MEMORY_MCP_API_KEY", "mcp", frozenset({MEMORY_READ, MEMORY_WRITE})),
    ("GUIDE_DOG_API_KEY", "guide_dog", frozenset({GUIDE_DOG})),
)


def identify(settings: Settings, presented: str) -> Principal | None:
    """The profile whose key matches. Every configured key is compared, so the time
    taken does not tell which key (or how much of it) matched."""
    found: Principal | None = None
    given = presented.encode()
    for setting, profile, scopes in PROFILES:
        key = getattr(settings, setting)
        if key and hmac.compare_digest(key.encode(), given) and found is None:
            found = principal_for(settings, profile, scopes)
    return found


def presented_key(headers: Headers) -> str | None:
    authorization = headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return headers.get("x-api-key") or None


def principal_of(settings: Settings, headers: Headers) -> Principal:
    key = presented_key(headers)
    if not key:
        raise Unauthenticated("missing API key: send Authorization: Bearer <key> or x-api-key")
    principal = identify(settings, key)
    if principal is None:
        raise Unauthenticated("unknown API key")
    return principal


async def authenticate(request: Request) -> Principal:
    """The principal the Authentication middleware found for this request (async, as
    api/deps.py says why)."""
    principal = request.scope.get("state", {}).get("principal")
    if isinstance(principal, Principal):
        return principal
    return principal_of(request.app.state.runtime.settings, request.headers)


# Every REST route lives under these; /health, the panel's files and /mcp (which answers
# in JSON-RPC and also takes ?token=) are outside.
PROTECTED_PREFIXES = ("/v1/", "/api/")


class Authentication:
    """ASGI middleware: the key of every /v1 and /api request is checked before its route
    reads the body, so a caller without a valid key learns nothing about the API, not
    even what is wrong with its JSON. Scopes are checked by each route (``allowed``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "OPTIONS" and scope["path"].startswith(PROTECTED_PREFIXES):
            settings: Settings = scope["app"].state.runtime.settings
            try:
                scope.setdefault("state", {})["principal"] = principal_of(settings, Headers(scope=scope))
            except Unauthenticated as error:
                response = error_response(401, error.message, type_="authentication_error", code=error.code)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def allowed(case: UseCase[Any, Any]) -> Any:
    """The caller, once the use case behind the route has checked its scope: as a
    dependency this runs before the body is read, so a key without the scope learns
    nothing, not even whether its input was valid. ``CHECKS`` records the use case
    behind each check, so the tests can see which one each route calls."""

    async def check(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
        case.authorize(principal)
        return principal

    CHECKS[check] = case
    return Depends(check)


def anyone(case: UseCase[Any, Any]) -> Any:
    """``allowed`` for the OAuth protocol steps, which a client takes before it holds any
    credential: the caller is ``OAUTH_CALLER``, whatever it sends."""

    async def check() -> Principal:
        case.authorize(OAUTH_CALLER)
        return OAUTH_CALLER

    CHECKS[check] = case
    return Depends(check)


# Each route's scope check → the use case behind it.
CHECKS: dict[Callable[..., Awaitable[Principal]], UseCase[Any, Any]] = {}
