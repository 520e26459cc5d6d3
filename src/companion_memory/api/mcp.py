"""MCP over Streamable HTTP at ``/mcp`` and ``/memory-mcp``: both protocol eras, stateless.

Every POST is answered on its own, from what it carries, so any instance (a local
process or any Worker isolate) can answer any request.

- **2026-07-28** (modern): no handshake and no session. A request carries its protocol
  version and client capabilities in ``params._meta`` (``io.modelcontextprotocol/…``
  keys) and mirrors them in the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name``
  headers; the server answers ``server/discover``, puts ``resultType`` on every result
  and gives each error the HTTP status that revision assigns (400, or 404 for an unknown
  method).
- **2024-11-05 … 2025-11-25** (handshake era): ``initialize`` is answered without minting
  an ``Mcp-Session-Id``, ``notifications/initialized`` gets a 202, and every other request
  is served without one. Batches are accepted only at 2025-03-26, the one revision that
  had them (and the version a request without ``MCP-Protocol-Version`` is taken to be).

Which era a POST belongs to is read from the request itself: a modern envelope in
``_meta``, a modern-only method, or a ``MCP-Protocol-Version`` that is not a handshake
version selects 2026-07-28; anything else is served as the handshake era.

Each tool needs the scope its REST twin needs; ``tools/list`` shows a key only the tools
it may call, and a key that may call none is refused (403). Tool failures (bad
arguments, a missing memory, refused content, a key without the scope) come back as
results with ``isError: true`` so the model can read them and correct itself; malformed
messages, unknown methods and unknown tools are JSON-RPC errors. Whatever goes wrong is
answered in JSON-RPC: an unexpected failure inside a tool (its result included) is an
``internal_error`` result, one outside a tool a -32603 error, never a bare HTTP 500. The
API key (``Authorization: Bearer`` or ``?token=``) is never logged: the query token is
cut out of the request before the access log sees it.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from .. import __version__
from ..errors import PermissionDenied, ServiceError
from ..runtime import Runtime
from .auth import EXPORT, MEMORY_READ, Principal, identify, presented_key
from .json_body import parse_json
from .limits import BodyTooLarge
from .mcp_tools import RETIRED, TOOLS, Tool

log = logging.getLogger("companion_memory.mcp")

router = APIRouter(tags=["mcp"])

PATHS = ("/mcp", "/memory-mcp")

# Protocol revisions, oldest first.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
# What a handshake-era request without MCP-Protocol-Version is taken to be (2025-06-18+).
DEFAULT_HANDSHAKE = "2025-03-26"
# JSON-RPC batches: added in 2025-03-26, removed in 2025-06-18.
BATCH_VERSIONS = frozenset({"2025-03-26"})
MAX_BATCH = 50
SUPPORTED_VERSIONS = [*reversed(MODERN_VERSIONS), *reversed(HANDSHAKE_VERSIONS)]

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

# JSON-RPC 2.0 codes, and the ones 2026-07-28 allocates in -32020…-32099.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
RESOURCE_NOT_FOUND_2025 = -32002  # handshake era only; 2026-07-28 uses -32602
# Ours: outside the JSON-RPC reserved range, as 2026-07-28 asks of new codes.
UNAUTHORIZED = -31401
FORBIDDEN = -31403

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
ROUTING_HEADERS = frozenset({b"mcp-protocol-version", b"mcp-method", b"mcp-name"})

SERVER_INFO = {"name": "companion-memory", "title": "Companion Memory", "version": __version__}
INSTRUCTIONS = (
    "Long-term memory about the user. Call memory_boot once at the start of a conversation and "
    "memory_recall with each new user message. Save lasting facts, preferences, boundaries and "
    "decisions with memory_upsert under a stable fact_key (the same key updates the memory); "
    "replace a memory that stopped being true with memory_supersede."
)
CAPABILITIES = {"tools": {"listChanged": False}, "resources": {}, "prompts": {}}
# The tool list changes only with a deploy; it depends on the key, so only private caches.
LIST_CACHE = {"ttlMs": 300_000, "cacheScope": "private"}
DISCOVER_CACHE = {"ttlMs": 300_000, "cacheScope": "public"}


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class Call:
    """One request, as far as the methods need it."""

    runtime: Runtime
    principal: Principal
    version: str
    modern: bool


# ---------------------------------------------------------------------------- the token


class _RedactToken(logging.Filter):
    """Cuts ``token=…`` out of access-log lines (uvicorn logs the path with its query)."""

    pattern = re.compile(r"([?&]token=)[^&\s\"]*", re.IGNORECASE)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self.pattern.sub(r"\1[redacted]", a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = self.pattern.sub(r"\1[redacted]", record.msg)
        return True


_access_log = logging.getLogger("uvicorn.access")
if not any(isinstance(f, _RedactToken) for f in _access_log.filters):
    _access_log.addFilter(_RedactToken())


def _forget_query_token(request: Request) -> str | None:
    """The ``?token=`` value, removed from the request scope so nothing later logs it."""
    token = request.query_params.get("token")
    if token is not None:
        kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        request.scope["query_string"] = urlencode(kept).encode()
    return token


# --------------------------------------------------------------------------- responses


def _object(value: Any, name: str) -> dict[str, Any]:
    """An optional JSON-RPC object member: absent means empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {name} must be an object")
    return value


def _error_body(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class _RpcResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            # A lone surrogate echoed from the request (an id, a method or tool name): legal
            # in JSON text as an escape, not encodable as UTF-8.
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return _RpcResponse(body, status, headers=headers)


def _internal(method: str) -> RpcError:
    log.exception("MCP %s failed", method[:100])
    return RpcError(INTERNAL_ERROR, "Internal error: the server failed to answer this request; try again later")


def _error(request_id: Any, error: RpcError, *, modern: bool) -> JSONResponse:
    status = (MODERN_STATUS if modern else HANDSHAKE_STATUS).get(error.code, 200)
    return _json(_error_body(request_id, error.code, error.message, error.data), status)


def _accepted() -> Response:
    return Response(status_code=202)


def _unsupported(requested: Any) -> RpcError:
    return RpcError(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version {str(requested)[:40]!r}; this server speaks {', '.join(SUPPORTED_VERSIONS)}",
        {"supported": SUPPORTED_VERSIONS, "requested": requested if isinstance(requested, str) else str(requested)},
    )


# ---------------------------------------------------------------------------- the routes


async def _options(request: Request) -> Response:
    """A plain OPTIONS; browsers' CORS preflights are answered by the app's CORS middleware."""
    return Response(status_code=204, headers={"Allow": "POST, OPTIONS"})


async def _not_allowed(request: Request) -> Response:
    """GET (a standing SSE stream) and DELETE (ending a session): neither exists here."""
    return _json(
        _error_body(
            None,
            INVALID_REQUEST,
            f"Method Not Allowed: {request.method} is not served here; send each "
            "JSON-RPC message as its own POST (this server keeps no sessions and opens no streams)",
        ),
        405,
        headers={"Allow": "POST, OPTIONS"},
    )


async def _post(request: Request) -> Response:
    try:
        return await _serve(request)
    except Exception:
        # Not reached by any known input (each request is answered, with its id, further in);
        # a JSON-RPC body all the same, and a 500 since the request it answers is unknown.
        log.exception("MCP request failed")
        return _json(_error_body(None, INTERNAL_ERROR, "Internal error: the server failed to answer this request"), 500)


async def _serve(request: Request) -> Response:
    principal = _authenticate(request)
    if isinstance(principal, Response):
        return principal
    try:
        body = await request.body()
    except BodyTooLarge as too_large:
        return _json(_error_body(None, INVALID_REQUEST, f"Request too large: {too_large.detail}"), 413)
    try:
        message = parse_json(body)
    except ValueError as error:  # JSONDecodeError, or bytes that are not UTF-8 text
        reason = error.msg if isinstance(error, json.JSONDecodeError) else "not UTF-8 text"
        return _error(None, RpcError(PARSE_ERROR, f"Parse error: the body is not valid JSON: {reason}"), modern=True)

    runtime: Runtime = request.app.state.runtime
    header_version = request.headers.get("mcp-protocol-version")
    if isinstance(message, list):
        return await _batch(runtime, principal, header_version, message)
    if not isinstance(message, dict):
        not_object = RpcError(INVALID_REQUEST, "Invalid Request: the body must be a JSON-RPC object")
        return _error(None, not_object, modern=True)
    if _is_modern(message, header_version):
        return await _modern(request, runtime, principal, message)
    if header_version is not None and header_version not in HANDSHAKE_VERSIONS:
        return _error(None, _unsupported(header_version), modern=False)
    return await _handshake_era(runtime, principal, header_version or DEFAULT_HANDSHAKE, message)


for _path in PATHS:
    router.add_api_route(_path, _post, methods=["POST"], include_in_schema=False)
    router.add_api_route(_path, _not_allowed, methods=["GET", "DELETE"], include_in_schema=False)
    router.add_api_route(_path, _options, methods=["OPTIONS"], include_in_schema=False)


def _authenticate(request: Request) -> Principal | Response:
    query_token = _forget_query_token(request)
    key = presented_key(request.headers) or query_token
    challenge = {"WWW-Authenticate": 'Bearer realm="companion-memory"'}
    if not key:
        return _json(
            _error_body(
                None,
                UNAUTHORIZED,
                "Unauthorized: send the key as Authorization: Bearer <key> or in the URL as ?token=<key>",
            ),
            401,
            challenge,
        )
    principal = identify(request.app.state.runtime.settings, key)
    if principal is None:
        return _json(_error_body(None, UNAUTHORIZED, "Unauthorized: unknown API key"), 401, challenge)
    if not any(tool.scope in principal.scopes for tool in TOOLS.values()):
        return _json(
            _error_body(
                None,
                FORBIDDEN,
                f"Forbidden: the {principal.profile} key may not use the memory tools (use MEMORY_MCP_API_KEY)",
            ),
            403,
        )
    return principal


# ------------------------------------------------------------------------ 2026-07-28


def _is_modern(message: dict[str, Any], header_version: str | None) -> bool:
    if header_version is not None and header_version not in HANDSHAKE_VERSIONS:
        # A modern version, or an unknown one the modern ladder rejects with -32022 —
        # unless the body is plainly handshake-era (then -32022 comes from that path).
        return header_version in MODERN_VERSIONS or _has_envelope(message)
    method = message.get("method")
    return _has_envelope(message) or (isinstance(method, str) and method in MODERN_ONLY_METHODS)


def _has_envelope(message: dict[str, Any]) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


async def _modern(request: Request, runtime: Runtime, principal: Principal, message: dict[str, Any]) -> Response:
    if "id" not in message:
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return _error(
                None, RpcError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC request or notification"), modern=True
            )
        # 2026-07-28 defines no client notifications over HTTP: accept and drop.
        version = request.headers.get("mcp-protocol-version", "")
        if version not in MODERN_VERSIONS:
            return _error(None, _unsupported(version), modern=True)
        return _accepted()
    try:
        request_id, method, params = _envelope(message, modern=True)
    except RpcError as error:
        return _error(_id_or_none(message), error, modern=True)
    try:
        version = _check_modern(request, method, params)
        result = await _dispatch(Call(runtime, principal, version, modern=True), method, params)
    except RpcError as error:
        return _error(request_id, error, modern=True)
    except Exception:  # noqa: BLE001 - any failure is answered in JSON-RPC, never with a bare 500
        return _error(request_id, _internal(method), modern=True)
    result = {"resultType": "complete", **result}
    result["_meta"] = {**(result.get("_meta") or {}), SERVER_INFO_KEY: SERVER_INFO}
    return _json({"jsonrpc": "2.0", "id": request_id, "result": result})


def _check_modern(request: Request, method: str, params: dict[str, Any]) -> str:
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
    seen: set[bytes] = set()
    for name, _ in request.scope.get("headers") or []:
        name = name.lower()
        if name in ROUTING_HEADERS:
            if name in seen:
                raise RpcError(HEADER_MISMATCH, f"Header mismatch: {name.decode()} appears more than once")
            seen.add(name)
    headers = request.headers
    if headers.get("mcp-protocol-version") != version:
        raise RpcError(
            HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version is missing or differs from params._meta[{PROTOCOL_VERSION_KEY!r}]",
        )
    if headers.get("mcp-method") != method:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: Mcp-Method is missing or differs from the body's method")
    name_key = NAME_PARAM.get(method)
    named = params.get(name_key) if name_key else None
    if named is not None and _decode_header(headers.get("mcp-name")) != named:
        raise RpcError(HEADER_MISMATCH, f"Header mismatch: Mcp-Name is missing or differs from params.{name_key}")
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {PROTOCOL_VERSION_KEY} must be a string")
    if version not in MODERN_VERSIONS:
        raise _unsupported(version)
    if not isinstance(meta[CLIENT_CAPABILITIES_KEY], dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object")
    return version


_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$")


def _decode_header(value: str | None) -> str | None:
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


# ------------------------------------------------------------------ 2024-11-05 … 2025-11-25


async def _handshake_era(runtime: Runtime, principal: Principal, version: str, message: dict[str, Any]) -> Response:
    try:
        answer = await _handshake_message(runtime, principal, version, message)
    except RpcError as error:  # the message itself is malformed
        return _error(None, error, modern=False)
    if answer is None:
        return _accepted()
    status = HANDSHAKE_STATUS.get(answer["error"]["code"], 200) if "error" in answer else 200
    return _json(answer, status)


async def _handshake_message(
    runtime: Runtime, principal: Principal, version: str, message: Any
) -> dict[str, Any] | None:
    """The answer to one handshake-era message; None for a notification or a client's response."""
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC object")
    if "method" not in message and "id" in message and ("result" in message or "error" in message):
        return None  # a response to a server request; we never send any, so nothing waits for it
    if "id" not in message:
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            raise RpcError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC request or notification")
        return None  # notifications/initialized, cancelled, …: nothing to do without sessions
    try:
        request_id, method, params = _envelope(message, modern=False)
    except RpcError as error:
        return _error_body(_id_or_none(message), error.code, error.message, error.data)
    try:
        if method == "initialize":
            requested = params.get("protocolVersion")
            if not isinstance(requested, str):
                raise RpcError(INVALID_PARAMS, "Invalid params: initialize needs params.protocolVersion (a string)")
            version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
            result = {
                "protocolVersion": version,
                "capabilities": CAPABILITIES,
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            }
        elif method == "ping":
            result = {}
        else:
            result = await _dispatch(Call(runtime, principal, version, modern=False), method, params)
    except RpcError as error:
        return _error_body(request_id, error.code, error.message, error.data)
    except Exception:  # noqa: BLE001 - any failure is answered in JSON-RPC, never with a bare 500
        internal = _internal(method)
        return _error_body(request_id, internal.code, internal.message)
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def _batch(runtime: Runtime, principal: Principal, header_version: str | None, batch: list[Any]) -> Response:
    version = header_version or DEFAULT_HANDSHAKE
    if version not in BATCH_VERSIONS or any(isinstance(m, dict) and _has_envelope(m) for m in batch):
        return _error(
            None,
            RpcError(
                INVALID_REQUEST,
                f"Invalid Request: JSON-RPC batches are not part of protocol "
                f"{version} (only 2025-03-26 had them); send one message per POST",
            ),
            modern=False,
        )
    if not batch:
        return _error(None, RpcError(INVALID_REQUEST, "Invalid Request: empty batch"), modern=False)
    if len(batch) > MAX_BATCH:
        return _error(
            None,
            RpcError(INVALID_REQUEST, f"Invalid Request: a batch holds at most {MAX_BATCH} messages"),
            modern=False,
        )
    answers = []
    for message in batch:
        if isinstance(message, dict) and message.get("method") == "initialize" and "id" in message:
            answers.append(
                _error_body(
                    _id_or_none(message), INVALID_REQUEST, "Invalid Request: initialize must not be part of a batch"
                )
            )
            continue
        try:
            answer = await _handshake_message(runtime, principal, version, message)
        except RpcError as error:
            answer = _error_body(None, error.code, error.message, error.data)
        if answer is not None:
            answers.append(answer)
    return _json(answers) if answers else _accepted()


# ------------------------------------------------------------------------ both eras


def _id_or_none(message: dict[str, Any]) -> Any:
    request_id = message.get("id")
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def _envelope(message: dict[str, Any], *, modern: bool) -> tuple[str | int, str, dict[str, Any]]:
    request_id = message.get("id")
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
    method = message.get("method")
    if not isinstance(method, str):
        if modern and ("result" in message or "error" in message):
            raise RpcError(INVALID_REQUEST, "Invalid Request: clients must not send JSON-RPC responses")
        raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a string")
    return request_id, method, _object(message.get("params"), "params")


async def _dispatch(call: Call, method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "tools/list":
        return {"tools": [_definition(t) for t in TOOLS.values() if t.scope in call.principal.scopes], **_cache(call)}
    if method == "tools/call":
        return await _call_tool(call, params)
    if method == "server/discover":
        return {
            "supportedVersions": list(MODERN_VERSIONS),
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            **DISCOVER_CACHE,
        }
    if method == "resources/list":
        return {"resources": [], **_cache(call)}
    if method == "resources/templates/list":
        return {"resourceTemplates": [], **_cache(call)}
    if method == "prompts/list":
        return {"prompts": [], **_cache(call)}
    if method == "resources/read":
        uri = params.get("uri")
        code = INVALID_PARAMS if call.modern else RESOURCE_NOT_FOUND_2025
        data = {"uri": uri} if isinstance(uri, str) else None
        raise RpcError(code, "Resource not found: this server has no resources", data)
    if method == "prompts/get":
        raise RpcError(INVALID_PARAMS, "Invalid params: unknown prompt (this server has no prompts)")
    if call.modern and method in ("initialize", "ping"):
        raise RpcError(
            METHOD_NOT_FOUND,
            f"Method not found: {method} is not part of protocol 2026-07-28 (no handshake; use server/discover)",
        )
    raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method[:100]}")


def _cache(call: Call) -> dict[str, Any]:
    return LIST_CACHE if call.modern else {}


def _definition(tool: Tool) -> dict[str, Any]:
    return _DEFINITIONS[tool.name]


_IDEMPOTENT = frozenset({"memory_upsert", "memory_ingest", "glossary_set", "memory_archive", "memory_delete"})


def _build_definition(tool: Tool) -> dict[str, Any]:
    reads = tool.scope in (MEMORY_READ, EXPORT)
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": {
            "readOnlyHint": reads,
            "destructiveHint": tool.name == "memory_delete",
            "idempotentHint": reads or tool.name in _IDEMPOTENT,
            "openWorldHint": False,
        },
    }


_DEFINITIONS = {name: _build_definition(tool) for name, tool in TOOLS.items()}


async def _call_tool(call: Call, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: params.name must be the name of a tool (a string)")
    arguments = _object(params.get("arguments"), "params.arguments")
    if name in RETIRED:
        return _failure("retired_tool", RETIRED[name])
    tool = TOOLS.get(name)
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name[:100]}", {"tools": list(TOOLS)})
    # The scope first: a key without it learns nothing, not even whether its arguments were valid.
    try:
        call.principal.require(tool.scope)
    except PermissionDenied as refused:
        return _failure(refused.code, f"{name}: {refused.message}")
    try:
        args = tool.arguments.model_validate(arguments)
    except ValidationError as invalid:
        # 2025-11-25 and later: input validation errors are tool execution errors.
        return _failure("invalid_arguments", f"Invalid arguments for {name}: {_describe(invalid.errors())}")
    try:
        return _success(await tool.handler(call.runtime, call.principal, args))
    except ServiceError as refused:
        return _failure(refused.code, refused.message, refused.details)
    except Exception:
        log.exception("MCP tool %s failed", name)
        return _failure("internal_error", f"{name} failed because of an internal error; try again later")


def _success(result: dict[str, Any]) -> dict[str, Any]:
    """A tool's result as text and as structuredContent. Serialised here, inside the tool's
    failure handling, so that a result JSON cannot carry (a value nested past the recursion
    limit, a circular or unknown object) is a failed call, not a 500. NaN and infinities
    become null, as REST's answers have them."""
    structured = to_jsonable_python(result, inf_nan_mode="null")
    text = json.dumps(structured, ensure_ascii=False, allow_nan=False)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}


def _failure(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = to_jsonable_python(details)
    return {"content": [{"type": "text", "text": message}], "structuredContent": {"error": error}, "isError": True}


def _describe(errors: Iterable[Any]) -> str:
    problems = []
    for error in errors:
        where = ".".join(str(p) for p in error.get("loc", ())) or "arguments"
        problems.append(f"{where}: {error.get('msg', 'invalid value')}")
    shown = problems[:5]
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return "; ".join(shown) + more
