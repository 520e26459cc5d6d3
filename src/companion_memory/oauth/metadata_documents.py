"""Clients whose client_id is the https URL of their Client ID Metadata Document: the
document is read from there (at most hourly, every hop to a public host only), checked,
and kept like a registration."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..clock import iso, parse_iso
from ..domain.addresses import public_host, public_https_url
from ..domain.oauth import OAuthClient
from ..errors import OAuthError
from ..ports import Clock, HttpClient, HttpUnanswered
from ..store.oauth import OAuthStore
from .uris import displayable, http_url, metadata_document_url_problem, redirect_uri_problem

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


class MetadataDocuments:
    def __init__(self, store: OAuthStore, clock: Clock, http: HttpClient) -> None:
        self.store = store
        self.clock = clock
        self.http = http

    async def client(self, url: str) -> OAuthClient:
        """The client named by the document at ``url``. A document that could not be
        read is not asked for again for a few minutes."""
        now = self.clock.now()
        cached = await self.store.client(url)
        if cached and cached.fetched_at and parse_iso(cached.fetched_at) > now - METADATA_DOCUMENT_FRESH:
            return cached
        problem = metadata_document_url_problem(url)
        if problem:
            raise OAuthError(f"a client_id URL {problem}", code="invalid_client", status=401)
        failed = await self.store.document_failure(url, iso(now - METADATA_DOCUMENT_RETRY))
        if failed is not None:
            raise OAuthError(failed, code="invalid_client", status=401)
        try:
            document = _checked_document(url, await self._read(url))
        except OAuthError as error:
            forget = iso(now - METADATA_DOCUMENT_RETRY)
            await self.store.remember_document_failure(url, error.message, iso(now), forget_before=forget)
            raise
        client = OAuthClient(
            client_id=url,
            source="metadata_document",
            client_name=displayable(str(document.get("client_name") or ""))
            or public_host(urlsplit(url).hostname or "")
            or url,
            client_uri=http_url(document.get("client_uri")),
            redirect_uris=tuple(document["redirect_uris"]),
            scope=None,
            registered_from=None,
            created_at=cached.created_at if cached else iso(now),
            fetched_at=iso(now),
        )
        await self.store.save_client(client)
        return client

    async def _read(self, url: str) -> bytes:
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


def _checked_document(url: str, body: bytes) -> dict[str, Any]:
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
