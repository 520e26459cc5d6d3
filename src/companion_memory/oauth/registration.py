"""Dynamic client registration (RFC 7591): public clients only (no secret: PKCE is their
proof), rate-limited per address and for everyone together."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ..clock import iso
from ..domain.addresses import client_key
from ..domain.oauth import OAuthClient
from ..errors import OAuthError
from ..ports import Clock
from ..store.oauth import OAuthStore
from .config import OAuthConfig
from .credentials import digest
from .uris import displayable, http_url, redirect_uri_problem

# A registration that nothing was granted to is forgotten after a day.
UNUSED_CLIENT_HOURS = 24
# Registrations from everyone together may reach this many times the per-address limit.
REGISTRATION_CEILING = 10


class Registration:
    def __init__(self, store: OAuthStore, clock: Clock, config: OAuthConfig) -> None:
        self.store = store
        self.clock = clock
        self.config = config

    async def register(self, metadata: Mapping[str, Any], address: str) -> dict[str, Any]:
        """Registers a public client and answers its information (RFC 7591 §3.2.1).
        ``address`` is where the request came from, for the rate limit."""
        redirect_uris = metadata.get("redirect_uris") or []
        if not redirect_uris:
            raise OAuthError("redirect_uris is required: at least one redirect URI", code="invalid_redirect_uri")
        for uri in redirect_uris:
            problem = redirect_uri_problem(uri)
            if problem:
                raise OAuthError(f"redirect URI {uri[:200]!r} {problem}", code="invalid_redirect_uri")
        grant_types = metadata.get("grant_types") or ["authorization_code", "refresh_token"]
        if "authorization_code" not in grant_types:
            raise OAuthError("grant_types must include authorization_code", code="invalid_client_metadata")
        if "code" not in (metadata.get("response_types") or ["code"]):
            raise OAuthError("response_types must include code", code="invalid_client_metadata")
        scope = self.config.granted_scopes(metadata.get("scope"), error="invalid_client_metadata")
        now = self.clock.now()
        since = iso(now - timedelta(hours=1))
        source = digest(client_key(address))[:32]
        everyone, mine = await self.store.registrations_since(since, source)
        limit = self.config.registrations_per_hour
        if mine >= limit or everyone >= limit * REGISTRATION_CEILING:
            raise OAuthError(
                "too many registrations; try again within the hour", code="temporarily_unavailable", status=429
            )
        await self.store.forget_unused_clients(iso(now - timedelta(hours=UNUSED_CLIENT_HOURS)))
        name = displayable(str(metadata.get("client_name") or "")) or "An unnamed app"
        client = OAuthClient(
            client_id=str(uuid.uuid4()),
            source="registered",
            client_name=name,
            client_uri=http_url(metadata.get("client_uri")),
            redirect_uris=tuple(redirect_uris),
            scope=" ".join(scope),
            registered_from=source,
            created_at=iso(now),
        )
        await self.store.save_client(client)
        answer: dict[str, Any] = {
            "client_id": client.client_id,
            "client_id_issued_at": int(now.timestamp()),
            "client_name": name,
            "redirect_uris": list(client.redirect_uris),
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "scope": client.scope,
        }
        if client.client_uri:
            answer["client_uri"] = client.client_uri
        return answer
