"""The two protocol eras: their version ladders, the HTTP status each gives an error, and
the checks 2026-07-28 makes of every request (``params._meta`` and the routing headers,
``Mcp-Name`` in its ``=?base64?…?=`` form included)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from typing import Any

from .jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    RpcError,
)

# A request's header fields as (name, value) pairs, in order, repeats kept.
Headers = Sequence[tuple[str, str]]

# Protocol revisions, oldest first.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
# What a handshake-era request without MCP-Protocol-Version is taken to be (2025-06-18+).
DEFAULT_HANDSHAKE = "2025-03-26"
# JSON-RPC batches: added in 2025-03-26, removed in 2025-06-18.
BATCH_VERSIONS = frozenset({"2025-03-26"})
SUPPORTED_VERSIONS = [*reversed(MODERN_VERSIONS), *reversed(HANDSHAKE_VERSIONS)]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

# 2026-07-28: the HTTP status for an error code (others go out as 200).
MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# Handshake era: the transport's own failures are 400; answers to requests are 200.
HANDSHAKE_STATUS = {PARSE_ERROR: 400, INVALID_REQUEST: 400, UNSUPPORTED_PROTOCOL_VERSION: 400}

MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
ROUTING_HEADERS = frozenset({"mcp-protocol-version", "mcp-method", "mcp-name"})


def error_status(code: int, *, modern: bool) -> int:
    return (MODERN_STATUS if modern else HANDSHAKE_STATUS).get(code, 200)


def header(headers: Headers, name: str) -> str | None:
    """The first value of a header field (``name`` in lower case), as Starlette's ``get``."""
    return next((value for field, value in headers if field.lower() == name), None)


def has_envelope(message: dict[str, Any]) -> bool:
    """Whether the message carries a 2026-07-28 envelope (its version in ``params._meta``)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def unsupported(requested: Any) -> RpcError:
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version {str(requested)[:40]!r}; this server speaks {', '.join(SUPPORTED_VERSIONS)}",
        {"supported": SUPPORTED_VERSIONS, "requested": requested if isinstance(requested, str) else str(requested)},
    )


def check_modern(method: str, params: dict[str, Any], headers: Headers) -> str:
    """The 2026-07-28 checks, in the reference SDK's order; the request's version."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params: params._meta must be an object carrying "
            f"{PROTOCOL_VERSION_KEY!r} and {CLIENT_CAPABILITIES_KEY!r} (protocol 2026-07-28 has no "
            "initialize handshake: every request says its version)",
        )
    missing = [k for k in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if k not in meta]
    if missing:
        raise RpcError(INVALID_PARAMS, f"Invalid params: params._meta is missing {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_KEY]
    seen: set[str] = set()
    for field, _ in headers:
        name = field.lower()
        if name in ROUTING_HEADERS:
            if name in seen:
                raise RpcError(HEADER_MISMATCH, f"Header mismatch: {name} appears more than once")
            seen.add(name)
    if header(headers, "mcp-protocol-version") != version:
        raise RpcError(
            HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version is missing or differs from params._meta[{PROTOCOL_VERSION_KEY!r}]",
        )
    if header(headers, "mcp-method") != method:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: Mcp-Method is missing or differs from the body's method")
    name_key = NAME_PARAM.get(method)
    named = params.get(name_key) if name_key else None
    if named is not None and decode_name(header(headers, "mcp-name")) != named:
        raise RpcError(HEADER_MISMATCH, f"Header mismatch: Mcp-Name is missing or differs from params.{name_key}")
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {PROTOCOL_VERSION_KEY} must be a string")
    if version not in MODERN_VERSIONS:
        raise unsupported(version)
    if not isinstance(meta[CLIENT_CAPABILITIES_KEY], dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object")
    return version


_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$")


def decode_name(value: str | None) -> str | None:
    """An ``Mcp-Name`` value, undoing the ``=?base64?…?=`` form; None when malformed."""
    if value is None:
        return None
    found = _SENTINEL.match(value)
    if not found:
        return value
    try:
        raw = base64.b64decode(found.group(1), validate=True)
        return raw.decode("utf-8") if base64.b64encode(raw).decode() == found.group(1) else None
    except (binascii.Error, UnicodeDecodeError):
        return None
