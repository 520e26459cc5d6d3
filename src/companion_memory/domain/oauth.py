"""The OAuth server's records, as the store hands them to ``oauth/``: plain dataclasses
whose fields are the columns of their tables (migrations/0012_oauth.sql, 0013), in order.
Secrets appear only as their digests (``*_hash``); times are ISO strings as stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ClientSource = Literal["registered", "metadata_document"]
TokenKind = Literal["access", "refresh"]


@dataclass(frozen=True, kw_only=True)
class OAuthClient:
    """A public client: registered (RFC 7591), or read from the metadata document its
    client_id names (``fetched_at`` is when)."""

    client_id: str
    source: ClientSource
    client_name: str
    client_uri: str | None
    redirect_uris: tuple[str, ...]
    # What a registration asked for; a metadata document's client asks per request.
    scope: str | None
    # A digest of the address it registered from, for the rate limit.
    registered_from: str | None
    created_at: str
    fetched_at: str | None = None


@dataclass(frozen=True, kw_only=True)
class PendingAuthorization:
    """An authorization request waiting for the owner's decision on the consent page."""

    id: str
    client_id: str
    redirect_uri: str
    scope: str
    state: str | None
    code_challenge: str
    resource: str
    csrf_hash: str
    created_at: str
    expires_at: str


@dataclass(frozen=True, kw_only=True)
class AuthorizationCode:
    """An approved request's code; ``grant_id`` is the grant its first use made."""

    code_hash: str
    client_id: str
    redirect_uri: str
    scope: str
    resource: str
    code_challenge: str
    created_at: str
    expires_at: str
    used_at: str | None = None
    grant_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class OAuthGrant:
    """What the owner approved for a client: every token descends from one grant."""

    id: str
    client_id: str
    scope: str
    resource: str
    created_at: str
    last_used_at: str | None = None


@dataclass(frozen=True, kw_only=True)
class GrantedToken:
    """An access or refresh token with what its grant says, whatever state either is in:
    ``scope`` is the token's own when it was narrowed, else its grant's."""

    token_hash: str
    grant_id: str
    kind: TokenKind
    expires_at: str
    used_at: str | None
    client_id: str
    scope: str
    resource: str
    last_used_at: str | None
    revoked_at: str | None


@dataclass(frozen=True, kw_only=True)
class LiveGrant:
    """A grant neither revoked nor run out, as the owner's list of connected apps shows
    it: with its client's name (None when the client is gone) and when its refresh token
    runs out."""

    id: str
    client_id: str
    client_name: str | None
    source: ClientSource | None
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    created_at: str
    last_used_at: str | None
    expires_at: str | None
