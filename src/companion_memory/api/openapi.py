"""The OpenAPI document says what each operation really answers.

FastAPI documents a route's success and a 422 ``HTTPValidationError``. Ours answer bad
input with a 400 (api/errors.py), and every failure with one JSON shape,
``{"error": {"message", "type", "code", ...}}``. ``install`` amends the generated
document once, in one place, instead of a ``responses=`` on every decorator:

* a route that needs a key (every /v1 and /api path, and any route that depends on
  ``authenticate``) answers 401 (no or unknown key) and documents the two ways to send
  one; a route that checks a scope (``allowed``) answers 403 too;
* a route with a query parameter, a constrained path parameter or a body answers 400;
* a route with a body answers 413 (over 1 MB; 20 MB for chat);
* what the services behind a route refuse (404, 409, 422, a provider's failure) is in
  ``OUTCOMES``, per operation;
* the 422 ``HTTPValidationError`` goes, except where 422 is our own answer (sensitive
  content refused), documented with our error body;
* the OAuth protocol endpoints (under /oauth/) answer errors as RFC 6749 §5.2 says,
  ``{"error", "error_description"}``, and are documented so.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from . import auth
from .errors import OAUTH_PREFIX, flat_routes

ERROR = "Error"
_REF = f"#/components/schemas/{ERROR}"
OAUTH_ERROR = "OAuthError"
_OAUTH_REF = f"#/components/schemas/{OAUTH_ERROR}"


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow", title="ErrorDetail")
    message: str = Field(description="What went wrong, for a person to read.")
    type: str = Field(description="The class of error, e.g. invalid_request_error, authentication_error.")
    code: str = Field(description="A stable machine-readable code, e.g. missing_fact_key, not_found.")


class ErrorBody(BaseModel):
    model_config = ConfigDict(title=ERROR)
    error: ErrorDetail


class OAuthErrorBody(BaseModel):
    model_config = ConfigDict(extra="allow", title=OAUTH_ERROR)
    error: str = Field(description="The OAuth error code: invalid_request, invalid_grant, invalid_client...")
    error_description: str = Field(description="What went wrong, for a person to read.")


DESCRIPTIONS = {
    400: "Bad input: a parameter or the body is missing, malformed or out of range.",
    401: "No API key, or an unknown one.",
    403: "The key's profile lacks the scope this route needs.",
    404: "Not found.",
    408: "The model provider timed out on its side (passed through).",
    409: "Conflict with the current state (a hand-authored memory, a taken name, a decided candidate).",
    413: "The request body is over the size limit.",
    422: "Sensitive content (credentials, keys, ID or card numbers...) refused for this writer.",
    429: "The model provider is rate-limited (passed through).",
    502: "The model provider failed or answered something unusable.",
    503: "No model provider is configured for this model.",
    504: "The model provider did not answer in time.",
}

_OAUTH_DESCRIPTIONS = {
    400: "Refused; ``error`` says why (invalid_request, invalid_grant, invalid_target, invalid_client_metadata...).",
    401: "An unknown client (invalid_client).",
    413: "The request body is over the size limit (invalid_request).",
    429: "Too many registrations within the hour (temporarily_unavailable).",
}
_MEMORY_WRITE = {409, 422}
_UPSTREAM = {401, 403, 404, 408, 422, 429, 502, 503, 504}  # a provider's 4xx is passed through
_CHAT_DESCRIPTIONS = {
    401: "No API key, an unknown one, or the model provider refused the gateway's key (passed through).",
    403: "The key's profile lacks the scope, or the model provider refused (passed through).",
    404: "The model provider does not know the model (passed through).",
    422: "The model provider refused the request (passed through).",
}

# (method, path) → what the services behind the operation can refuse, beyond what its
# signature already tells (key, parameters, body), and a success status other than its
# default one. tests/api/test_openapi.py checks that every entry names a real operation.
OUTCOMES: dict[tuple[str, str], set[int]] = {
    ("POST", "/v1/chat/completions"): _UPSTREAM,
    ("POST", "/v1/guide-dog/chat/completions"): _UPSTREAM,
    ("POST", "/v1/candidates/{candidate_id}/approve"): {404, 409, 422},
    ("POST", "/v1/candidates/{candidate_id}/discard"): {404, 409},
    ("POST", "/v1/candidates/{candidate_id}/merge"): {404, 409},
    ("POST", "/v1/candidates/{candidate_id}/supersede"): {404, 409, 422},
    ("POST", "/v1/memories"): {200} | _MEMORY_WRITE,  # 201 created, 200 updated
    ("GET", "/v1/memories/{memory_id}"): {404},
    ("PATCH", "/v1/memories/{memory_id}"): {404} | _MEMORY_WRITE,
    ("DELETE", "/v1/memories/{memory_id}"): {404, 409},
    # A missing old memory is no error: the new one is written on its own.
    ("POST", "/v1/memories/{memory_id}/supersede"): _MEMORY_WRITE,
    ("POST", "/v1/memories/{memory_id}/archive"): {404, 409},
    ("POST", "/v1/memories/{memory_id}/relations"): {404},
    ("DELETE", "/v1/memories/{memory_id}/relations/{relation_id}"): {404},
    # Not a consolidation event, one already undone, or a restored copy whose fact_key is taken: 409.
    ("POST", "/v1/memories/{memory_id}/events/{event_id}/undo"): {404, 409},
    # Not a plan, or not an open one: 409.
    ("POST", "/v1/plans/{plan_id}/done"): {404, 409},
    ("POST", "/v1/plans/{plan_id}/abandon"): {404, 409},
    # Unknown memory: 404; already open for the target, not live, or the daily cap: 409.
    ("POST", "/v1/shares"): {404, 409},
    ("GET", "/v1/shares/{share_id}"): {404},
    # A share already decided (or whose memory died meanwhile): 409.
    ("POST", "/v1/shares/{share_id}/approve"): {404, 409},
    ("POST", "/v1/shares/{share_id}/reject"): {404, 409},
    ("POST", "/v1/shares/{share_id}/revoke"): {404, 409},
    ("GET", "/v1/imports/{import_id}"): {404},
    # A part ahead of the upload, or an import no longer waiting for parts: 409.
    ("PUT", "/v1/imports/{import_id}/parts/{start}"): {404, 409},
    # Already done or abandoned: 409.
    ("POST", "/v1/todos/{todo_id}/done"): {404, 409},
    ("POST", "/v1/todos/{todo_id}/abandon"): {404, 409},
    # A name another person goes by: 409 (name_taken); a merged person: 409 (person_merged).
    ("POST", "/v1/people"): {200, 409},  # 201 created, 200 updated
    ("GET", "/v1/people/{person_id}"): {404},
    ("PATCH", "/v1/people/{person_id}"): {404, 409},
    # The same person twice: 400; one merged already: 409.
    ("POST", "/v1/person_proposals"): {404, 409},
    # Decided already, or a person it names was merged meanwhile: 409.
    ("POST", "/v1/person_proposals/{proposal_id}/approve"): {404, 409},
    ("POST", "/v1/person_proposals/{proposal_id}/reject"): {404, 409},
    # A brake held the tune (persona_brake), or the knob changed meanwhile (persona_changed).
    ("POST", "/v1/persona/tune"): {409},
    ("POST", "/v1/persona/revert"): {409},
    ("GET", "/v1/diary"): {404},
    # Folds unused for 30 days are removed.
    ("GET", "/v1/context/folds/{fold_id}"): {404},
    ("GET", "/v1/conversations/messages/{message_id}"): {404},
    ("DELETE", "/v1/conversations/messages/{message_id}"): {404},
    # A conversation with no turns (left) in the namespace: 404.
    ("DELETE", "/v1/conversations/{conversation_id}"): {404},
    ("POST", "/v1/conversations/forget"): {404},
    ("GET", "/v1/precious/{precious_id}"): {404},
    ("DELETE", "/v1/precious/{precious_id}"): {404},
    ("POST", "/v1/glossary"): {200},  # 201 created, 200 replaced
    ("GET", "/v1/glossary/{entry_id}"): {404},
    ("PATCH", "/v1/glossary/{entry_id}"): {404, 409},
    ("DELETE", "/v1/glossary/{entry_id}"): {404},
    ("GET", "/v1/cache/{namespace}/{key}"): {404},
    ("POST", "/oauth/register"): {429},
    ("GET", "/oauth/authorize"): {401},
    ("POST", "/oauth/token"): {401},
    # Expired, already answered, or never made: 404.
    ("GET", "/v1/oauth/requests/{request_id}"): {404},
    ("POST", "/v1/oauth/requests/{request_id}/decision"): {404},
    ("DELETE", "/v1/oauth/apps/{grant_id}"): {404},
    ("DELETE", "/v1/cache/{namespace}/{key}"): {404},
}
_SUCCESS = {200: "Updated or replaced (the same key existed)."}
# "stream": true answers with server-sent events; before 3.2, the schema is one event's.
SSE_EVENT = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "data": {"type": "string", "description": "A chat.completion.chunk object as JSON; [DONE] last."},
        "event": {"type": "string"},
    },
}
SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <key>"},
    "apiKey": {"type": "apiKey", "in": "header", "name": "x-api-key"},
}


def _checks_scope(route: Any) -> bool:
    """Whether the route depends on ``authenticate`` (``allowed(use_case)`` does)."""
    pending = [route.dependant]
    while pending:
        dependant = pending.pop()
        if dependant.call is auth.authenticate:
            return True
        pending.extend(dependant.dependencies)
    return False


def _needs_key(route: Any) -> bool:
    """Whether a request without a valid key is refused: by the Authentication
    middleware (every /v1 and /api path) or by the route's own dependency."""
    prefixes = getattr(auth, "PROTECTED_PREFIXES", ())
    return _checks_scope(route) or (bool(prefixes) and route.path_format.startswith(prefixes))


def _can_be_bad(operation: dict[str, Any]) -> bool:
    """Whether some request to the operation can fail validation (a 400)."""
    for parameter in operation.get("parameters", []):
        schema = {k: v for k, v in parameter.get("schema", {}).items() if k not in ("title", "description")}
        if parameter["in"] != "path" or schema != {"type": "string"}:
            return True
    return "requestBody" in operation


def statuses(route: Any, method: str, operation: dict[str, Any]) -> set[int]:
    """Every status the operation answers besides its default success."""
    found = set(OUTCOMES.get((method, route.path_format), set()))
    if _needs_key(route):
        found.add(401)
    if _checks_scope(route):
        found.add(403)
    if _can_be_bad(operation):
        found.add(400)
    if "requestBody" in operation:
        found.add(413)
    return found


def _response(status: int, route: Any, operation: dict[str, Any]) -> dict[str, Any]:
    if status < 400:
        default = next(iter(operation["responses"].values()))
        return {**default, "description": _SUCCESS[status]}
    if route.path_format.startswith(OAUTH_PREFIX):
        schema, description = _OAUTH_REF, _OAUTH_DESCRIPTIONS[status]
    else:
        chat = OUTCOMES.get(("POST", route.path_format)) is _UPSTREAM
        schema, description = _REF, (_CHAT_DESCRIPTIONS.get(status) if chat else None) or DESCRIPTIONS[status]
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": schema}}},
    }
    if status == 401:
        response["headers"] = {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}}
    return response


def _drop_validation_error(operation: dict[str, Any]) -> None:
    response = operation["responses"].get("422", {})
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    if schema.get("$ref", "").endswith("/HTTPValidationError"):
        del operation["responses"]["422"]


def amend(document: dict[str, Any], app: FastAPI) -> dict[str, Any]:
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    error = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(error.pop("$defs"))
    schemas[ERROR] = error
    schemas[OAUTH_ERROR] = OAuthErrorBody.model_json_schema()
    for route in flat_routes(app):
        if not isinstance(getattr(route, "original_route", route), APIRoute) or not route.include_in_schema:
            continue
        for method in route.methods:
            operation = document["paths"].get(route.path_format, {}).get(method.lower())
            if operation is None:
                continue
            _drop_validation_error(operation)
            if OUTCOMES.get((method, route.path_format)) is _UPSTREAM:
                content = operation["responses"]["200"].setdefault("content", {})
                content["text/event-stream"] = {"schema": SSE_EVENT}
            for status in sorted(statuses(route, method, operation)):
                operation["responses"].setdefault(str(status), _response(status, route, operation))
            if _needs_key(route):
                operation["security"] = [{name: []} for name in SECURITY_SCHEMES]
                components["securitySchemes"] = SECURITY_SCHEMES
    if "/HTTPValidationError" not in json.dumps(document["paths"]):
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
    return document


def install(app: FastAPI) -> None:
    """Amend the document FastAPI generates (once; it is cached on the app)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = amend(generate(), app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
