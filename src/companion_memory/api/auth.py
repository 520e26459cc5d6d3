"""API keys → profiles → scopes, checked in constant time."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from ..errors import PermissionDenied, ServiceError
from ..memory.writes import Actor
from ..settings import Settings

CHAT = "chat"
MEMORY_READ = "memory:read"
MEMORY_WRITE = "memory:write"
EXPORT = "export"
DEBUG = "debug"
OWNER = "owner"
GUIDE_DOG = "guide_dog"

_MEMBER = frozenset({CHAT, MEMORY_READ, MEMORY_WRITE})
# (setting, profile name, scopes), as the reference defines the keys.
PROFILES: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("CHATBOX_API_KEY", "chatbox", _MEMBER | {EXPORT, DEBUG, OWNER, GUIDE_DOG}),
    ("IM_API_KEY", "im", _MEMBER),
    ("DEBUG_API_KEY", "debug", _MEMBER | {EXPORT, DEBUG}),
    ("MEMORY_MCP_API_KEY", "mcp", frozenset({MEMORY_READ, MEMORY_WRITE})),
    ("GUIDE_DOG_API_KEY", "guide_dog", frozenset({GUIDE_DOG})),
)


class Unauthenticated(ServiceError):
    code = "unauthorized"


@dataclass(frozen=True)
class Principal:
    profile: str
    scopes: frozenset[str]

    @property
    def actor(self) -> Actor:
        return Actor(name=self.profile, owner=OWNER in self.scopes)

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise PermissionDenied(f"the {self.profile} key may not do this (needs {scope!r})")


def identify(settings: Settings, presented: str) -> Principal | None:
    """The profile whose key matches. Every configured key is compared, so the time
    taken does not tell which key (or how much of it) matched."""
    found: Principal | None = None
    given = presented.encode()
    for setting, profile, scopes in PROFILES:
        key = getattr(settings, setting)
        if key and hmac.compare_digest(key.encode(), given) and found is None:
            found = Principal(profile, scopes)
    return found


def presented_key(request: Request) -> str | None:
    authorization = request.headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.headers.get("x-api-key") or None


def authenticate(request: Request) -> Principal:
    key = presented_key(request)
    if not key:
        raise Unauthenticated("missing API key: send Authorization: Bearer <key> or x-api-key")
    principal = identify(request.app.state.runtime.settings, key)
    if principal is None:
        raise Unauthenticated("unknown API key")
    return principal


def requires(scope: str):
    """A dependency that authenticates the request and checks one scope."""

    def check(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
        principal.require(scope)
        return principal

    return Depends(check)
