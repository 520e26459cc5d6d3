"""What a client may name: redirect URIs, a metadata document's URL, the resource it
asks for, and the name and homepage the owner is shown of it."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from ..domain.endpoints import MCP_PATHS

FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "vbscript", "file", "about", "blob"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Shown to the owner as text: no control or format characters (bidi overrides and
# isolates, zero-width spaces and joiners), which could make it read as something else.
_HIDDEN = frozenset({"Cc", "Cf"})


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


def http_url(value: Any) -> str | None:
    """A homepage to show, if it is a plain http(s) URL."""
    if isinstance(value, str) and len(value) <= 2000 and value.startswith(("https://", "http://")):
        return value if not _CONTROL.search(value) and not _hides_characters(value) else None
    return None


def _hides_characters(text: str) -> bool:
    return any(unicodedata.category(c) in _HIDDEN for c in text)
