"""Who is asking and what they may do: scopes are the one currency of authorization."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import PermissionDenied
from ..memory.writes import Actor

CHAT = "chat"
MEMORY_READ = "memory:read"
MEMORY_WRITE = "memory:write"
EXPORT = "export"
DEBUG = "debug"
OWNER = "owner"
GUIDE_DOG = "guide_dog"
# An OAuth client's protocol steps (discovery, registration, authorization, tokens,
# revocation): taken before it holds any credential, so every caller may.
OAUTH_CLIENT = "oauth:client"


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


# The nightly job, the queue consumer and the command line act for the owner.
SYSTEM = Principal("system", frozenset({CHAT, MEMORY_READ, MEMORY_WRITE, EXPORT, DEBUG, OWNER}))

# Whoever calls the OAuth endpoints: no key, and no rights beyond the protocol steps.
OAUTH_CALLER = Principal("oauth client", frozenset({OAUTH_CLIENT}))
# What an OAuth access token lets an MCP client do: what the MCP key may.
OAUTH_TOKEN_PROFILE = "oauth"
