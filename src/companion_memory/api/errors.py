"""Every failure leaves as JSON: ``{"error": {"message", "type", "code"}}``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import Match

from ..errors import Conflict, InvalidInput, NotFound, PermissionDenied, SensitiveContent, ServiceError, Unauthenticated

_STATUS: dict[type[ServiceError], tuple[int, str]] = {
    Unauthenticated: (401, "authentication_error"),
    PermissionDenied: (403, "permission_error"),
    NotFound: (404, "not_found_error"),
    Conflict: (409, "conflict_error"),
    SensitiveContent: (422, "invalid_request_error"),
    InvalidInput: (400, "invalid_request_error"),
}


def error_response(
    status: int, message: str, *, type_: str, code: str, headers: dict[str, str] | None = None, **extra: Any
) -> JSONResponse:
    if status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": "Bearer"}
    return JSONResponse({"error": {"message": message, "type": type_, "code": code, **extra}}, status, headers=headers)


def flat_routes(app: Starlette) -> Iterable[Any]:
    """Every route of the app, those of included routers too (newer FastAPI nests them)."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # older FastAPI: included routes are copied into the app's list
        return list(app.router.routes)
    return list(iter_route_contexts(app.router.routes))


def _allowed_methods(request: Request) -> str:
    """Every method some route serves at this path. Starlette's 405 names the methods of
    the first route whose path matched, and GET and POST /v1/memories are two routes."""
    methods: set[str] = set()
    for route in flat_routes(request.app):
        match, _ = route.matches({**request.scope, "method": "\0"})
        if match is Match.PARTIAL:
            methods.update(route.methods or ())
    return ", ".join(sorted(methods))


def _describe(error: dict[str, Any]) -> str:
    location = [str(p) for p in error.get("loc", ()) if p not in ("body",)]
    if error.get("type") == "json_invalid":
        reason = (error.get("ctx") or {}).get("error")
        return f"request body is not valid JSON: {reason}" if reason else "request body is not valid JSON"
    if error.get("type") == "model_attributes_type" or (not location and error.get("type", "").endswith("_type")):
        return "request body must be a JSON object"
    where = ".".join(location) or "body"
    return f"{where}: {error.get('msg', 'invalid value')}"


def install(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(_: Request, error: ServiceError) -> JSONResponse:
        status, type_ = next((v for k, v in _STATUS.items() if isinstance(error, k)), (400, "invalid_request_error"))
        extra = {"details": error.details} if error.details else {}
        return error_response(status, error.message, type_=type_, code=error.code, **extra)

    async def validation_error(_: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError | ValidationError)
        problems = [_describe(dict(e)) for e in error.errors()]
        return error_response(400, "; ".join(problems[:5]), type_="invalid_request_error", code="invalid_request")

    app.add_exception_handler(RequestValidationError, validation_error)
    # A route's path or query values that the use case's input model refuses.
    app.add_exception_handler(ValidationError, validation_error)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 408: "request_timeout", 413: "payload_too_large"}.get(
            error.status_code, "http_error"
        )
        message = error.detail if isinstance(error.detail, str) else "request failed"
        if error.status_code == 404 and message == "Not Found":
            message = "no such route"
        headers = dict(error.headers or {})
        if error.status_code == 405:
            message = "method not allowed"
            headers["Allow"] = _allowed_methods(request) or headers.get("Allow", "")
        return error_response(
            error.status_code, message, type_="invalid_request_error", code=code, headers=headers or None
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, error: Exception) -> JSONResponse:
        # A bug or an outage of a binding: say so without leaking internals.
        return error_response(500, "internal error", type_="server_error", code="internal_error")
