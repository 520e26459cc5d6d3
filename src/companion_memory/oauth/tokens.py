"""The token endpoint and the tokens it issues: a code and its PKCE verifier, or a
refresh token, for a new access token and refresh token bound to this server's MCP
endpoint (RFC 8707). A refresh token is used once: a second use of it, or of a code,
revokes the whole grant (every token that descends from the approval)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from ..clock import iso, parse_iso
from ..domain.oauth import OAuthGrant
from ..errors import OAuthError
from ..ports import Clock, Statement
from ..store.oauth import OAuthStore
from .codes import verifier_matches
from .config import OFFLINE_ACCESS, OAuthConfig
from .credentials import digest, new_secret
from .uris import resources

# A revoked grant is kept this long (the owner's list no longer shows it), then forgotten.
REVOKED_GRANT_DAYS = 30


@dataclass(frozen=True)
class TokenOwner:
    """What an access token lets its bearer do, and for whom it was granted."""

    grant_id: str
    client_id: str
    scopes: frozenset[str]


class Tokens:
    def __init__(self, store: OAuthStore, clock: Clock, config: OAuthConfig) -> None:
        self.store = store
        self.clock = clock
        self.config = config

    async def exchange_code(self, params: Mapping[str, str], issuer: str) -> dict[str, str | int]:
        client_id = await self._token_client(params)
        code = params.get("code") or ""
        verifier = params.get("code_verifier") or ""
        if not code:
            raise OAuthError("code is required", code="invalid_request")
        if not verifier:
            raise OAuthError("code_verifier is required (PKCE)", code="invalid_request")
        row = await self.store.code(digest(code))
        if row is None or row.client_id != client_id:
            raise OAuthError("unknown authorization code", code="invalid_grant")
        now = self.clock.now()
        if row.used_at:
            await self._revoke_lineage(row.grant_id, "authorization code reused")
            raise OAuthError("the authorization code was already used; its tokens are revoked", code="invalid_grant")
        if parse_iso(row.expires_at) <= now:
            raise OAuthError("the authorization code expired", code="invalid_grant")
        if params.get("redirect_uri") != row.redirect_uri:
            raise OAuthError("redirect_uri differs from the authorization request's", code="invalid_grant")
        if not verifier_matches(verifier, row.code_challenge):
            raise OAuthError("code_verifier does not match the code_challenge", code="invalid_grant")
        resource = params.get("resource")
        if resource and resource != row.resource:
            raise OAuthError("resource differs from the one authorized", code="invalid_target")
        grant_id = str(uuid.uuid4())
        await self.store.forget_revoked_grants(iso(now - timedelta(days=REVOKED_GRANT_DAYS)))
        if not await self.store.use_code(row.code_hash, grant_id, iso(now)):
            raise OAuthError("the authorization code was already used", code="invalid_grant")
        grant = OAuthGrant(
            id=grant_id, client_id=client_id, scope=row.scope, resource=row.resource, created_at=iso(now)
        )
        return await self._issue(grant_id, row.scope, [OAuthStore.add_grant(grant)])

    async def refresh(self, params: Mapping[str, str]) -> dict[str, str | int]:
        client_id = await self._token_client(params)
        token = params.get("refresh_token") or ""
        if not token:
            raise OAuthError("refresh_token is required", code="invalid_request")
        row = await self.store.token(digest(token))
        if row is None or row.kind != "refresh" or row.client_id != client_id or row.revoked_at:
            raise OAuthError("unknown or revoked refresh token", code="invalid_grant")
        now = self.clock.now()
        if row.used_at:
            await self._revoke_lineage(row.grant_id, "refresh token reused")
            raise OAuthError(
                "the refresh token was already used; every token of this grant is revoked", code="invalid_grant"
            )
        if parse_iso(row.expires_at) <= now:
            raise OAuthError("the refresh token expired", code="invalid_grant")
        resource = params.get("resource")
        if resource and resource != row.resource:
            raise OAuthError("resource differs from the one authorized", code="invalid_target")
        granted = row.scope
        # RFC 6749 §6: a narrower scope for this access token only; the new refresh token
        # keeps the grant's, so a later refresh may ask for all of it again.
        access_scope = None
        if any(s != OFFLINE_ACCESS for s in (params.get("scope") or "").split()):
            asked = self.config.granted_scopes(params["scope"], error="invalid_scope")
            if not set(asked) <= set(granted.split()):
                raise OAuthError("a refresh cannot widen the scope granted", code="invalid_scope")
            access_scope = " ".join(asked) if set(asked) != set(granted.split()) else None
        if not await self.store.use_refresh_token(row.token_hash, iso(now)):
            await self._revoke_lineage(row.grant_id, "refresh token reused")
            raise OAuthError(
                "the refresh token was already used; every token of this grant is revoked", code="invalid_grant"
            )
        return await self._issue(
            row.grant_id,
            granted,
            [OAuthStore.drop_expired_tokens(row.grant_id, iso(now))],
            access_scope=access_scope,
        )

    async def revoke(self, token: str, client_id: str | None) -> None:
        """RFC 7009: a refresh token takes its whole grant with it, an access token only
        itself. An unknown token, or one another client holds, changes nothing."""
        row = await self.store.token(digest(token))
        if row is None or (client_id and client_id != row.client_id):
            return
        if row.kind == "refresh":
            await self.store.revoke_grant(row.grant_id, "revoked by the client", iso(self.clock.now()))
        else:
            await self.store.delete_token(row.token_hash)

    async def authenticate(self, token: str, issuer: str) -> TokenOwner:
        """The grant behind an access token presented to the MCP endpoint; ``OAuthError``
        ``invalid_token`` (401) when it is unknown, expired, revoked or for another resource."""
        row = await self.store.token(digest(token))
        if row is None or row.kind != "access" or row.revoked_at:
            raise OAuthError("unknown or revoked access token", code="invalid_token", status=401)
        now = self.clock.now()
        if parse_iso(row.expires_at) <= now:
            raise OAuthError("the access token expired", code="invalid_token", status=401)
        if row.resource not in resources(issuer):
            raise OAuthError("the access token was issued for another resource", code="invalid_token", status=401)
        # Last use is for the owner's list of connected apps: a minute is precise enough,
        # and spares a write on every call.
        if not row.last_used_at or parse_iso(row.last_used_at) < now - timedelta(minutes=1):
            await self.store.touch_grant(row.grant_id, iso(now))
        return TokenOwner(row.grant_id, row.client_id, frozenset(row.scope.split()))

    async def _token_client(self, params: Mapping[str, str]) -> str:
        client_id = params.get("client_id") or ""
        if not client_id:
            raise OAuthError("client_id is required", code="invalid_request")
        if await self.store.client(client_id) is None:
            raise OAuthError("unknown client", code="invalid_client", status=401)
        return client_id

    async def _issue(
        self, grant_id: str, scope: str, first: list[Statement], *, access_scope: str | None = None
    ) -> dict[str, str | int]:
        """A new access and refresh token of the grant (whose scope is ``scope``); the
        access token for ``access_scope`` only, when given."""
        now = self.clock.now()
        access, refresh = new_secret("cm_at_"), new_secret("cm_rt_")
        access_for = timedelta(minutes=self.config.access_token_minutes)
        refresh_until = iso(now + timedelta(days=self.config.refresh_token_days))
        access_until = iso(now + access_for)
        await self.store.issue(
            [
                *first,
                OAuthStore.add_token(digest(access), grant_id, "access", iso(now), access_until, access_scope),
                OAuthStore.add_token(digest(refresh), grant_id, "refresh", iso(now), refresh_until),
            ]
        )
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(access_for.total_seconds()),
            "refresh_token": refresh,
            "scope": access_scope or scope,
        }

    async def _revoke_lineage(self, grant_id: str | None, reason: str) -> None:
        if grant_id:
            await self.store.revoke_grant(grant_id, reason, iso(self.clock.now()))
