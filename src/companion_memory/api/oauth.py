"""OAuth for remote MCP clients: discovery under /.well-known, the protocol endpoints
under /oauth (forms in, RFC 6749 errors out: api/errors.py), and the owner's consent and
connected apps under /v1/oauth (the owner key, as the rest of the API).

The consent cookie binds an authorization request to the browser that followed the
client's link to /oauth/authorize: it is HttpOnly, SameSite=Strict and scoped to that
request's own path, so another site can neither read it nor make the browser send it."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any
from urllib.parse import parse_qsl, unquote

from fastapi import APIRouter, Body, Path, Query, Request, Response

from ..application import oauth
from ..application.oauth import (
    CONSENT_SECONDS,
    Acknowledged,
    AuthorizationRequest,
    ClientInformation,
    ClientRegistration,
    ConnectedApps,
    ConsentAnswer,
    ConsentDecision,
    ConsentStarted,
    GrantId,
    Issuer,
    PendingConsent,
    Registration,
    RequestId,
    ResourceMetadata,
    ResourceQuery,
    Revocation,
    ServerMetadata,
    TokenAnswer,
    TokenRequest,
)
from ..application.principal import Principal
from ..application.use_case import Input, Nothing
from ..domain.addresses import forwarded_client
from ..domain.endpoints import MCP_PATHS
from ..errors import OAuthError
from .auth import allowed, anyone
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["oauth"], route_class=JsonRoute)

CONSENT_COOKIE = "cm_consent"
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_TEXT = {"type": "string", "maxLength": 4096}


def issuer_of(request: Request) -> str:
    """This server's address as its clients reach it: PUBLIC_URL, else the request's own."""
    public: str = request.app.state.runtime.settings.PUBLIC_URL.strip().rstrip("/")
    return public or f"{request.url.scheme}://{request.url.netloc}"


def client_address(request: Request) -> str:
    """Where the request came from: what the platform says where it vouches for it (the
    Worker's cf-connecting-ip), else the socket's peer, or behind TRUSTED_PROXIES the
    client they forwarded for. A header a client may set is never believed on its own."""
    runtime = request.app.state.runtime
    vouched = runtime.client_address_header and request.headers.get(runtime.client_address_header)
    if vouched:
        return str(vouched)
    peer = request.client.host if request.client else ""
    return forwarded_client(peer, request.headers.getlist("x-forwarded-for"), runtime.settings.TRUSTED_PROXIES)


def _form_body(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema = {"type": "object", "required": required, "properties": properties}
    return {"requestBody": {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": schema}}}}


async def _form(request: Request) -> dict[str, str]:
    """The form body (each parameter once, RFC 6749 §3.2), with the client_id of an
    ``Authorization: Basic`` header when the form has none."""
    try:
        pairs = parse_qsl((await request.body()).decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise OAuthError("the body is not UTF-8 form data", code="invalid_request") from None
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise OAuthError(f"parameters may appear only once: {', '.join(repeated)}", code="invalid_request")
    form = dict(pairs)
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "basic" and "client_id" not in form:
        try:
            form["client_id"] = unquote(base64.b64decode(credentials, validate=True).decode().partition(":")[0])
        except (binascii.Error, UnicodeDecodeError):
            raise OAuthError("malformed Basic credentials", code="invalid_client", status=401) from None
    return form


# ------------------------------------------------------------------ discovery


@router.get("/.well-known/oauth-authorization-server")
async def server_metadata(
    runtime: RuntimeDep, request: Request, principal: Annotated[Principal, anyone(oauth.server_metadata)]
) -> ServerMetadata:
    """Authorization server metadata (RFC 8414)."""
    return await oauth.server_metadata(runtime, principal, Issuer(issuer=issuer_of(request)))


def _resource_route(path: str) -> Any:
    async def resource_metadata(
        runtime: RuntimeDep, request: Request, principal: Annotated[Principal, anyone(oauth.resource_metadata)]
    ) -> ResourceMetadata:
        query = ResourceQuery(issuer=issuer_of(request), path=path)  # type: ignore[arg-type]
        return await oauth.resource_metadata(runtime, principal, query)

    resource_metadata.__doc__ = f"Protected resource metadata (RFC 9728) of {path or 'the whole server'}."
    return resource_metadata


for _path in ("", *MCP_PATHS):
    router.add_api_route(
        "/.well-known/oauth-protected-resource" + _path,
        _resource_route(_path),
        methods=["GET"],
        response_model=ResourceMetadata,
        name=f"resource_metadata{_path.replace('/', '_').replace('-', '_')}",
    )


# ------------------------------------------------------------------ the protocol endpoints


@router.post("/oauth/register", status_code=201, response_model_exclude_none=True)
async def register(
    runtime: RuntimeDep,
    request: Request,
    principal: Annotated[Principal, anyone(oauth.register)],
    metadata: Annotated[ClientRegistration, Body()],
) -> ClientInformation:
    """Dynamic client registration (RFC 7591): a public client, rate-limited per address."""
    registration = Registration(**metadata.model_dump(), address=client_address(request))
    return await oauth.register(runtime, principal, registration)


@router.get("/oauth/authorize", status_code=303, response_model_exclude={"csrf"}, response_model_exclude_none=True)
async def authorize(
    runtime: RuntimeDep,
    request: Request,
    response: Response,
    principal: Annotated[Principal, anyone(oauth.authorize)],
    response_type: Annotated[str | None, Query(max_length=100)] = None,
    client_id: Annotated[str | None, Query(max_length=2000)] = None,
    redirect_uri: Annotated[str | None, Query(max_length=2000)] = None,
    code_challenge: Annotated[str | None, Query(max_length=200)] = None,
    code_challenge_method: Annotated[str | None, Query(max_length=100)] = None,
    scope: Annotated[str | None, Query(max_length=1000)] = None,
    state: Annotated[str | None, Query(max_length=2000)] = None,
    resource: Annotated[str | None, Query(max_length=2000)] = None,
) -> ConsentStarted:
    """The authorization endpoint: a good request goes to the consent page on the admin
    panel (303); one with an unknown client or an unregistered redirect URI is refused
    here (400) and never redirected; anything else goes back to the client's redirect
    URI with the error (303)."""
    query = request.query_params
    names = [name for name, _ in query.multi_items()]
    started = await oauth.authorize(
        runtime,
        principal,
        AuthorizationRequest(
            issuer=issuer_of(request),
            params={name: query[name] for name in names},
            repeated=sorted({name for name in names if names.count(name) > 1}),
        ),
    )
    response.headers.update({"Location": started.location, **NO_STORE})
    if started.request_id and started.csrf:
        response.set_cookie(
            CONSENT_COOKIE,
            started.csrf,
            max_age=CONSENT_SECONDS,
            path=f"/v1/oauth/requests/{started.request_id}",
            secure=started.location.startswith("https://"),
            httponly=True,
            samesite="strict",
        )
    return started


@router.post(
    "/oauth/token",
    openapi_extra=_form_body(
        ["grant_type"],
        {
            "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]},
            **{
                name: _TEXT
                for name in ("code", "redirect_uri", "code_verifier", "refresh_token", "client_id", "scope", "resource")
            },
        },
    ),
)
async def token(
    runtime: RuntimeDep, request: Request, response: Response, principal: Annotated[Principal, anyone(oauth.token)]
) -> TokenAnswer:
    """The token endpoint (RFC 6749 §3.2): ``authorization_code`` with the PKCE verifier,
    or ``refresh_token`` (each refresh token works once; a second use revokes the grant)."""
    form = await _form(request)
    response.headers.update(NO_STORE)
    return await oauth.token(runtime, principal, TokenRequest(issuer=issuer_of(request), **form))


@router.post(
    "/oauth/revoke",
    openapi_extra=_form_body(["token"], {"token": _TEXT, "token_type_hint": _TEXT, "client_id": _TEXT}),
)
async def revoke(
    runtime: RuntimeDep, request: Request, principal: Annotated[Principal, anyone(oauth.revoke)]
) -> Acknowledged:
    """Token revocation (RFC 7009): a refresh token revokes its whole grant. The answer is
    the same whether or not the token was known."""
    return await oauth.revoke(runtime, principal, Revocation(**await _form(request)))


# ------------------------------------------------------------------ the owner's side (the panel)

RequestPath = Annotated[str, Path(min_length=1, max_length=100)]


class ConsentChoice(Input):
    approve: bool


@router.get("/v1/oauth/requests/{request_id}")
async def consent(
    runtime: RuntimeDep, request_id: RequestPath, principal: Annotated[Principal, allowed(oauth.consent)]
) -> PendingConsent:
    """An authorization request waiting for the owner (the consent page shows it)."""
    return await oauth.consent(runtime, principal, RequestId(id=request_id))


@router.post("/v1/oauth/requests/{request_id}/decision")
async def decide(
    runtime: RuntimeDep,
    request: Request,
    request_id: RequestPath,
    principal: Annotated[Principal, allowed(oauth.decide)],
    choice: Annotated[ConsentChoice, Body()],
) -> ConsentAnswer:
    """Approve or deny: the answer is where to send the browser. Only the browser that
    began the request may answer it (its consent cookie), and only from this origin."""
    decision = ConsentDecision(
        id=request_id,
        issuer=issuer_of(request),
        approve=choice.approve,
        csrf=request.cookies.get(CONSENT_COOKIE),
        origin=request.headers.get("origin"),
    )
    return await oauth.decide(runtime, principal, decision)


@router.get("/v1/oauth/apps")
async def apps(runtime: RuntimeDep, principal: Annotated[Principal, allowed(oauth.apps)]) -> ConnectedApps:
    """The apps connected by OAuth, the latest used first."""
    return await oauth.apps(runtime, principal, Nothing())


@router.delete("/v1/oauth/apps/{grant_id}")
async def disconnect(
    runtime: RuntimeDep,
    grant_id: Annotated[str, Path(min_length=1, max_length=100)],
    principal: Annotated[Principal, allowed(oauth.disconnect)],
) -> Acknowledged:
    """Disconnect an app: its tokens stop working at once."""
    return await oauth.disconnect(runtime, principal, GrantId(id=grant_id))
