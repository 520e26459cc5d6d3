"""Answering one POST to the MCP endpoint: JSON-RPC in both protocol eras, and the tools.

``answer`` takes the body's bytes, the request's header fields and the caller's key, and
returns a ``Reply`` (status, JSON-able body or None, headers); it knows nothing of the web
framework, which ``routes`` adds around it. Whatever goes wrong is answered in JSON-RPC:
an unexpected failure inside a tool (its result included) is an ``internal_error``
result, one outside a tool a -32603 error, never a bare HTTP 500.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from ... import __version__
from ...application.fields import error_code
from ...application.principal import Principal
from ...domain.scopes import DEBUG, EXPORT, MEMORY_READ
from ...errors import PermissionDenied, ServiceError
from ...runtime import Runtime
from ..json_body import parse_json
from .eras import (
    BATCH_VERSIONS,
    DEFAULT_HANDSHAKE,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    MODERN_ONLY_METHODS,
    MODERN_VERSIONS,
    SERVER_INFO_KEY,
    Headers,
    check_modern,
    error_status,
    has_envelope,
    header,
    unsupported,
)
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND_2025,
    RpcError,
    envelope,
    error_body,
    id_or_none,
    member_object,
)
from .tools import RETIRED, TOOLS, Tool

log = logging.getLogger("companion_memory.mcp")

MAX_BATCH = 50

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


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: ``body`` is JSON-able, or None for an empty body (202, 204)."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Call:
    """One request, as far as the methods need it."""

    runtime: Runtime
    principal: Principal
    version: str
    modern: bool


def _json(body: Any, status: int = 200) -> Reply:
    return Reply(status, body)


def _error(request_id: Any, error: RpcError, *, modern: bool) -> Reply:
    return Reply(error_status(error.code, modern=modern), error_body(request_id, error.code, error.message, error.data))


def _accepted() -> Reply:
    return Reply(202)


def _internal(method: str) -> RpcError:
    log.exception("MCP %s failed", method[:100])
    return RpcError(INTERNAL_ERROR, "Internal error: the server failed to answer this request; try again later")


def failed() -> Reply:
    """The answer when the request itself is unknown: a JSON-RPC body all the same, and a 500."""
    return Reply(500, error_body(None, INTERNAL_ERROR, "Internal error: the server failed to answer this request"))


# ---------------------------------------------------------------------------- the answer


async def answer(body: bytes, headers: Headers, principal: Principal, runtime: Runtime) -> Reply:
    """The answer to one POST from an authenticated key. ``headers`` are the request's
    header fields as (name, value) pairs, repeats kept: 2026-07-28 refuses a repeated
    routing header."""
    try:
        return await _answer(body, headers, principal, runtime)
    except Exception:  # broad on purpose: the last line before a bare 500
        # Not reached by any known input (each request is answered, with its id, further in).
        log.exception("MCP request failed")
        return failed()


async def _answer(body: bytes, headers: Headers, principal: Principal, runtime: Runtime) -> Reply:
    try:
        message = parse_json(body)
    except ValueError as error:  # JSONDecodeError, or bytes that are not UTF-8 text
        reason = error.msg if isinstance(error, json.JSONDecodeError) else "not UTF-8 text"
        return _error(None, RpcError(PARSE_ERROR, f"Parse error: the body is not valid JSON: {reason}"), modern=True)

    header_version = header(headers, "mcp-protocol-version")
    if isinstance(message, list):
        return await _batch(runtime, principal, header_version, message)
    if not isinstance(message, dict):
        not_object = RpcError(INVALID_REQUEST, "Invalid Request: the body must be a JSON-RPC object")
        return _error(None, not_object, modern=True)
    if _is_modern(message, header_version):
        return await _modern(headers, runtime, principal, message)
    if header_version is not None and header_version not in HANDSHAKE_VERSIONS:
        return _error(None, unsupported(header_version), modern=False)
    return await _handshake_era(runtime, principal, header_version or DEFAULT_HANDSHAKE, message)


def _is_modern(message: dict[str, Any], header_version: str | None) -> bool:
    """Which era a POST belongs to, from what it carries."""
    if header_version is not None and header_version not in HANDSHAKE_VERSIONS:
        # A modern version, or an unknown one the modern ladder rejects with -32022 —
        # unless the body is plainly handshake-era (then -32022 comes from that path).
        return header_version in MODERN_VERSIONS or has_envelope(message)
    method = message.get("method")
    return has_envelope(message) or (isinstance(method, str) and method in MODERN_ONLY_METHODS)


# ------------------------------------------------------------------------ 2026-07-28


async def _modern(headers: Headers, runtime: Runtime, principal: Principal, message: dict[str, Any]) -> Reply:
    if "id" not in message:
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return _error(
                None, RpcError(INVALID_REQUEST, "Invalid Request: not a JSON-RPC request or notification"), modern=True
            )
        # 2026-07-28 defines no client notifications over HTTP: accept and drop.
        version = header(headers, "mcp-protocol-version") or ""
        if version not in MODERN_VERSIONS:
            return _error(None, unsupported(version), modern=True)
        return _accepted()
    try:
        request_id, method, params = envelope(message, modern=True)
    except RpcError as error:
        return _error(id_or_none(message), error, modern=True)
    try:
        version = check_modern(method, params, headers)
        result = await _dispatch(Call(runtime, principal, version, modern=True), method, params)
    except RpcError as error:
        return _error(request_id, error, modern=True)
    except Exception:  # noqa: BLE001 - any failure is answered in JSON-RPC, never with a bare 500
        return _error(request_id, _internal(method), modern=True)
    result = {"resultType": "complete", **result}
    result["_meta"] = {**(result.get("_meta") or {}), SERVER_INFO_KEY: SERVER_INFO}
    return _json({"jsonrpc": "2.0", "id": request_id, "result": result})


# ------------------------------------------------------------------ 2024-11-05 … 2025-11-25


async def _handshake_era(runtime: Runtime, principal: Principal, version: str, message: dict[str, Any]) -> Reply:
    try:
        answered = await _handshake_message(runtime, principal, version, message)
    except RpcError as error:  # the message itself is malformed
        return _error(None, error, modern=False)
    if answered is None:
        return _accepted()
    status = error_status(answered["error"]["code"], modern=False) if "error" in answered else 200
    return _json(answered, status)


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
        request_id, method, params = envelope(message, modern=False)
    except RpcError as error:
        return error_body(id_or_none(message), error.code, error.message, error.data)
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
        return error_body(request_id, error.code, error.message, error.data)
    except Exception:  # noqa: BLE001 - any failure is answered in JSON-RPC, never with a bare 500
        internal = _internal(method)
        return error_body(request_id, internal.code, internal.message)
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def _batch(runtime: Runtime, principal: Principal, header_version: str | None, batch: list[Any]) -> Reply:
    version = header_version or DEFAULT_HANDSHAKE
    if version not in BATCH_VERSIONS or any(isinstance(m, dict) and has_envelope(m) for m in batch):
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
                error_body(
                    id_or_none(message), INVALID_REQUEST, "Invalid Request: initialize must not be part of a batch"
                )
            )
            continue
        try:
            answered = await _handshake_message(runtime, principal, version, message)
        except RpcError as error:
            answered = error_body(None, error.code, error.message, error.data)
        if answered is not None:
            answers.append(answered)
    return _json(answers) if answers else _accepted()


# ------------------------------------------------------------------------ both eras


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


_IDEMPOTENT = frozenset(
    {
        "memory_upsert",
        "memory_ingest",
        "glossary_set",
        "memory_archive",
        "memory_delete",
        "plan_update",
        "conversation_forget",
    }
)
# What cannot be taken back: a deleted memory stops being recalled, forgotten words are gone.
_DESTRUCTIVE = frozenset({"memory_delete", "conversation_forget"})


def _build_definition(tool: Tool) -> dict[str, Any]:
    # The debug-scope tools (memory_health, memory_unanchored) only look.
    reads = tool.scope in (MEMORY_READ, EXPORT, DEBUG)
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": {
            "readOnlyHint": reads,
            "destructiveHint": tool.name in _DESTRUCTIVE,
            "idempotentHint": reads or tool.name in _IDEMPOTENT,
            "openWorldHint": False,
        },
    }


_DEFINITIONS = {name: _build_definition(tool) for name, tool in TOOLS.items()}


async def _call_tool(call: Call, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "Invalid params: params.name must be the name of a tool (a string)")
    arguments = member_object(params.get("arguments"), "params.arguments")
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
        return _invalid(name, invalid)
    try:
        return _success(await tool.call(call.runtime, call.principal, args))
    except ValidationError as invalid:
        # The arguments fit the tool but not its use case's input.
        return _invalid(name, invalid)
    except ServiceError as refused:
        return _failure(refused.code, refused.message, refused.details)
    except Exception:  # broad on purpose: a tool that fails, however, answers as a failed tool
        log.exception("MCP tool %s failed", name)
        return _failure("internal_error", f"{name} failed because of an internal error; try again later")


def _success(result: BaseModel) -> dict[str, Any]:
    """A tool's result as text and as structuredContent. Serialised here, inside the tool's
    failure handling, so that a result JSON cannot carry (a value nested past the recursion
    limit, a circular or unknown object) is a failed call, not a 500. NaN and infinities
    become null, as REST's answers have them."""
    structured = to_jsonable_python(result.model_dump(), inf_nan_mode="null")
    text = json.dumps(structured, ensure_ascii=False, allow_nan=False)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}


def _invalid(name: str, invalid: ValidationError) -> dict[str, Any]:
    errors = invalid.errors()
    return _failure(error_code(errors, "invalid_arguments"), f"Invalid arguments for {name}: {_describe(errors)}")


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
