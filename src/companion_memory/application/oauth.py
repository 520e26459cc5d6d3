"""OAuth for remote MCP clients (oauth/): the protocol steps any client may take
(discovery, registration, authorization, tokens, revocation), the owner's consent and
connected apps, and access tokens as a source of :class:`Principal` for ``/mcp``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..domain.endpoints import MCP_PATHS, McpPath
from ..domain.scopes import MEMORY_READ, MEMORY_WRITE, OAUTH_CLIENT, OWNER
from ..errors import OAuthError
from ..oauth.codes import REQUEST_MINUTES
from ..runtime import Runtime
from .principal import OAUTH_TOKEN_PROFILE, Principal, principal_for
from .use_case import Input, Nothing, Output, use_case

SCOPES = [MEMORY_READ, MEMORY_WRITE]
# How long the owner has to answer a request, and so how long its consent cookie lives.
CONSENT_SECONDS = REQUEST_MINUTES * 60
Text = Annotated[str, Field(max_length=4096)]


class Issuer(Input):
    issuer: str = Field(description="This server's address as the client reached it.")


class ServerMetadata(Output):
    """RFC 8414 authorization server metadata."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str
    revocation_endpoint: str
    scopes_supported: list[str]
    response_types_supported: list[str]
    response_modes_supported: list[str]
    grant_types_supported: list[str]
    token_endpoint_auth_methods_supported: list[str]
    revocation_endpoint_auth_methods_supported: list[str]
    code_challenge_methods_supported: list[str]
    client_id_metadata_document_supported: bool
    authorization_response_iss_parameter_supported: bool


class ResourceQuery(Issuer):
    path: Literal["", McpPath] = Field(description="The resource's path; empty for the whole server.")


class ResourceMetadata(Output):
    """RFC 9728 protected resource metadata."""

    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str]
    bearer_methods_supported: list[str]
    resource_name: str


class ClientRegistration(Input):
    """RFC 7591 client metadata; what is not listed here is ignored."""

    redirect_uris: Annotated[list[Annotated[str, Field(max_length=2000)]], Field(default_factory=list, max_length=10)]
    client_name: Annotated[str | None, Field(max_length=1000)] = None
    client_uri: Annotated[str | None, Field(max_length=2000)] = None
    grant_types: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=10)] = None
    response_types: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=10)] = None
    scope: Annotated[str | None, Field(max_length=1000)] = None
    token_endpoint_auth_method: Annotated[str | None, Field(max_length=200)] = None


class Registration(ClientRegistration):
    address: str = Field(description="Where the request came from, for the rate limit.")


class ClientInformation(Output):
    """RFC 7591 §3.2.1: a public client (no secret; PKCE proves it). A field without a
    value is left out, not null: strict clients (the TypeScript SDK) refuse null."""

    client_id: str
    client_id_issued_at: int
    client_name: str
    redirect_uris: list[str]
    grant_types: list[str]
    response_types: list[str]
    token_endpoint_auth_method: Literal["none"]
    scope: str
    client_uri: str | None = None


class AuthorizationRequest(Issuer):
    params: dict[str, str] = Field(description="The query parameters, each once.")
    repeated: list[str] = Field(default_factory=list, description="Parameters that came more than once.")


class ConsentStarted(Output):
    """Where the browser goes next: the consent page, or (for a request refused after its
    client and redirect URI were found good) back to the client with the error."""

    location: str
    request_id: str | None = None
    csrf: str | None = Field(None, description="The consent cookie's value; set as a cookie, never in the body.")


class TokenRequest(Issuer):
    grant_type: Text | None = None
    code: Text | None = None
    redirect_uri: Text | None = None
    code_verifier: Text | None = None
    refresh_token: Text | None = None
    client_id: Text | None = None
    scope: Text | None = None
    resource: Text | None = None


class TokenAnswer(Output):
    access_token: str
    token_type: Literal["Bearer"]
    expires_in: int
    refresh_token: str
    scope: str


class Revocation(Input):
    token: Text | None = None
    token_type_hint: Text | None = None
    client_id: Text | None = None


class Acknowledged(Output):
    ok: bool = True


class RequestId(Input):
    id: Annotated[str, Field(min_length=1, max_length=100)]


class PendingConsent(Output):
    id: str
    client_id: str
    client_name: str = Field(description="As the client named itself; a registration proves nothing about it.")
    client_uri: str | None
    verified_host: str | None = Field(description="For a client named by its metadata document: that URL's host.")
    redirect_uri: str = Field(description="Where the browser goes with the answer.")
    scopes: list[str]
    resource: str
    expires_at: str


class ConsentDecision(RequestId, Issuer):
    approve: bool
    csrf: str | None = Field(None, description="The consent cookie set when the request began.")
    origin: str | None = Field(None, description="The Origin the browser sent, if any.")


class ConsentAnswer(Output):
    redirect_to: str = Field(description="Send the browser here: the client's redirect URI with a code or an error.")


class ConnectedApp(BaseModel):
    id: str = Field(description="The grant's id.")
    client_id: str
    client_name: str
    source: Literal["registered", "metadata_document"] | None
    redirect_uris: list[str]
    scopes: list[str]
    created_at: str
    last_used_at: str | None
    expires_at: str | None = Field(description="When its refresh token runs out, unless used before.")


class ConnectedApps(Output):
    apps: list[ConnectedApp]


class GrantId(Input):
    id: Annotated[str, Field(min_length=1, max_length=100)]


@use_case("oauth.server_metadata", OAUTH_CLIENT)
async def server_metadata(runtime: Runtime, _: Principal, where: Issuer) -> ServerMetadata:
    """Authorization server metadata (RFC 8414): the endpoints and what they accept."""
    base = where.issuer
    return ServerMetadata(
        issuer=base,
        authorization_endpoint=f"{base}/oauth/authorize",
        token_endpoint=f"{base}/oauth/token",
        registration_endpoint=f"{base}/oauth/register",
        revocation_endpoint=f"{base}/oauth/revoke",
        scopes_supported=SCOPES,
        response_types_supported=["code"],
        response_modes_supported=["query"],
        grant_types_supported=["authorization_code", "refresh_token"],
        token_endpoint_auth_methods_supported=["none"],
        revocation_endpoint_auth_methods_supported=["none"],
        code_challenge_methods_supported=["S256"],
        client_id_metadata_document_supported=True,
        authorization_response_iss_parameter_supported=True,
    )


@use_case("oauth.resource_metadata", OAUTH_CLIENT)
async def resource_metadata(runtime: Runtime, _: Principal, query: ResourceQuery) -> ResourceMetadata:
    """Protected resource metadata (RFC 9728): the MCP endpoint and who authorizes it."""
    return ResourceMetadata(
        resource=query.issuer + query.path,
        authorization_servers=[query.issuer],
        scopes_supported=SCOPES,
        bearer_methods_supported=["header"],
        resource_name="companion-memory",
    )


@use_case("oauth.register", OAUTH_CLIENT)
async def register(runtime: Runtime, _: Principal, registration: Registration) -> ClientInformation:
    """Dynamic client registration (RFC 7591), rate-limited per address."""
    metadata = registration.model_dump(exclude={"address"})
    return ClientInformation.model_validate(await runtime.oauth.registration.register(metadata, registration.address))


@use_case("oauth.authorize", OAUTH_CLIENT)
async def authorize(runtime: Runtime, _: Principal, request: AuthorizationRequest) -> ConsentStarted:
    """Checks an authorization request and keeps it for the owner's decision on the
    consent page."""
    owner_configured = bool(runtime.settings.CHATBOX_API_KEY)
    request_id, csrf = await runtime.oauth.authorization.start(
        request.params, request.repeated, request.issuer, owner_configured=owner_configured
    )
    location = f"{request.issuer}/admin/authorize.html?request={request_id}"
    return ConsentStarted(location=location, request_id=request_id, csrf=csrf)


@use_case("oauth.token", OAUTH_CLIENT)
async def token(runtime: Runtime, _: Principal, request: TokenRequest) -> TokenAnswer:
    """The token endpoint: a code and its PKCE verifier, or a refresh token, for a new
    access token and refresh token."""
    params = {k: v for k, v in request.model_dump(exclude={"issuer", "grant_type"}).items() if v is not None}
    if not request.grant_type:
        raise OAuthError("grant_type is required", code="invalid_request")
    if request.grant_type == "authorization_code":
        return TokenAnswer.model_validate(await runtime.oauth.tokens.exchange_code(params, request.issuer))
    if request.grant_type == "refresh_token":
        return TokenAnswer.model_validate(await runtime.oauth.tokens.refresh(params))
    raise OAuthError("grant_type must be authorization_code or refresh_token", code="unsupported_grant_type")


@use_case("oauth.revoke", OAUTH_CLIENT)
async def revoke(runtime: Runtime, _: Principal, revocation: Revocation) -> Acknowledged:
    """Token revocation (RFC 7009): a refresh token revokes its whole grant."""
    if not revocation.token:
        raise OAuthError("token is required", code="invalid_request")
    await runtime.oauth.tokens.revoke(revocation.token, revocation.client_id)
    return Acknowledged()


@use_case("oauth.consent", OWNER)
async def consent(runtime: Runtime, _: Principal, request: RequestId) -> PendingConsent:
    """An authorization request waiting for the owner: who asks, where the answer goes,
    and for what."""
    return PendingConsent.model_validate(await runtime.oauth.authorization.pending(request.id))


@use_case("oauth.decide", OWNER)
async def decide(runtime: Runtime, _: Principal, decision: ConsentDecision) -> ConsentAnswer:
    """The owner approves or denies an authorization request; the answer says where to
    send the browser."""
    location = await runtime.oauth.authorization.decide(
        decision.id, decision.approve, decision.issuer, csrf=decision.csrf, origin=decision.origin
    )
    return ConsentAnswer(redirect_to=location)


@use_case("oauth.apps", OWNER)
async def apps(runtime: Runtime, _: Principal, _query: Nothing) -> ConnectedApps:
    """The apps connected by OAuth: what each may do, and when it last used its access."""
    return ConnectedApps.model_validate({"apps": await runtime.oauth.apps.grants()}, from_attributes=True)


@use_case("oauth.disconnect", OWNER)
async def disconnect(runtime: Runtime, _: Principal, grant: GrantId) -> Acknowledged:
    """Revokes a connected app's grant: its tokens stop working at once."""
    await runtime.oauth.apps.revoke(grant.id)
    return Acknowledged()


async def token_principal(runtime: Runtime, access_token: str, issuer: str) -> Principal:
    """The caller an OAuth access token presented at ``/mcp`` stands for: the MCP key's
    rights, narrowed to the scope granted. ``OAuthError`` ``invalid_token`` otherwise."""
    owner = await runtime.oauth.tokens.authenticate(access_token, issuer)
    return principal_for(runtime.settings, OAUTH_TOKEN_PROFILE, owner.scopes & frozenset(SCOPES))


def resource_metadata_url(issuer: str, path: str) -> str:
    """Where the metadata of the MCP endpoint at ``path`` is (RFC 9728 §3.1)."""
    return f"{issuer}/.well-known/oauth-protected-resource{path if path in MCP_PATHS else ''}"
