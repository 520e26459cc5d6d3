"""The web around ``rpc.answer``: the routes at ``/mcp`` and ``/memory-mcp``, the key
(``Authorization: Bearer``, ``x-api-key`` or ``?token=``) or an OAuth access token
(``Authorization: Bearer`` only, as OAuth 2.1 allows), the body limit, and turning a
``Reply`` into a response.

A 401 says where the endpoint's protected resource metadata is (RFC 9728 §5.1), so an
OAuth client finds the authorization server from the refusal alone.

The query token is cut out of the request scope as soon as it is read, so nothing that
logs the request later (the local server's access log among them) sees it.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ...application.oauth import SCOPES, resource_metadata_url, token_principal
from ...application.principal import Principal
from ...domain.endpoints import MCP_PATHS
from ...errors import OAuthError
from ..auth import identify, presented_key
from ..limits import BodyTooLarge
from ..oauth import issuer_of
from .jsonrpc import FORBIDDEN, INVALID_REQUEST, UNAUTHORIZED, error_body
from .rpc import Reply, answer, failed
from .tools import TOOLS

log = logging.getLogger("companion_memory.mcp")

router = APIRouter(tags=["mcp"])

ALLOW = {"Allow": "POST, OPTIONS"}


class _RpcResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            # A lone surrogate echoed from the request (an id, a method or tool name): legal
            # in JSON text as an escape, not encodable as UTF-8.
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


def _response(reply: Reply) -> Response:
    if reply.body is None:
        return Response(status_code=reply.status, headers=dict(reply.headers))
    return _RpcResponse(reply.body, reply.status, headers=dict(reply.headers))


async def _options(request: Request) -> Response:
    """A plain OPTIONS; browsers' CORS preflights are answered by the app's CORS middleware."""
    return _response(Reply(204, headers=ALLOW))


async def _not_allowed(request: Request) -> Response:
    """GET (a standing SSE stream) and DELETE (ending a session): neither exists here."""
    message = (
        f"Method Not Allowed: {request.method} is not served here; send each JSON-RPC message as its own POST "
        "(this server keeps no sessions and opens no streams)"
    )
    return _response(Reply(405, error_body(None, INVALID_REQUEST, message), ALLOW))


async def _post(request: Request) -> Response:
    try:
        return _response(await _serve(request))
    except Exception:  # broad on purpose: the last line before a bare 500
        # Not reached by any known input; a JSON-RPC body all the same, and a 500 since the
        # request it answers is unknown.
        log.exception("MCP request failed")
        return _response(failed())


async def _serve(request: Request) -> Reply:
    principal = await _authenticate(request)
    if isinstance(principal, Reply):
        return principal
    try:
        body = await request.body()
    except BodyTooLarge as too_large:
        return Reply(413, error_body(None, INVALID_REQUEST, f"Request too large: {too_large.detail}"))
    return await answer(body, request.headers.items(), principal, request.app.state.runtime)


for _path in MCP_PATHS:
    router.add_api_route(_path, _post, methods=["POST"], include_in_schema=False)
    router.add_api_route(_path, _not_allowed, methods=["GET", "DELETE"], include_in_schema=False)
    router.add_api_route(_path, _options, methods=["OPTIONS"], include_in_schema=False)


def _forget_query_token(request: Request) -> str | None:
    """The ``?token=`` value, removed from the request scope so nothing later logs it."""
    token = request.query_params.get("token")
    if token is not None:
        kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        request.scope["query_string"] = urlencode(kept).encode()
    return token


def _challenge(request: Request, error: OAuthError | None = None) -> dict[str, str]:
    metadata = resource_metadata_url(issuer_of(request), request.url.path)
    params = ['realm="companion-memory"', f'resource_metadata="{metadata}"', f'scope="{" ".join(SCOPES)}"']
    if error is not None:
        description = error.message.replace('"', "'")
        params += [f'error="{error.code}"', f'error_description="{description}"']
    return {"WWW-Authenticate": "Bearer " + ", ".join(params)}


async def _authenticate(request: Request) -> Principal | Reply:
    query_token = _forget_query_token(request)
    key = presented_key(request.headers) or query_token
    if not key:
        missing = (
            "Unauthorized: send the key as Authorization: Bearer <key> or in the URL as ?token=<key>, "
            "or connect with OAuth"
        )
        return Reply(401, error_body(None, UNAUTHORIZED, missing), _challenge(request))
    principal = identify(request.app.state.runtime.settings, key)
    if principal is None:
        scheme, _, bearer = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or bearer.strip() != key:
            unknown = OAuthError("unknown API key", code="invalid_token", status=401)
            return Reply(
                401, error_body(None, UNAUTHORIZED, "Unauthorized: unknown API key"), _challenge(request, unknown)
            )
        try:
            principal = await token_principal(request.app.state.runtime, key, issuer_of(request))
        except OAuthError as refused:
            message = f"Unauthorized: unknown API key or OAuth token ({refused.message})"
            return Reply(401, error_body(None, UNAUTHORIZED, message), _challenge(request, refused))
    if not any(tool.scope in principal.scopes for tool in TOOLS.values()):
        forbidden = f"Forbidden: the {principal.profile} key may not use the memory tools (use MEMORY_MCP_API_KEY)"
        return Reply(403, error_body(None, FORBIDDEN, forbidden), {})
    return principal
