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

from ..application.fields import error_code
from ..errors import (
    Conflict,
    InvalidInput,
    NotFound,
    OAuthError,
    PermissionDenied,
    RedirectableOAuthError,
    SensitiveContent,
    ServiceError,
    Unauthenticated,
)

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


# The OAuth protocol endpoints answer errors as RFC 6749 §5.2 says (``error`` a string,
# ``error_description``), not in the shape of the rest of the API.
OAUTH_PREFIX = "/oauth/"
_OAUTH_CODES = {401: "invalid_client", 403: "access_denied", 429: "temporarily_unavailable", 500: "server_error"}


def oauth_error_response(
    status: int, error: str, description: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    headers = {**(headers or {}), "Cache-Control": "no-store", "Pragma": "no-cache"}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse({"error": error, "error_description": description}, status, headers=headers)


def _answer(
    request: Request,
    status: int,
    message: str,
    *,
    type_: str,
    code: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """Our error shape, or the OAuth one at the OAuth endpoints."""
    if request.url.path.startswith(OAUTH_PREFIX):
        return oauth_error_response(status, _OAUTH_CODES.get(status, "invalid_request"), message, headers)
    return error_response(status, message, type_=type_, code=code, headers=headers, **extra)


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
    @app.exception_handler(OAuthError)
    async def oauth_error(request: Request, error: OAuthError) -> JSONResponse:
        if isinstance(error, RedirectableOAuthError):
            # Back to the client, which reads the error from its redirect URI.
            headers = {"Location": error.location, "Cache-Control": "no-store"}
            return JSONResponse({"location": error.location}, 303, headers=headers)
        return oauth_error_response(error.status, error.code, error.message)

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, error: ServiceError) -> JSONResponse:
        status, type_ = next((v for k, v in _STATUS.items() if isinstance(error, k)), (400, "invalid_request_error"))
        extra = {"details": error.details} if error.details else {}
        return _answer(request, status, error.message, type_=type_, code=error.code, **extra)

    async def validation_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError | ValidationError)
        errors = error.errors()
        problems = "; ".join([_describe(dict(e)) for e in errors][:5])
        if request.url.path == OAUTH_PREFIX + "register":
            return oauth_error_response(400, "invalid_client_metadata", problems)
        code = error_code(errors, "invalid_request")
        return _answer(request, 400, problems, type_="invalid_request_error", code=code)

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
        return _answer(
            request, error.status_code, message, type_="invalid_request_error", code=code, headers=headers or None
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        # A bug or an outage of a binding: say so without leaking internals.
        return _answer(request, 500, "internal error", type_="server_error", code="internal_error")
