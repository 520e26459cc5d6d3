"""The OAuth 2.1 authorization server of ``/mcp``, as the MCP authorization specification
describes it: clients register (RFC 7591) or name a Client ID Metadata Document, the owner
approves each authorization request on the panel's consent page, the client redeems a
single-use, short-lived code with its PKCE verifier (S256 only) for an access token and
a refresh token bound to this server's MCP endpoint (RFC 8707).

Tokens are opaque random strings; only their SHA-256 digests are stored. A refresh token
is used once: each use answers a new pair, and a second use of the same one revokes the
whole grant (every token that descends from the approval), as does a second use of a
code. Every failure is an ``OAuthError`` carrying its OAuth ``error`` value.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

from ..clock import iso, parse_iso
from ..domain.addresses import client_key, public_host, public_https_url
from ..domain.endpoints import MCP_PATHS
from ..errors import NotFound, OAuthError, PermissionDenied, RedirectableOAuthError
from ..ports import Clock, Database, HttpClient, HttpUnanswered
from ..store.oauth import OAuthStore

CODE_SECONDS = 120
REQUEST_MINUTES = 10
# A registration that nothing was granted to is forgotten after a day.
UNUSED_CLIENT_HOURS = 24
# A revoked grant is kept this long (the owner's list no longer shows it), then forgotten.
REVOKED_GRANT_DAYS = 30
# Registrations from everyone together may reach this many times the per-address limit.
REGISTRATION_CEILING = 10
METADATA_DOCUMENT_MAX_BYTES = 5 * 1024
METADATA_DOCUMENT_FRESH = timedelta(hours=1)
METADATA_DOCUMENT_TIMEOUT_SECONDS = 5.0
# Redirects followed to a metadata document, each to an address checked like the first.
METADATA_DOCUMENT_REDIRECTS = 2
# A document that could not be read is not asked for again before this.
METADATA_DOCUMENT_RETRY = timedelta(minutes=5)
# Every way a read can fail says the same, so the answer tells nothing about what is at
# the address (a closed port, an open one, a private address never tried).
METADATA_DOCUMENT_UNREADABLE = (
    "the client's metadata document could not be read: it must be at an https URL on a public host "
    f"that answers 200 within {METADATA_DOCUMENT_TIMEOUT_SECONDS:g} seconds with at most "
    f"{METADATA_DOCUMENT_MAX_BYTES} bytes (redirects: at most {METADATA_DOCUMENT_REDIRECTS})"
)
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Granted always (refresh tokens are always issued): a client that asks for it is not refused.
OFFLINE_ACCESS = "offline_access"
FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "vbscript", "file", "about", "blob"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")
_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Shown to the owner as text: no control or format characters (bidi overrides and
# isolates, zero-width spaces and joiners), which could make it read as something else.
_HIDDEN = frozenset({"Cc", "Cf"})


@dataclass(frozen=True)
class OAuthConfig:
    scopes: tuple[str, ...]
    access_token_minutes: int
    refresh_token_days: int
    registrations_per_hour: int


@dataclass(frozen=True)
class TokenOwner:
    """What an access token lets its bearer do, and for whom it was granted."""

    grant_id: str
    client_id: str
    scopes: frozenset[str]


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def resources(issuer: str) -> frozenset[str]:
    """The resource indicators that name this server's MCP endpoint: the endpoint itself
    (either path), or the whole server."""
    return frozenset({issuer, issuer + "/", *(issuer + path for path in MCP_PATHS)})


def redirect_uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None: an absolute URI without a fragment,
    https, http to this machine only (RFC 8252's loopback redirect), or an app's own scheme."""
    if not uri or len(uri) > 2000 or _CONTROL.search(uri) or " " in uri:
        return "must be an absolute URI of at most 2000 characters"
    try:
        parts = urlsplit(uri)
        host = parts.hostname
    except ValueError:
        return "is not a valid URI"
    scheme = parts.scheme.lower()
    if not scheme or not (parts.netloc or parts.path):
        return "must be an absolute URI"
    if "#" in uri:
        return "must not contain a fragment"
    if _hides_characters(uri):
        return "must not contain invisible or bidirectional formatting characters"
    if scheme in FORBIDDEN_SCHEMES:
        return f"must not use the {scheme}: scheme"
    if scheme in ("http", "https") and not host:
        return "must name a host"
    if scheme == "http" and host not in LOOPBACK_HOSTS:
        return "may use http only for localhost, 127.0.0.1 or [::1]; use https"
    return None


def with_query(uri: str, params: Mapping[str, str | None]) -> str:
    """``uri`` with ``params`` added to the query it already has (RFC 6749 §3.1.2)."""
    extra = urlencode({k: v for k, v in params.items() if v is not None})
    return uri + ("&" if "?" in uri else "?") + extra


def metadata_document_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a Client ID Metadata Document's client_id, or None: https,
    a path, no fragment, credentials or dot segments. Whether its host is public is
    checked as it is fetched, hop by hop, and answered like any other failed read."""
    if len(url) > 2000 or _hides_characters(url):
        return "is too long or contains control or invisible characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return "is not a valid URL"
    if parts.scheme != "https" or not host:
        return "must be an https URL"
    if parts.path in ("", "/") or parts.fragment or "#" in url or "@" in parts.netloc:
        return "must have a path, and no fragment or credentials"
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return "must not contain dot segments"
    return None


def displayable(text: str, limit: int = 200) -> str:
    """``text`` as the owner may be shown it: without control and format characters,
    trimmed, at most ``limit`` characters."""
    return "".join(c for c in text if unicodedata.category(c) not in _HIDDEN).strip()[:limit]


def _hides_characters(text: str) -> bool:
    return any(unicodedata.category(c) in _HIDDEN for c in text)


class AuthorizationServer:
    def __init__(self, db: Database, clock: Clock, http: HttpClient, config: OAuthConfig) -> None:
        self.store = OAuthStore(db)
        self.clock = clock
        self.http = http
        self.config = config

    # ------------------------------------------------------------------ registration (RFC 7591)

    async def register(self, metadata: Mapping[str, Any], address: str) -> dict[str, Any]:
        """Registers a public client (no secret: PKCE is its proof) and answers its
        information. ``address`` is where the request came from, for the rate limit."""
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
        scope = self._scopes(metadata.get("scope"), error="invalid_client_metadata")
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
        client = {
            "client_id": str(uuid.uuid4()),
            "source": "registered",
            "client_name": name,
            "client_uri": _http_url(metadata.get("client_uri")),
            "redirect_uris": list(redirect_uris),
            "scope": " ".join(scope),
            "registered_from": source,
            "created_at": iso(now),
        }
        await self.store.save_client(client)
        answer = {
            "client_id": client["client_id"],
            "client_id_issued_at": int(now.timestamp()),
            "client_name": name,
            "redirect_uris": client["redirect_uris"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "scope": client["scope"],
        }
        if client["client_uri"]:
            answer["client_uri"] = client["client_uri"]
        return answer

    # ------------------------------------------------------------------ authorization

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
        if redirect_uri not in client["redirect_uris"]:
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
            scope = self._scopes(params.get("scope"), error="invalid_scope")
        except OAuthError as error:
            raise refuse(error.code, error.message) from None
        resource = params.get("resource") or issuer + MCP_PATHS[0]
        if resource not in resources(issuer):
            raise refuse("invalid_target", f"this server grants access to {issuer}{MCP_PATHS[0]} only")
        if not owner_configured:
            raise refuse("temporarily_unavailable", "this server has no owner key (CHATBOX_API_KEY) to approve with")
        now = self.clock.now()
        request_id, csrf = secrets.token_urlsafe(24), secrets.token_urlsafe(32)
        request = {
            "id": request_id,
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(scope),
            "state": state,
            "code_challenge": challenge,
            "resource": resource,
            "csrf_hash": digest(csrf),
            "created_at": iso(now),
            "expires_at": iso(now + timedelta(minutes=REQUEST_MINUTES)),
        }
        await self.store.add_request(request, iso(now))
        return request_id, csrf

    async def pending(self, request_id: str) -> dict[str, Any]:
        """What the consent page shows: who asks, where the answer goes, for what."""
        request = await self._live_request(request_id)
        client = await self.store.client(request["client_id"]) or {}
        source = client.get("source", "registered")
        return {
            "id": request_id,
            "client_id": request["client_id"],
            "client_name": displayable(client.get("client_name") or "") or "An unnamed app",
            "client_uri": client.get("client_uri"),
            # A metadata document's host vouches for the name; a registration vouches for
            # nothing. Shown as it was fetched from (ASCII: an IDN as punycode).
            "verified_host": public_host(urlsplit(request["client_id"]).hostname or "")
            if source == "metadata_document"
            else None,
            "redirect_uri": request["redirect_uri"],
            "scopes": request["scope"].split(),
            "resource": request["resource"],
            "expires_at": request["expires_at"],
        }

    async def decide(self, request_id: str, approve: bool, issuer: str, *, csrf: str | None, origin: str | None) -> str:
        """The owner's answer: the URL to send the browser to, with a code or
        ``access_denied``. ``csrf`` is the consent cookie set when the request began,
        so only the browser that followed the client's link can answer it; a browser
        that names another ``origin`` is refused as well."""
        request = await self._live_request(request_id)
        if origin is not None and origin != issuer:
            raise PermissionDenied(f"a consent is answered from {issuer} only", code="csrf_failed")
        if not csrf or not hmac.compare_digest(digest(csrf), request["csrf_hash"]):
            raise PermissionDenied(
                "this consent was not started in this browser (missing or wrong consent cookie); "
                "start again from the app",
                code="csrf_failed",
            )
        if not await self.store.take_request(request_id):
            raise NotFound("this authorization request was already answered", code="request_not_found")
        answer: dict[str, str | None] = {"state": request["state"], "iss": issuer}
        if not approve:
            error = {"error": "access_denied", "error_description": "the owner denied the request"}
            return with_query(request["redirect_uri"], {**error, **answer})
        code = "cm_code_" + secrets.token_urlsafe(32)
        now = self.clock.now()
        row = {
            "code_hash": digest(code),
            "client_id": request["client_id"],
            "redirect_uri": request["redirect_uri"],
            "scope": request["scope"],
            "resource": request["resource"],
            "code_challenge": request["code_challenge"],
            "created_at": iso(now),
            "expires_at": iso(now + timedelta(seconds=CODE_SECONDS)),
        }
        await self.store.add_code(row, iso(now))
        return with_query(request["redirect_uri"], {"code": code, **answer})

    # ------------------------------------------------------------------ the token endpoint

    async def exchange_code(self, params: Mapping[str, str], issuer: str) -> dict[str, Any]:
        client_id = await self._token_client(params)
        code = params.get("code") or ""
        verifier = params.get("code_verifier") or ""
        if not code:
            raise OAuthError("code is required", code="invalid_request")
        if not verifier:
            raise OAuthError("code_verifier is required (PKCE)", code="invalid_request")
        row = await self.store.code(digest(code))
        if row is None or row["client_id"] != client_id:
            raise OAuthError("unknown authorization code", code="invalid_grant")
        now = self.clock.now()
        if row["used_at"]:
            await self._revoke_lineage(row["grant_id"], "authorization code reused")
            raise OAuthError("the authorization code was already used; its tokens are revoked", code="invalid_grant")
        if parse_iso(row["expires_at"]) <= now:
            raise OAuthError("the authorization code expired", code="invalid_grant")
        if params.get("redirect_uri") != row["redirect_uri"]:
            raise OAuthError("redirect_uri differs from the authorization request's", code="invalid_grant")
        if not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(s256(verifier), row["code_challenge"]):
            raise OAuthError("code_verifier does not match the code_challenge", code="invalid_grant")
        resource = params.get("resource")
        if resource and resource != row["resource"]:
            raise OAuthError("resource differs from the one authorized", code="invalid_target")
        grant_id = str(uuid.uuid4())
        await self.store.forget_revoked_grants(iso(now - timedelta(days=REVOKED_GRANT_DAYS)))
        if not await self.store.use_code(row["code_hash"], grant_id, iso(now)):
            raise OAuthError("the authorization code was already used", code="invalid_grant")
        grant = {
            "id": grant_id,
            "client_id": client_id,
            "scope": row["scope"],
            "resource": row["resource"],
            "created_at": iso(now),
            "last_used_at": None,
        }
        return await self._issue(grant_id, row["scope"], [OAuthStore.add_grant(grant)])

    async def refresh(self, params: Mapping[str, str]) -> dict[str, Any]:
        client_id = await self._token_client(params)
        token = params.get("refresh_token") or ""
        if not token:
            raise OAuthError("refresh_token is required", code="invalid_request")
        row = await self.store.token(digest(token))
        if row is None or row["kind"] != "refresh" or row["client_id"] != client_id or row["revoked_at"]:
            raise OAuthError("unknown or revoked refresh token", code="invalid_grant")
        now = self.clock.now()
        if row["used_at"]:
            await self._revoke_lineage(row["grant_id"], "refresh token reused")
            raise OAuthError(
                "the refresh token was already used; every token of this grant is revoked", code="invalid_grant"
            )
        if parse_iso(row["expires_at"]) <= now:
            raise OAuthError("the refresh token expired", code="invalid_grant")
        resource = params.get("resource")
        if resource and resource != row["resource"]:
            raise OAuthError("resource differs from the one authorized", code="invalid_target")
        granted = row["scope"]
        # RFC 6749 §6: a narrower scope for this access token only; the new refresh token
        # keeps the grant's, so a later refresh may ask for all of it again.
        access_scope = None
        if any(s != OFFLINE_ACCESS for s in (params.get("scope") or "").split()):
            asked = self._scopes(params["scope"], error="invalid_scope")
            if not set(asked) <= set(granted.split()):
                raise OAuthError("a refresh cannot widen the scope granted", code="invalid_scope")
            access_scope = " ".join(asked) if set(asked) != set(granted.split()) else None
        if not await self.store.use_refresh_token(row["token_hash"], iso(now)):
            await self._revoke_lineage(row["grant_id"], "refresh token reused")
            raise OAuthError(
                "the refresh token was already used; every token of this grant is revoked", code="invalid_grant"
            )
        return await self._issue(
            row["grant_id"],
            granted,
            [OAuthStore.drop_expired_tokens(row["grant_id"], iso(now))],
            access_scope=access_scope,
        )

    async def revoke(self, token: str, client_id: str | None) -> None:
        """RFC 7009: a refresh token takes its whole grant with it, an access token only
        itself. An unknown token, or one another client holds, changes nothing."""
        row = await self.store.token(digest(token))
        if row is None or (client_id and client_id != row["client_id"]):
            return
        if row["kind"] == "refresh":
            await self.store.revoke_grant(row["grant_id"], "revoked by the client", iso(self.clock.now()))
        else:
            await self.store.delete_token(row["token_hash"])

    # ------------------------------------------------------------------ the resource side

    async def authenticate(self, token: str, issuer: str) -> TokenOwner:
        """The grant behind an access token presented to the MCP endpoint; ``OAuthError``
        ``invalid_token`` (401) when it is unknown, expired, revoked or for another resource."""
        row = await self.store.token(digest(token))
        if row is None or row["kind"] != "access" or row["revoked_at"]:
            raise OAuthError("unknown or revoked access token", code="invalid_token", status=401)
        now = self.clock.now()
        if parse_iso(row["expires_at"]) <= now:
            raise OAuthError("the access token expired", code="invalid_token", status=401)
        if row["resource"] not in resources(issuer):
            raise OAuthError("the access token was issued for another resource", code="invalid_token", status=401)
        # Last use is for the owner's list of connected apps: a minute is precise enough,
        # and spares a write on every call.
        if not row["last_used_at"] or parse_iso(row["last_used_at"]) < now - timedelta(minutes=1):
            await self.store.touch_grant(row["grant_id"], iso(now))
        return TokenOwner(row["grant_id"], row["client_id"], frozenset(row["scope"].split()))

    # ------------------------------------------------------------------ the owner's view

    async def grants(self) -> list[dict[str, Any]]:
        rows = await self.store.live_grants(iso(self.clock.now()))
        for row in rows:
            row["scopes"] = row.pop("scope").split()
            row["redirect_uris"] = json.loads(row["redirect_uris"] or "[]")
            row["client_name"] = displayable(row["client_name"] or "") or "An unnamed app"
        return rows

    async def revoke_grant(self, grant_id: str) -> None:
        if not await self.store.revoke_grant(grant_id, "revoked by the owner", iso(self.clock.now())):
            raise NotFound(f"no connected app with grant {grant_id}")

    # ------------------------------------------------------------------ helpers

    def _scopes(self, requested: str | None, *, error: str) -> list[str]:
        asked = [s for s in (requested or "").split() if s != OFFLINE_ACCESS]
        unknown = [s for s in asked if s not in self.config.scopes]
        if unknown:
            raise OAuthError(
                f"unknown scope {unknown[0][:100]!r}; this server grants {' '.join(self.config.scopes)}", code=error
            )
        return [s for s in self.config.scopes if s in asked] if asked else list(self.config.scopes)

    async def _live_request(self, request_id: str) -> dict[str, Any]:
        request = await self.store.request(request_id)
        if request is None or parse_iso(request["expires_at"]) <= self.clock.now():
            raise NotFound("this authorization request expired or was already answered", code="request_not_found")
        return request

    async def _token_client(self, params: Mapping[str, str]) -> str:
        client_id = params.get("client_id") or ""
        if not client_id:
            raise OAuthError("client_id is required", code="invalid_request")
        if await self.store.client(client_id) is None:
            raise OAuthError("unknown client", code="invalid_client", status=401)
        return client_id

    async def _issue(
        self, grant_id: str, scope: str, first: list[Any], *, access_scope: str | None = None
    ) -> dict[str, Any]:
        """A new access and refresh token of the grant (whose scope is ``scope``); the
        access token for ``access_scope`` only, when given."""
        now = self.clock.now()
        access, refresh = "cm_at_" + secrets.token_urlsafe(32), "cm_rt_" + secrets.token_urlsafe(32)
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

    async def _client(self, client_id: str) -> dict[str, Any]:
        if client_id.startswith("https://"):
            return await self._metadata_document_client(client_id)
        client = await self.store.client(client_id)
        if client is None:
            raise OAuthError("unknown client_id: register first", code="invalid_client", status=401)
        return client

    async def _metadata_document_client(self, url: str) -> dict[str, Any]:
        """A client whose client_id is the URL of its metadata document: read from there
        (at most hourly), checked, and kept like a registration. A document that could
        not be read is not asked for again for a few minutes."""
        now = self.clock.now()
        cached = await self.store.client(url)
        if cached and cached["fetched_at"] and parse_iso(cached["fetched_at"]) > now - METADATA_DOCUMENT_FRESH:
            return cached
        problem = metadata_document_url_problem(url)
        if problem:
            raise OAuthError(f"a client_id URL {problem}", code="invalid_client", status=401)
        failed = await self.store.document_failure(url, iso(now - METADATA_DOCUMENT_RETRY))
        if failed is not None:
            raise OAuthError(failed, code="invalid_client", status=401)
        try:
            document = _metadata_document(url, await self._read_metadata_document(url))
        except OAuthError as error:
            forget = iso(now - METADATA_DOCUMENT_RETRY)
            await self.store.remember_document_failure(url, error.message, iso(now), forget_before=forget)
            raise
        client = {
            "client_id": url,
            "source": "metadata_document",
            "client_name": displayable(str(document.get("client_name") or ""))
            or public_host(urlsplit(url).hostname or "")
            or url,
            "client_uri": _http_url(document.get("client_uri")),
            "redirect_uris": document["redirect_uris"],
            "scope": None,
            "registered_from": None,
            "created_at": cached["created_at"] if cached else iso(now),
            "fetched_at": iso(now),
        }
        await self.store.save_client(client)
        return client

    async def _read_metadata_document(self, url: str) -> bytes:
        """The document's bytes, following at most a few redirects; every address, the
        first and each one redirected to, must be a public host's. Any failure is the
        one ``METADATA_DOCUMENT_UNREADABLE``."""
        unreadable = OAuthError(METADATA_DOCUMENT_UNREADABLE, code="invalid_client", status=401)
        target = public_https_url(url)
        for _ in range(METADATA_DOCUMENT_REDIRECTS + 1):
            if target is None:
                raise unreadable
            try:
                response = await self.http.get(
                    target,
                    headers={"Accept": "application/json"},
                    timeout_seconds=METADATA_DOCUMENT_TIMEOUT_SECONDS,
                    max_bytes=METADATA_DOCUMENT_MAX_BYTES,
                )
            except HttpUnanswered:
                raise unreadable from None
            location = response.headers.get("location")
            if response.status not in REDIRECT_STATUSES or not location:
                if response.status != 200:
                    raise unreadable
                return response.body
            target = public_https_url(urljoin(target, location))
        raise unreadable


def _metadata_document(url: str, body: bytes) -> dict[str, Any]:
    def refuse(why: str) -> OAuthError:
        return OAuthError(f"the client's metadata document {why}", code="invalid_client", status=401)

    try:
        document = json.loads(body)
    except ValueError:
        raise refuse("is not JSON") from None
    if not isinstance(document, dict):
        raise refuse("is not a JSON object")
    if document.get("client_id") != url:
        raise refuse("names another client_id")
    if "client_secret" in document or document.get("token_endpoint_auth_method", "none") != "none":
        raise refuse("asks for client authentication; only public clients (none) are served")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise refuse("has no redirect_uris")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise refuse(f"lists a redirect URI that {problem}")
    return document


def _http_url(value: Any) -> str | None:
    """A homepage to show, if it is a plain http(s) URL."""
    if isinstance(value, str) and len(value) <= 2000 and value.startswith(("https://", "http://")):
        return value if not _CONTROL.search(value) and not _hides_characters(value) else None
    return None
