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
