"""JSON-RPC 2.0 as MCP uses it: the error codes, the error answer, and reading a request."""

from __future__ import annotations

from typing import Any

from ...errors import CompanionError

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


class RpcError(CompanionError):
    """A JSON-RPC error answer: the MCP edge's member of the error family (``errors.py``).

    A protocol error (the message is not a request we can answer) with its JSON-RPC
    ``code``; it is answered in the JSON-RPC body, whatever the HTTP status. A
    ``ServiceError`` a tool raises is a failed tool result instead, and any other
    failure an ``INTERNAL_ERROR`` answer.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


def error_body(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def member_object(value: Any, name: str) -> dict[str, Any]:
    """An optional JSON-RPC object member: absent means empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {name} must be an object")
    return value


def id_or_none(message: dict[str, Any]) -> Any:
    request_id = message.get("id")
    return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None


def envelope(message: dict[str, Any], *, modern: bool) -> tuple[str | int, str, dict[str, Any]]:
    """A request's id, method and params; RpcError when it is not a well-formed request."""
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
    return request_id, method, member_object(message.get("params"), "params")
