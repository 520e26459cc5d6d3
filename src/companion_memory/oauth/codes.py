"""Authorization requests and codes: a request is checked and kept for the owner's
decision on the consent page; an approval answers a single-use, short-lived code, bound
to the request's PKCE challenge (S256 only)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from ..clock import iso, parse_iso
from ..domain.addresses import public_host
from ..domain.endpoints import MCP_PATHS
from ..domain.oauth import AuthorizationCode, OAuthClient, PendingAuthorization
from ..errors import NotFound, OAuthError, PermissionDenied, RedirectableOAuthError
from ..ports import Clock
from ..store.oauth import OAuthStore
from .config import OAuthConfig
from .credentials import digest, new_secret
from .metadata_documents import MetadataDocuments
from .uris import displayable, resources, with_query

CODE_SECONDS = 120
REQUEST_MINUTES = 10
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def verifier_matches(verifier: str, challenge: str) -> bool:
    """Whether a PKCE ``verifier`` is the one the S256 ``challenge`` was made from."""
    return bool(_VERIFIER.fullmatch(verifier)) and hmac.compare_digest(s256(verifier), challenge)


class Authorization:
    def __init__(self, store: OAuthStore, clock: Clock, documents: MetadataDocuments, config: OAuthConfig) -> None:
        self.store = store
        self.clock = clock
        self.documents = documents
        self.config = config

    async def start(
        self, params: Mapping[str, str], repeated: Sequence[str], issuer: str, *, owner_configured: bool
    ) -> tuple[str, str]:
        """Checks an authorization request and keeps it for the owner's decision: answers
        the request's id and the consent cookie's value. A bad client or redirect URI is
        refused here (``OAuthError``: never redirected, so this endpoint cannot send a
        browser anywhere unregistered); anything else wrong goes back to the client
        (``RedirectableOAuthError``)."""
        client_id = params.get("client_id") or ""
        if not client_id:
            raise OAuthError("client_id is required", code="invalid_request")
        if "client_id" in repeated or "redirect_uri" in repeated:
            raise OAuthError("client_id and redirect_uri may appear only once", code="invalid_request")
        client = await self._client(client_id)
        redirect_uri = params.get("redirect_uri") or ""
        if not redirect_uri:
            raise OAuthError("redirect_uri is required", code="invalid_request")
        if redirect_uri not in client.redirect_uris:
            raise OAuthError("redirect_uri is not one this client registered (matched exactly)", code="invalid_request")
        state = params.get("state")

        def refuse(error: str, message: str) -> RedirectableOAuthError:
            answer = {"error": error, "error_description": message, "state": state, "iss": issuer}
            return RedirectableOAuthError(message, code=error, location=with_query(redirect_uri, answer))

        if repeated:
            raise refuse("invalid_request", f"parameters may appear only once: {', '.join(sorted(repeated))}")
        if params.get("response_type") != "code":
            raise refuse("unsupported_response_type", "response_type must be code")
        challenge = params.get("code_challenge") or ""
        method = params.get("code_challenge_method") or ""
        if not challenge:
            raise refuse("invalid_request", "code_challenge is required (PKCE)")
        if method != "S256":
            raise refuse("invalid_request", "code_challenge_method must be S256 (plain is not accepted)")
        if not _CHALLENGE.fullmatch(challenge):
            raise refuse("invalid_request", "code_challenge must be a base64url SHA-256 digest (43 characters)")
        try:
            scope = self.config.granted_scopes(params.get("scope"), error="invalid_scope")
        except OAuthError as error:
            raise refuse(error.code, error.message) from None
        resource = params.get("resource") or issuer + MCP_PATHS[0]
        if resource not in resources(issuer):
            raise refuse("invalid_target", f"this server grants access to {issuer}{MCP_PATHS[0]} only")
        if not owner_configured:
            raise refuse("temporarily_unavailable", "this server has no owner key (CHATBOX_API_KEY) to approve with")
        now = self.clock.now()
        request_id, csrf = secrets.token_urlsafe(24), secrets.token_urlsafe(32)
        request = PendingAuthorization(
            id=request_id,
            client_id=client_id,
            redirect_uri=redirect_uri,
            scope=" ".join(scope),
            state=state,
            code_challenge=challenge,
            resource=resource,
            csrf_hash=digest(csrf),
            created_at=iso(now),
            expires_at=iso(now + timedelta(minutes=REQUEST_MINUTES)),
        )
        await self.store.add_request(request, iso(now))
        return request_id, csrf

    async def pending(self, request_id: str) -> dict[str, Any]:
        """What the consent page shows: who asks, where the answer goes, for what."""
        request = await self._live_request(request_id)
        client = await self.store.client(request.client_id)
        return {
            "id": request_id,
            "client_id": request.client_id,
            "client_name": displayable(client.client_name if client else "") or "An unnamed app",
            "client_uri": client.client_uri if client else None,
            # A metadata document's host vouches for the name; a registration vouches for
            # nothing. Shown as it was fetched from (ASCII: an IDN as punycode).
            "verified_host": public_host(urlsplit(request.client_id).hostname or "")
            if client and client.source == "metadata_document"
            else None,
            "redirect_uri": request.redirect_uri,
            "scopes": request.scope.split(),
            "resource": request.resource,
            "expires_at": request.expires_at,
        }

    async def decide(self, request_id: str, approve: bool, issuer: str, *, csrf: str | None, origin: str | None) -> str:
        """The owner's answer: the URL to send the browser to, with a code or
        ``access_denied``. ``csrf`` is the consent cookie set when the request began,
        so only the browser that followed the client's link can answer it; a browser
        that names another ``origin`` is refused as well."""
        request = await self._live_request(request_id)
        if origin is not None and origin != issuer:
            raise PermissionDenied(f"a consent is answered from {issuer} only", code="csrf_failed")
        if not csrf or not hmac.compare_digest(digest(csrf), request.csrf_hash):
            raise PermissionDenied(
                "this consent was not started in this browser (missing or wrong consent cookie); "
                "start again from the app",
                code="csrf_failed",
            )
        if not await self.store.take_request(request_id):
            raise NotFound("this authorization request was already answered", code="request_not_found")
        answer: dict[str, str | None] = {"state": request.state, "iss": issuer}
        if not approve:
            error = {"error": "access_denied", "error_description": "the owner denied the request"}
            return with_query(request.redirect_uri, {**error, **answer})
        code = new_secret("cm_code_")
        now = self.clock.now()
        row = AuthorizationCode(
            code_hash=digest(code),
            client_id=request.client_id,
            redirect_uri=request.redirect_uri,
            scope=request.scope,
            resource=request.resource,
            code_challenge=request.code_challenge,
            created_at=iso(now),
            expires_at=iso(now + timedelta(seconds=CODE_SECONDS)),
        )
        await self.store.add_code(row, iso(now))
        return with_query(request.redirect_uri, {"code": code, **answer})

    async def _live_request(self, request_id: str) -> PendingAuthorization:
        request = await self.store.request(request_id)
        if request is None or parse_iso(request.expires_at) <= self.clock.now():
            raise NotFound("this authorization request expired or was already answered", code="request_not_found")
        return request

    async def _client(self, client_id: str) -> OAuthClient:
        if client_id.startswith("https://"):
            return await self.documents.client(client_id)
        client = await self.store.client(client_id)
        if client is None:
            raise OAuthError("unknown client_id: register first", code="invalid_client", status=401)
        return client
