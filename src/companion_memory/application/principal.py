"""Who is asking and what they may do: a key holds scopes (``domain/scopes.py``), and a key may be bound to namespaces, for reading and for writing apart (the memory-graph
reference's permission model: the owner, agents and bots, each with their scope)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..domain.scopes import CHAT, DEBUG, EXPORT, MEMORY_READ, MEMORY_WRITE, OAUTH_CLIENT, OWNER
from ..errors import PermissionDenied
from ..memory.drafts import Actor
from ..settings import Settings

# What an OAuth access token lets an MCP client do: what the MCP key may.
OAUTH_TOKEN_PROFILE = "oauth"


@dataclass(frozen=True)
class Principal:
    profile: str
    scopes: frozenset[str]
    # The namespaces the key may read, and write; None: every one (unbound). The use
    # cases check them in one place, application/bindings.py.
    reads: frozenset[str] | None = None
    writes: frozenset[str] | None = None

    @property
    def actor(self) -> Actor:
        return Actor(name=self.profile, owner=OWNER in self.scopes)

    @property
    def bound(self) -> bool:
        return self.reads is not None or self.writes is not None

    def require(self, scope: str) -> None:
        if scope not in self.scopes:
            raise PermissionDenied(f"the {self.profile} key may not do this (needs {scope!r})")

    def readable(self, namespace: str) -> bool:
        return self.reads is None or namespace in self.reads

    def writable(self, namespace: str) -> bool:
        """A key writes only where it also reads: a write answers with what it changed."""
        return self.readable(namespace) and (self.writes is None or namespace in self.writes)

    def binding(self, access: str) -> str:
        """Where the key may ``access`` ('read' or 'write'), in words for its refusals."""
        allowed = self.reads if access == "read" else _narrowest(self.reads, self.writes)
        return f"it may {access} only {_listed(allowed)}" if allowed is not None else f"it may {access} any namespace"


def _narrowest(reads: frozenset[str] | None, writes: frozenset[str] | None) -> frozenset[str] | None:
    if reads is None or writes is None:
        return writes if reads is None else reads
    return reads & writes


def _listed(namespaces: Iterable[str]) -> str:
    names = sorted(namespaces)
    return ", ".join(repr(n) for n in names) if names else "no namespace"


# The settings that bind each profile's key to namespaces: (reads, writes). The owner's
# key (chatbox) is never bound, and the guide dog touches no memory.
BINDINGS: dict[str, tuple[str, str]] = {
    "im": ("IM_API_NAMESPACES_READ", "IM_API_NAMESPACES_WRITE"),
    "debug": ("DEBUG_API_NAMESPACES_READ", "DEBUG_API_NAMESPACES_WRITE"),
    "mcp": ("MEMORY_MCP_NAMESPACES_READ", "MEMORY_MCP_NAMESPACES_WRITE"),
    OAUTH_TOKEN_PROFILE: ("OAUTH_NAMESPACES_READ", "OAUTH_NAMESPACES_WRITE"),
}


def principal_for(settings: Settings, profile: str, scopes: frozenset[str]) -> Principal:
    """The caller a key of ``profile`` stands for, with the namespaces it is bound to."""
    if profile not in BINDINGS:
        return Principal(profile, scopes)
    reads, writes = BINDINGS[profile]
    return Principal(profile, scopes, reads=getattr(settings, reads), writes=getattr(settings, writes))


# The nightly job, the queue consumer and the command line act for the owner.
SYSTEM = Principal("system", frozenset({CHAT, MEMORY_READ, MEMORY_WRITE, EXPORT, DEBUG, OWNER}))

# Whoever calls the OAuth endpoints: no key, and no rights beyond the protocol steps.
OAUTH_CALLER = Principal("oauth client", frozenset({OAUTH_CLIENT}))
