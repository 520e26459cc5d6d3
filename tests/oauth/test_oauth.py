"""OAuth for remote MCP clients (issue 18).

The happy path runs the official MCP Python SDK's ``OAuthClientProvider`` against our
server on a real port: it discovers from the 401, registers, sends the browser to the
authorization endpoint (the test plays the browser and the owner, through the same HTTP
endpoints the consent page calls), exchanges the code, calls tools and refreshes.

Every refusal runs in-process on both databases with a clock the test moves, and checks
the OAuth error the client is given."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import ipaddress
import json
import secrets
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
import respx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from companion_memory.clock import FixedClock
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.conftest import MCP_KEY, OWNER_KEY, app_on, auth
from tests.live_server import LiveServer

ROOT = Path(__file__).resolve().parents[2]
REDIRECT = "http://localhost:3030/callback"
ISSUER = "http://test"
OWNER = auth(OWNER_KEY)


# ------------------------------------------------------------------ the official client, end to end


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    settings = Settings(CHATBOX_API_KEY=OWNER_KEY, MEMORY_MCP_API_KEY=MCP_KEY)
    live = LiveServer(settings, tmp_path_factory.mktemp("oauth") / "data", embedder)
    yield live
    live.stop()


class Storage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Owner:
    """The browser and the person in it: follows the client's link to the consent page,
    and answers there with the owner key, as admin/js/authorize.js does."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.sent_to: str | None = None
        self.shown: dict[str, Any] = {}

    async def redirect(self, url: str) -> None:
        self.sent_to = url

    async def callback(self) -> AuthorizationCodeResult:
        assert self.sent_to is not None
        async with httpx.AsyncClient(base_url=self.base_url, timeout=30) as browser:
            consent_page = await browser.get(self.sent_to)
            assert consent_page.status_code == 303, consent_page.text
            location = consent_page.headers["location"]
            assert location.startswith(self.base_url + "/admin/authorize.html?request=")
            request_id = parse_qs(urlsplit(location).query)["request"][0]
            self.shown = (await browser.get(f"/v1/oauth/requests/{request_id}", headers=OWNER)).json()
            decision = await browser.post(
                f"/v1/oauth/requests/{request_id}/decision",
                json={"approve": True},
                headers={**OWNER, "Origin": self.base_url},
            )
            assert decision.status_code == 200, decision.text
        answer = parse_qs(urlsplit(decision.json()["redirect_to"]).query)
        return AuthorizationCodeResult(code=answer["code"][0], state=answer["state"][0], iss=answer["iss"][0])


async def test_the_official_client_connects_by_url_alone(server: LiveServer) -> None:
    storage, owner = Storage(), Owner(server.url)
    provider = OAuthClientProvider(
        server_url=server.url + "/mcp",
        client_metadata=OAuthClientMetadata(client_name="Phone app", redirect_uris=[REDIRECT]),  # type: ignore[list-item]
        storage=storage,
        redirect_handler=owner.redirect,
        callback_handler=owner.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(server.url + "/mcp", http_client=http), mode="auto") as client,
    ):
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "memory_upsert" in names and "memory_export" not in names  # the MCP key's rights
        written = await client.call_tool(
            "memory_upsert", {"fact_key": "drink", "content": "The owner drinks oolong in the morning."}
        )
        assert not written.is_error, written
        assert owner.shown["client_name"] == "Phone app" and owner.shown["redirect_uri"] == REDIRECT
        assert owner.shown["scopes"] == ["memory:read", "memory:write"]
        assert storage.client_info is not None and storage.client_info.token_endpoint_auth_method == "none"
        assert storage.tokens is not None and storage.tokens.refresh_token
        first = storage.tokens

        provider.context.token_expiry_time = 1.0  # the client believes its access token ran out: it refreshes
        found = await client.call_tool("memory_search", {"query": "oolong"})
        assert not found.is_error and "oolong" in json.dumps(found.structured_content)
        assert storage.tokens.access_token != first.access_token
        assert storage.tokens.refresh_token != first.refresh_token

    async with httpx.AsyncClient(base_url=server.url, timeout=30) as panel:
        apps = (await panel.get("/v1/oauth/apps", headers=OWNER)).json()["apps"]
    assert [app["client_name"] for app in apps] == ["Phone app"] and apps[0]["last_used_at"]


def test_the_typescript_sdk_connects_too(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    """tests/oauth_ts_client.mjs: the TypeScript SDK's auth() and its transport's authProvider."""
    node = shutil.which("node")
    assert node and (ROOT / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), (
        "needs Node.js and `npm ci` (scripts/test runs it)"
    )
    # Node's fetch keeps idle connections longer than the local server's default 5 s
    # keep-alive: on a busy machine it sent a request on a connection the server had just
    # closed ("other side closed").
    settings = Settings(CHATBOX_API_KEY=OWNER_KEY, MEMORY_MCP_API_KEY=MCP_KEY, SERVER_KEEP_ALIVE_SECONDS=75)
    live = LiveServer(settings, tmp_path / "data", embedder)
    try:
        done = subprocess.run(
            [node, "tests/oauth_ts_client.mjs", live.url, OWNER_KEY],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        live.stop()
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["shown"]["client_name"] == "TypeScript app" and seen["shown"]["resource"] == live.url + "/mcp"
    assert "memory_upsert" in seen["tools"] and "memory_export" not in seen["tools"]
    assert seen["wrote"] and seen["refreshed"] and seen["rotated"] and seen["found"], seen


async def test_keys_still_work_on_mcp_beside_oauth(server: LiveServer) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        by_header = await http.post("/mcp", json=ping, headers=auth(MCP_KEY))
        by_query = await http.post(f"/mcp?token={MCP_KEY}", json=ping)
        rest = await http.get("/v1/memories", headers=auth(MCP_KEY))
    assert by_header.status_code == by_query.status_code == 200
    assert rest.status_code == 200


# ------------------------------------------------------------------ discovery


async def test_a_401_from_mcp_leads_to_the_metadata(client: httpx.AsyncClient) -> None:
    for path in ("/mcp", "/memory-mcp"):
        refused = await client.post(path, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{ISSUER}/.well-known/oauth-protected-resource{path}"' in challenge
        document = (await client.get(f"/.well-known/oauth-protected-resource{path}")).json()
        assert document["resource"] == ISSUER + path and document["authorization_servers"] == [ISSUER]
    root = (await client.get("/.well-known/oauth-protected-resource")).json()
    assert root["resource"] == ISSUER
    metadata = (await client.get("/.well-known/oauth-authorization-server")).json()
    assert metadata["issuer"] == ISSUER
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["registration_endpoint"] == ISSUER + "/oauth/register"
    assert metadata["token_endpoint"] == ISSUER + "/oauth/token"
    assert metadata["revocation_endpoint"] == ISSUER + "/oauth/revoke"
    assert metadata["client_id_metadata_document_supported"] is True


async def test_public_url_names_the_server_behind_a_proxy(runtime: Runtime, client: httpx.AsyncClient) -> None:
    runtime.settings = runtime.settings.model_copy(update={"PUBLIC_URL": "https://memory.example.com/"})
    metadata = (await client.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert metadata["resource"] == "https://memory.example.com/mcp"


# ------------------------------------------------------------------ the flow, piece by piece


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    return verifier, challenge


async def register(client: httpx.AsyncClient, **metadata: Any) -> str:
    body = {"client_name": "Test app", "redirect_uris": [REDIRECT], **metadata}
    response = await client.post("/oauth/register", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["client_id"])


def authorize_params(client_id: str, challenge: str, **overrides: str | None) -> dict[str, str]:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-42",
        "resource": ISSUER + "/mcp",
        **overrides,
    }
    return {k: v for k, v in params.items() if v is not None}


class Consent:
    def __init__(self, response: httpx.Response) -> None:
        assert response.status_code == 303, response.text
        self.location = response.headers["location"]
        self.request_id = parse_qs(urlsplit(self.location).query)["request"][0]
        cookie = response.headers["set-cookie"]
        assert (
            "HttpOnly" in cookie
            and "SameSite=strict" in cookie
            and f"Path=/v1/oauth/requests/{self.request_id}" in cookie
        )
        self.cookie = cookie.split(";")[0].split("=", 1)[1]
        assert response.json() == {
            "location": self.location,
            "request_id": self.request_id,
        }  # the cookie only in the cookie

    async def answer(
        self, client: httpx.AsyncClient, approve: bool = True, *, cookie: str | None = "same", origin: str = ISSUER
    ) -> httpx.Response:
        headers = {**OWNER, "Origin": origin}
        if cookie is not None:
            headers["Cookie"] = f"cm_consent={self.cookie if cookie == 'same' else cookie}"
        return await client.post(
            f"/v1/oauth/requests/{self.request_id}/decision", json={"approve": approve}, headers=headers
        )


async def start(client: httpx.AsyncClient, params: dict[str, str]) -> Consent:
    consent = Consent(await client.get("/oauth/authorize", params=params))
    client.cookies.clear()  # each answer below sends exactly the cookie it means to
    return consent


def redirected(url: str) -> dict[str, str]:
    assert url.startswith(REDIRECT + "?"), url
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


async def code_for(client: httpx.AsyncClient, **overrides: str | None) -> tuple[str, str, str]:
    """A registered client, an approved request: (client_id, code, verifier)."""
    client_id = await register(client)
    verifier, challenge = pkce()
    consent = await start(client, authorize_params(client_id, challenge, **overrides))
    answered = await consent.answer(client)
    assert answered.status_code == 200, answered.text
    answer = redirected(answered.json()["redirect_to"])
    assert answer["state"] == "st-42" and answer["iss"] == ISSUER
    return client_id, answer["code"], verifier


async def token(client: httpx.AsyncClient, **form: str) -> httpx.Response:
    return await client.post("/oauth/token", data=form)


async def tokens_for(client: httpx.AsyncClient, **overrides: str | None) -> tuple[str, dict[str, Any]]:
    client_id, code, verifier = await code_for(client, **overrides)
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    return client_id, response.json()


def refused(response: httpx.Response, error: str, status: int = 400) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error, body
    return str(body["error_description"])


async def mcp(client: httpx.AsyncClient, access_token: str, **headers: str) -> httpx.Response:
    return await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {access_token}", "MCP-Protocol-Version": "2025-11-25", **headers},
    )


async def test_an_access_token_has_the_mcp_keys_rights_on_mcp_only(client: httpx.AsyncClient) -> None:
    _, tokens = await tokens_for(client)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
    assert tokens["scope"] == "memory:read memory:write"
    listed = await mcp(client, tokens["access_token"])
    assert listed.status_code == 200, listed.text
    names = {tool["name"] for tool in listed.json()["result"]["tools"]}
    keyed = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={**auth(MCP_KEY), "MCP-Protocol-Version": "2025-11-25"},
    )
    assert names == {tool["name"] for tool in keyed.json()["result"]["tools"]}
    # Not a key: REST does not take it, and neither does the URL.
    assert (await client.get("/v1/memories", headers=auth(tokens["access_token"]))).status_code == 401
    in_url = await client.post(
        f"/mcp?token={tokens['access_token']}", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert in_url.status_code == 401


async def test_a_read_only_grant_gets_the_read_tools(client: httpx.AsyncClient) -> None:
    client_id, code, verifier = await code_for(client, scope="memory:read")
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert response.json()["scope"] == "memory:read"
    names = {tool["name"] for tool in (await mcp(client, response.json()["access_token"])).json()["result"]["tools"]}
    assert "memory_search" in names and "memory_upsert" not in names


async def test_the_consent_page_shows_who_asks_and_where_the_answer_goes(client: httpx.AsyncClient) -> None:
    client_id = await register(client, client_name="Claude")
    consent = await start(client, authorize_params(client_id, pkce()[1]))
    assert consent.location == f"{ISSUER}/admin/authorize.html?request={consent.request_id}"
    assert (await client.get(f"/v1/oauth/requests/{consent.request_id}")).status_code == 401
    assert (await client.get(f"/v1/oauth/requests/{consent.request_id}", headers=auth(MCP_KEY))).status_code == 403
    shown = (await client.get(f"/v1/oauth/requests/{consent.request_id}", headers=OWNER)).json()
    assert shown["client_name"] == "Claude" and shown["redirect_uri"] == REDIRECT and shown["verified_host"] is None
    assert shown["resource"] == ISSUER + "/mcp"


PANEL_FILES = ("/admin/", "/admin/authorize.html", "/admin/js/authorize.js", "/admin/css/app.css", "/memory-admin/")


def worker_panel_headers() -> dict[str, str]:
    """What ``admin/_headers`` tells Workers static assets to send with every file."""
    lines = (ROOT / "admin" / "_headers").read_text().splitlines()
    rules = [line for line in lines if line.strip() and not line.startswith("#")]
    assert rules[0] == "/*", "one rule, for every file"
    return dict(line.strip().split(": ", 1) for line in rules[1:])


async def test_every_panel_file_refuses_to_be_framed(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    """The consent page in another site's frame could be clicked through: every file of
    the panel says frame-ancestors 'none', nosniff and no-referrer, on the local server
    and (admin/_headers) on the Worker's static assets alike."""
    from companion_memory.adapters.local.runtime import build_local_runtime
    from companion_memory.hosts.local_server import create_local_app

    runtime = await build_local_runtime(Settings(CHATBOX_API_KEY=OWNER_KEY), tmp_path, embedder=embedder)
    transport = httpx.ASGITransport(app=create_local_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url=ISSUER) as panel:
        for path in PANEL_FILES:
            response = await panel.get(path)
            assert response.status_code == 200, path
            assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
            assert response.headers["x-content-type-options"] == "nosniff", path
            assert response.headers["referrer-policy"] == "no-referrer", path
            assert {name: response.headers[name] for name in worker_panel_headers()} == worker_panel_headers()
        assert (await panel.get("/admin/_headers")).status_code == 404  # Workers do not serve it either
    # A policy a file already has is kept, and only added to.
    from companion_memory.api.panel_headers import merged_policy

    assert merged_policy("default-src 'self'") == "default-src 'self'; frame-ancestors 'none'"
    assert merged_policy("frame-ancestors 'self'; img-src *") == "frame-ancestors 'self'; img-src *"


# ------------------------------------------------------------------ refusals


async def test_without_an_owner_key_nobody_can_approve(runtime: Runtime, client: httpx.AsyncClient) -> None:
    client_id = await register(client)
    runtime.settings = runtime.settings.model_copy(update={"CHATBOX_API_KEY": ""})
    response = await client.get("/oauth/authorize", params=authorize_params(client_id, pkce()[1]))
    assert redirected(response.headers["location"])["error"] == "temporarily_unavailable"


async def test_a_wrong_pkce_verifier_is_refused(client: httpx.AsyncClient) -> None:
    client_id, code, _ = await code_for(client)
    other, _ = pkce()
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=other,
    )
    assert "code_verifier" in refused(response, "invalid_grant")
    missing = await token(
        client, grant_type="authorization_code", code=code, redirect_uri=REDIRECT, client_id=client_id
    )
    refused(missing, "invalid_request")


@pytest.mark.parametrize(
    "overrides",
    [
        {"code_challenge": None, "code_challenge_method": None},
        {"code_challenge_method": None},
        {"code_challenge_method": "plain"},
        {"code_challenge": "short"},
    ],
    ids=["no-pkce", "no-method", "plain", "malformed"],
)
async def test_an_authorization_without_s256_pkce_goes_back_refused(
    client: httpx.AsyncClient, overrides: dict[str, str | None]
) -> None:
    client_id = await register(client)
    response = await client.get("/oauth/authorize", params=authorize_params(client_id, pkce()[1], **overrides))
    assert response.status_code == 303 and "set-cookie" not in response.headers
    answer = redirected(response.headers["location"])
    assert answer["error"] == "invalid_request" and answer["state"] == "st-42" and answer["iss"] == ISSUER


@pytest.mark.parametrize(
    "redirect_uri",
    [
        "https://evil.example/callback",
        REDIRECT + "/more",
        REDIRECT[:-1],
        REDIRECT + "?next=https://evil.example",
        "http://localhost:3030/%63allback",
        "http://LOCALHOST:3030/callback",
    ],
)
async def test_an_unregistered_redirect_uri_is_never_followed(client: httpx.AsyncClient, redirect_uri: str) -> None:
    client_id = await register(client)
    response = await client.get(
        "/oauth/authorize", params=authorize_params(client_id, pkce()[1], redirect_uri=redirect_uri)
    )
    assert "location" not in response.headers and "set-cookie" not in response.headers
    assert "redirect_uri" in refused(response, "invalid_request")


async def test_an_unknown_client_is_never_redirected(client: httpx.AsyncClient) -> None:
    response = await client.get(
        "/oauth/authorize", params=authorize_params("no-such-client", pkce()[1], redirect_uri="https://evil.example/")
    )
    assert "location" not in response.headers
    refused(response, "invalid_client", 401)
    repeated = await client.get(
        "/oauth/authorize?" + "&".join(f"client_id={c}" for c in (await register(client), "x")), follow_redirects=False
    )
    assert "location" not in repeated.headers and repeated.status_code == 400


async def test_the_redirect_uri_at_the_token_endpoint_must_be_the_same(client: httpx.AsyncClient) -> None:
    client_id, code, verifier = await code_for(client)
    for other in (REDIRECT + "/", "http://localhost:3030/%63allback", None):
        form = {"grant_type": "authorization_code", "code": code, "client_id": client_id, "code_verifier": verifier}
        if other:
            form["redirect_uri"] = other
        refused(await token(client, **form), "invalid_grant")


async def test_a_code_works_once_and_its_second_use_revokes_the_tokens(client: httpx.AsyncClient) -> None:
    client_id, code, verifier = await code_for(client)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    first = await token(client, **form)
    assert first.status_code == 200
    assert "already used" in refused(await token(client, **form), "invalid_grant")
    assert (await mcp(client, first.json()["access_token"])).status_code == 401
    refresh = await token(
        client, grant_type="refresh_token", refresh_token=first.json()["refresh_token"], client_id=client_id
    )
    refused(refresh, "invalid_grant")


async def test_a_code_expires(client: httpx.AsyncClient, clock: FixedClock) -> None:
    client_id, code, verifier = await code_for(client)
    clock.advance(seconds=121)
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
    )
    assert "expired" in refused(response, "invalid_grant")


async def test_a_code_belongs_to_its_client(client: httpx.AsyncClient) -> None:
    _, code, verifier = await code_for(client)
    thief = await register(client)
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=thief,
        code_verifier=verifier,
    )
    refused(response, "invalid_grant")
    unknown = await token(client, grant_type="refresh_token", refresh_token="x", client_id="nobody")
    refused(unknown, "invalid_client", 401)


async def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_grant(client: httpx.AsyncClient) -> None:
    client_id, tokens = await tokens_for(client)
    rotated = await token(
        client, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id
    )
    assert rotated.status_code == 200, rotated.text
    fresh = rotated.json()
    assert fresh["refresh_token"] != tokens["refresh_token"] and fresh["access_token"] != tokens["access_token"]
    assert (await mcp(client, fresh["access_token"])).status_code == 200
    reused = await token(client, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id)
    assert "revoked" in refused(reused, "invalid_grant")
    # The whole grant: the tokens the honest rotation gave are gone too.
    assert (await mcp(client, fresh["access_token"])).status_code == 401
    again = await token(client, grant_type="refresh_token", refresh_token=fresh["refresh_token"], client_id=client_id)
    refused(again, "invalid_grant")
    assert (await client.get("/v1/oauth/apps", headers=OWNER)).json()["apps"] == []


async def call_tool(
    client: httpx.AsyncClient, access_token: str, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    response = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
        headers={"Authorization": f"Bearer {access_token}", "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


async def test_a_refresh_may_ask_for_less_and_gets_only_that(client: httpx.AsyncClient) -> None:
    """RFC 6749 §6: the new access token has the narrower scope asked for, and cannot
    write; the new refresh token still carries the whole grant."""
    client_id, tokens = await tokens_for(client)
    narrowed = await token(
        client,
        grant_type="refresh_token",
        refresh_token=tokens["refresh_token"],
        client_id=client_id,
        scope="memory:read",
    )
    assert narrowed.status_code == 200, narrowed.text
    reader = narrowed.json()
    assert reader["scope"] == "memory:read"
    names = {tool["name"] for tool in (await mcp(client, reader["access_token"])).json()["result"]["tools"]}
    assert "memory_search" in names and "memory_upsert" not in names
    write = {"fact_key": "pet.name", "content": "The cat is called Miso"}
    denied = await call_tool(client, reader["access_token"], "memory_upsert", write)
    assert denied["isError"] is True and "needs 'memory:write'" in denied["content"][0]["text"], denied
    assert not (await call_tool(client, reader["access_token"], "memory_search", {"query": "cat"})).get("isError")
    # Never wider than the grant, and the next refresh may have all of the grant again.
    widened = await token(
        client,
        grant_type="refresh_token",
        refresh_token=reader["refresh_token"],
        client_id=client_id,
        scope="memory:read memory:write",
    )
    assert widened.status_code == 200 and widened.json()["scope"] == "memory:read memory:write"
    assert not (await call_tool(client, widened.json()["access_token"], "memory_upsert", write)).get("isError")


async def test_a_refresh_cannot_widen_a_read_only_grant(client: httpx.AsyncClient) -> None:
    client_id, first = await tokens_for(client, scope="memory:read")
    refresh = first["refresh_token"]
    wider = await token(
        client, grant_type="refresh_token", refresh_token=refresh, client_id=client_id, scope="memory:write"
    )
    refused(wider, "invalid_scope")
    same = await token(
        client, grant_type="refresh_token", refresh_token=refresh, client_id=client_id, scope="offline_access"
    )
    assert same.status_code == 200 and same.json()["scope"] == "memory:read"


async def test_a_token_for_another_resource_is_refused(client: httpx.AsyncClient) -> None:
    client_id = await register(client)
    elsewhere = await client.get(
        "/oauth/authorize", params=authorize_params(client_id, pkce()[1], resource="https://other.example/mcp")
    )
    assert redirected(elsewhere.headers["location"])["error"] == "invalid_target"
    client_id, code, verifier = await code_for(client)
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=client_id,
        code_verifier=verifier,
        resource="https://other.example/mcp",
    )
    refused(response, "invalid_target")
    _, tokens = await tokens_for(client)
    # The same token presented to a server at another address: not its audience.
    other_host = await mcp(client, tokens["access_token"], Host="other.example")
    assert other_host.status_code == 401
    assert 'error="invalid_token"' in other_host.headers["www-authenticate"]
    assert (await mcp(client, tokens["access_token"])).status_code == 200


async def test_an_access_token_expires(client: httpx.AsyncClient, clock: FixedClock) -> None:
    _, tokens = await tokens_for(client)
    clock.advance(minutes=61)
    response = await mcp(client, tokens["access_token"])
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert "expired" in response.json()["error"]["message"]


async def test_a_client_revokes_its_grant(client: httpx.AsyncClient) -> None:
    client_id, tokens = await tokens_for(client)
    unknown = await client.post("/oauth/revoke", data={"token": "nothing-like-it", "client_id": client_id})
    assert unknown.status_code == 200
    other = await register(client)
    assert (
        await client.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": other})
    ).status_code == 200
    assert (await mcp(client, tokens["access_token"])).status_code == 200  # another client's revocation changes nothing
    response = await client.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": client_id})
    assert response.status_code == 200
    assert (await mcp(client, tokens["access_token"])).status_code == 401
    refresh = await token(
        client, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=client_id
    )
    refused(refresh, "invalid_grant")
    refused(await client.post("/oauth/revoke", data={}), "invalid_request")


async def test_the_owner_disconnects_an_app(client: httpx.AsyncClient) -> None:
    _, tokens = await tokens_for(client)
    await mcp(client, tokens["access_token"])
    apps = (await client.get("/v1/oauth/apps", headers=OWNER)).json()["apps"]
    assert len(apps) == 1 and apps[0]["client_name"] == "Test app" and apps[0]["last_used_at"]
    assert (await client.delete(f"/v1/oauth/apps/{apps[0]['id']}", headers=auth(MCP_KEY))).status_code == 403
    assert (await client.delete(f"/v1/oauth/apps/{apps[0]['id']}", headers=OWNER)).status_code == 200
    assert (await mcp(client, tokens["access_token"])).status_code == 401
    assert (await client.get("/v1/oauth/apps", headers=OWNER)).json()["apps"] == []
    assert (await client.delete(f"/v1/oauth/apps/{apps[0]['id']}", headers=OWNER)).status_code == 404


async def test_a_denied_consent_sends_access_denied(client: httpx.AsyncClient) -> None:
    client_id = await register(client)
    consent = await start(client, authorize_params(client_id, pkce()[1]))
    answered = await consent.answer(client, approve=False)
    answer = redirected(answered.json()["redirect_to"])
    assert answer["error"] == "access_denied" and answer["state"] == "st-42" and "code" not in answer
    again = await consent.answer(client, approve=True)
    assert again.status_code == 404  # one answer per request


async def test_the_consent_refuses_a_forged_decision(client: httpx.AsyncClient) -> None:
    client_id = await register(client)
    consent = await start(client, authorize_params(client_id, pkce()[1]))
    for forged in (
        await consent.answer(client, cookie=None),
        await consent.answer(client, cookie="guessed"),
        await consent.answer(client, origin="https://evil.example"),
    ):
        assert forged.status_code == 403, forged.text
        assert forged.json()["error"]["code"] == "csrf_failed"
    other = await start(client, authorize_params(client_id, pkce()[1]))
    assert (await consent.answer(client, cookie=other.cookie)).status_code == 403  # another request's cookie
    # The forgeries used nothing up: the owner's own answer still goes through.
    assert (await consent.answer(client)).status_code == 200


async def test_a_consent_expires(client: httpx.AsyncClient, clock: FixedClock) -> None:
    consent = await start(client, authorize_params(await register(client), pkce()[1]))
    clock.advance(minutes=11)
    assert (await consent.answer(client)).status_code == 404


async def test_registration_checks_redirect_uris_and_is_rate_limited(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    for bad in ("javascript:alert(1)", "http://evil.example/cb", "https://app.example/cb#frag", "not a uri", ""):
        response = await client.post("/oauth/register", json={"redirect_uris": [bad]})
        refused(response, "invalid_redirect_uri")
    refused(await client.post("/oauth/register", json={}), "invalid_redirect_uri")
    refused(await client.post("/oauth/register", json={"redirect_uris": "x"}), "invalid_client_metadata")
    refused(
        await client.post("/oauth/register", json={"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}),
        "invalid_client_metadata",
    )
    native = await client.post(
        "/oauth/register", json={"redirect_uris": ["com.example.app:/oauth"], "client_name": "A"}
    )
    assert native.status_code == 201
    assert native.json()["token_endpoint_auth_method"] == "none" and "client_secret" not in native.json()
    for _ in range(runtime.settings.OAUTH_REGISTRATIONS_PER_HOUR - 1):
        await register(client)
    limited = await client.post("/oauth/register", json={"redirect_uris": [REDIRECT]})
    refused(limited, "temporarily_unavailable", 429)


def client_at(runtime: Runtime, address: str) -> httpx.AsyncClient:
    """An in-process client whose socket peer is ``address``."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app_on(runtime), client=(address, 40000)), base_url=ISSUER
    )


async def registrations(client: httpx.AsyncClient, count: int, headers: Any = None) -> int:
    """How many of ``count`` registrations were accepted; ``headers(n)`` for the n-th."""
    accepted = 0
    for n in range(count):
        response = await client.post(
            "/oauth/register", json={"redirect_uris": [REDIRECT]}, headers=headers(n) if headers else None
        )
        assert response.status_code in (201, 429), response.text
        accepted += response.status_code == 201
    return accepted


async def test_a_forwarded_address_is_not_believed_from_a_client(runtime: Runtime, client: httpx.AsyncClient) -> None:
    """110 registrations from one socket, each naming another address in every header a
    proxy would set: the per-address limit applies to the socket, and an honest client
    elsewhere can still register."""
    limit = runtime.settings.OAUTH_REGISTRATIONS_PER_HOUR

    def forged(n: int) -> dict[str, str]:
        return {"cf-connecting-ip": f"198.51.{n // 250}.{n % 250 + 1}", "x-forwarded-for": f"203.0.113.{n % 250}"}

    assert await registrations(client, 110, forged) == limit
    async with client_at(runtime, "192.0.2.7") as honest:
        assert await registrations(honest, 1) == 1


async def test_one_address_cannot_fill_the_registration_ceiling(runtime: Runtime) -> None:
    limit = runtime.settings.OAUTH_REGISTRATIONS_PER_HOUR
    # An IPv6 client counts by its /64: one subscriber has all of it.
    for n in range(3):
        async with client_at(runtime, f"2001:db8:0:1::{n + 1}") as neighbour:
            await registrations(neighbour, limit)
    async with client_at(runtime, "2001:db8:0:1::ff") as same_network:
        assert await registrations(same_network, 1) == 0
    async with client_at(runtime, "2001:db8:0:2::1") as next_network:
        assert await registrations(next_network, 1) == 1


async def test_forwarded_addresses_are_believed_from_trusted_proxies_only(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    proxies = (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("10.0.0.0/8"))
    runtime.settings = runtime.settings.model_copy(update={"TRUSTED_PROXIES": proxies})
    limit = runtime.settings.OAUTH_REGISTRATIONS_PER_HOUR

    def behind_two_proxies(n: int) -> dict[str, str]:
        # What the client wrote comes first; each proxy appends the peer it saw.
        return {"x-forwarded-for": f"203.0.113.{n}, 198.51.100.{n % 2}, 10.1.2.3"}

    # Two clients behind the proxies, whatever the first entry claims.
    assert await registrations(client, 2 * limit + 5, behind_two_proxies) == 2 * limit
    async with client_at(runtime, "192.0.2.50") as direct:
        # Not a trusted proxy: its header is not believed.
        assert await registrations(direct, limit + 1, lambda n: {"x-forwarded-for": f"203.0.113.{n}"}) == limit


async def test_on_the_worker_cf_connecting_ip_names_the_client(runtime: Runtime, client: httpx.AsyncClient) -> None:
    runtime.client_address_header = "cf-connecting-ip"  # as the Worker's runtime says
    limit = runtime.settings.OAUTH_REGISTRATIONS_PER_HOUR
    assert await registrations(client, limit + 1, lambda n: {"cf-connecting-ip": "198.51.100.1"}) == limit
    assert await registrations(client, 1, lambda n: {"cf-connecting-ip": "198.51.100.2"}) == 1


async def test_unknown_grant_types_and_bad_forms_are_refused(client: httpx.AsyncClient) -> None:
    refused(await token(client, grant_type="password", client_id="x"), "unsupported_grant_type")
    refused(await token(client, client_id="x"), "invalid_request")
    refused(await client.post("/oauth/token", content=b"grant_type=a&grant_type=b"), "invalid_request")
    refused(await client.post("/oauth/token", content=b"\xff"), "invalid_request")


# ------------------------------------------------------------------ Client ID Metadata Documents

DOCUMENT_URL = "https://app.example/oauth/client.json"


@pytest.fixture
def documents() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as router:
        yield router


async def test_a_client_named_by_its_metadata_document(client: httpx.AsyncClient, documents: respx.MockRouter) -> None:
    document = {"client_id": DOCUMENT_URL, "client_name": "Example", "redirect_uris": [REDIRECT]}
    route = documents.get(DOCUMENT_URL).respond(200, json=document)
    verifier, challenge = pkce()
    consent = await start(client, authorize_params(DOCUMENT_URL, challenge))
    shown = (await client.get(f"/v1/oauth/requests/{consent.request_id}", headers=OWNER)).json()
    assert shown["client_name"] == "Example" and shown["verified_host"] == "app.example"
    code = redirected((await consent.answer(client)).json()["redirect_to"])["code"]
    response = await token(
        client,
        grant_type="authorization_code",
        code=code,
        redirect_uri=REDIRECT,
        client_id=DOCUMENT_URL,
        code_verifier=verifier,
    )
    assert response.status_code == 200, response.text
    await start(client, authorize_params(DOCUMENT_URL, challenge))
    assert route.call_count == 1  # read once, then kept for an hour


@pytest.mark.parametrize(
    "document",
    [
        {"client_id": "https://other.example/c.json", "redirect_uris": [REDIRECT]},
        {"client_id": DOCUMENT_URL, "redirect_uris": ["https://evil.example/cb"]},
        {"client_id": DOCUMENT_URL, "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_basic"},
        {"client_id": DOCUMENT_URL},
    ],
    ids=["other-id", "other-redirect", "secret", "no-redirects"],
)
async def test_a_metadata_document_that_does_not_vouch_is_refused(
    client: httpx.AsyncClient, documents: respx.MockRouter, document: dict[str, Any]
) -> None:
    documents.get(DOCUMENT_URL).respond(200, json=document)
    response = await client.get("/oauth/authorize", params=authorize_params(DOCUMENT_URL, pkce()[1]))
    assert "location" not in response.headers
    assert response.status_code in (400, 401) and response.json()["error"] in ("invalid_client", "invalid_request")


async def test_a_metadata_document_on_a_private_address_is_not_fetched(
    client: httpx.AsyncClient, documents: respx.MockRouter
) -> None:
    for url in (
        "https://127.0.0.1/c.json",
        "https://10.0.0.5/c.json",
        "https://localhost/c.json",
        "https://app.example/",
    ):
        response = await client.get("/oauth/authorize", params=authorize_params(url, pkce()[1]))
        refused(response, "invalid_client", 401)
    assert not documents.calls


# ------------------------------------------------------------------ metadata documents: SSRF
#
# Every test here runs on a network that reaches this machine only: names resolve as the
# test says (the system resolver is stubbed), and a connection to anything but loopback
# is refused and recorded before a packet leaves.


class LoopbackNetwork:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: dict[str, list[str]] = {}
        self.beyond_loopback: list[Any] = []  # connections tried to other addresses
        real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

        def getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> Any:
            name = host.decode() if isinstance(host, bytes) else host
            if name in self.names:
                number = int(port or 0)
                return [
                    (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, number, 0, 0))
                    if ":" in a
                    else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, number))
                    for a in self.names[name]
                ]
            # Numbers (in any spelling inet_aton takes) and localhost as the system reads
            # them; any other name is unknown rather than asked of DNS.
            numeric = 0 if name in (None, "localhost") else socket.AI_NUMERICHOST
            return real_getaddrinfo(host, port, family, type, proto, flags | numeric)

        def connect(sock: socket.socket, address: Any) -> None:
            if isinstance(address, tuple) and not ipaddress.ip_address(address[0].split("%")[0]).is_loopback:
                self.beyond_loopback.append(address)
                raise ConnectionRefusedError(f"the tests connect to loopback only, not {address[0]}")
            real_connect(sock, address)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> LoopbackNetwork:
    return LoopbackNetwork(monkeypatch)


class Listener:
    """Something listening on 127.0.0.1 that counts the connections it is given, and
    closes each (no TLS, no HTTP)."""

    def __init__(self) -> None:
        self.connections = 0

    async def __aenter__(self) -> Listener:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            writer.close()

        self.server = await asyncio.start_server(accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_: object) -> None:
        self.server.close()
        await self.server.wait_closed()


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    async with Listener() as opened:
        yield opened


HTTPS_NAMES = ("client.example", "closed.example", "gone.example")


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for the test's https names: (certificate, key)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HTTPS_NAMES[0])])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in HTTPS_NAMES]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return folder / "cert.pem", folder / "key.pem"


class DocumentServer:
    """An https server on 127.0.0.1 for the names a test resolves to it: answers each path
    from ``routes`` (status, headers, body) and records the SNI and Host of each request."""

    def __init__(self, certificate: tuple[Path, Path]) -> None:
        self.certificate = certificate
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.server_names: list[str | None] = []
        self.hosts: list[str] = []

    async def __aenter__(self) -> DocumentServer:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*self.certificate)
        context.sni_callback = lambda _socket, name, _context: self.server_names.append(name)  # type: ignore[assignment,func-returns-value]
        self.server = await asyncio.start_server(self._answer, "127.0.0.1", 0, ssl=context)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def url(self, name: str, path: str) -> str:
        return f"https://{name}:{self.port}{path}"

    def document(self, path: str, client_id: str | None = None, **fields: Any) -> str:
        """Serves a metadata document at ``path`` of client.example; answers its URL."""
        url = self.url("client.example", path)
        body = {"client_id": client_id or url, "redirect_uris": [REDIRECT], **fields}
        self.routes[path] = (200, {"Content-Type": "application/json"}, json.dumps(body).encode())
        return url

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        path = head.split(" ")[1]
        self.hosts += [line.split(":", 1)[1].strip() for line in head.split("\r\n") if line.lower().startswith("host:")]
        status, headers, body = self.routes.get(path, (404, {}, b"not here"))
        lines = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await writer.drain()
        writer.close()

    async def __aexit__(self, *_: object) -> None:
        self.server.close()
        await self.server.wait_closed()


@pytest.fixture
async def document_server(certificate: tuple[Path, Path], network: LoopbackNetwork) -> AsyncIterator[DocumentServer]:
    for name in HTTPS_NAMES:
        network.names[name] = ["127.0.0.1"]
    async with DocumentServer(certificate) as server:
        yield server


def pinned_client(runtime: Runtime, certificate: tuple[Path, Path]) -> None:
    """The local server's client for metadata documents, as it is built in production,
    but trusting the test certificate and (opting in) the test's loopback servers."""
    from companion_memory.adapters.local.public_http import public_http_client

    runtime.public_http = public_http_client(
        also_allow=[ipaddress.ip_network("127.0.0.1/32")], verify=ssl.create_default_context(cafile=certificate[0])
    )


async def authorize_as(client: httpx.AsyncClient, client_id: str) -> httpx.Response:
    return await client.get("/oauth/authorize", params=authorize_params(client_id, pkce()[1]))


async def unreadable(client: httpx.AsyncClient, client_id: str) -> str:
    response = await authorize_as(client, client_id)
    assert "location" not in response.headers
    return refused(response, "invalid_client", 401)


# Spellings of 127.0.0.1 the system resolver (and the URL standard) take.
LOOPBACK_SPELLINGS = (
    "2130706433",
    "127.1",
    "0x7f000001",
    "0177.0.0.1",
    "0x7f.0.0.1",
    "127.0.0.1.",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "１２７．０．０．１",
)
# Spellings of other private addresses: 169.254.169.254 (cloud metadata), 10.0.0.1, 192.168.0.1.
PRIVATE_SPELLINGS = ("2852039166", "0xa9fea9fe", "169.254.43518", "0251.0376.0251.0376", "10.1", "0xc0a80001")


async def test_no_spelling_of_a_private_address_is_fetched(
    client: httpx.AsyncClient, network: LoopbackNetwork, listener: Listener
) -> None:
    """Issue 28: ``client_id=https://2130706433:<port>/c.json`` connected to 127.0.0.1, and
    ``0177.0.0.1`` was an unauthenticated 500. Each spelling is now refused before any
    connection, with the same answer as every other failed read."""
    answers = {await unreadable(client, f"https://{host}:{listener.port}/c.json") for host in LOOPBACK_SPELLINGS}
    answers |= {await unreadable(client, f"https://{host}/c.json") for host in PRIVATE_SPELLINGS}
    assert listener.connections == 0 and network.beyond_loopback == []
    assert len(answers) == 1, answers
    assert "could not be read" in answers.pop()


async def test_a_failed_read_is_remembered_for_a_while(
    client: httpx.AsyncClient, network: LoopbackNetwork, listener: Listener, clock: FixedClock
) -> None:
    """Five requests for a document that cannot be read make one connection, not five."""
    network.names["gone.example"] = ["127.0.0.1"]
    url = f"https://gone.example:{listener.port}/c.json"
    answers = {await unreadable(client, url) for _ in range(5)}
    assert listener.connections == 1 and len(answers) == 1
    clock.advance(minutes=6)
    await unreadable(client, url)
    assert listener.connections == 2


async def test_every_failed_read_answers_alike(
    runtime: Runtime,
    client: httpx.AsyncClient,
    network: LoopbackNetwork,
    listener: Listener,
    document_server: DocumentServer,
    certificate: tuple[Path, Path],
) -> None:
    """No answer tells an open port from a closed one, or either from an address that was
    never tried."""
    pinned_client(runtime, certificate)
    network.names["internal.example"] = ["10.0.0.5"]
    network.names["metadata.example"] = ["169.254.169.254"]
    network.names["mixed.example"] = ["127.0.0.1", "10.0.0.5"]
    network.names["mapped.example"] = ["::ffff:10.0.0.5"]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    server = document_server
    server.routes["/redirect-out"] = (302, {"Location": f"https://2130706433:{listener.port}/c.json"}, b"")
    server.routes["/redirect-in"] = (302, {"Location": "https://internal.example/c.json"}, b"")
    server.routes["/loop"] = (302, {"Location": "/loop"}, b"")
    server.routes["/large"] = (200, {}, b"{" + b" " * 10_000 + b"}")
    server.routes["/error"] = (500, {}, b"{}")
    urls = [
        f"https://2130706433:{listener.port}/c.json",
        f"https://gone.example:{listener.port}/c.json",  # open, but no TLS
        f"https://closed.example:{closed_port}/c.json",  # nothing listens
        "https://internal.example/c.json",
        "https://metadata.example/latest/meta-data/",
        "https://mixed.example/c.json",
        "https://mapped.example/c.json",
        "https://nowhere.example/c.json",  # no such name
        *(server.url("client.example", path) for path in ("/missing", "/error", "/large", "/loop")),
        *(server.url("client.example", path) for path in ("/redirect-out", "/redirect-in")),
    ]
    answers = {url: await unreadable(client, url) for url in urls}
    assert len(set(answers.values())) == 1, answers
    assert listener.connections == 1  # the TLS attempt at gone.example; none for the numbers or the redirect
    assert network.beyond_loopback == []  # private names were refused before connecting


async def test_a_public_host_is_read_at_the_address_that_was_checked(
    runtime: Runtime,
    client: httpx.AsyncClient,
    network: LoopbackNetwork,
    document_server: DocumentServer,
    certificate: tuple[Path, Path],
) -> None:
    """What a normal client sees: its name resolves (here, to the test's server), the
    certificate is checked for that name, and redirects within public hosts are followed."""
    pinned_client(runtime, certificate)
    server = document_server
    url = server.document("/client.json", client_name="Example\u202e\u200b app")
    consent = await start(client, authorize_params(url, pkce()[1]))
    shown = (await client.get(f"/v1/oauth/requests/{consent.request_id}", headers=OWNER)).json()
    assert shown["client_name"] == "Example app" and shown["verified_host"] == "client.example"
    assert server.server_names == ["client.example"] and server.hosts == [f"client.example:{server.port}"]
    moved = server.url("client.example", "/moved.json")
    server.routes["/moved.json"] = (301, {"Location": "/final.json"}, b"")
    server.document("/final.json", client_id=moved, client_name="Moved")
    await start(client, authorize_params(moved, pkce()[1]))
    assert network.beyond_loopback == []


async def test_the_local_client_connects_to_public_addresses_only(network: LoopbackNetwork, listener: Listener) -> None:
    """The local server's client for metadata documents checks each address a name
    resolves to, whatever the URL says, and never tries one that is not public."""
    from companion_memory.adapters.local.public_http import public_http_client
    from companion_memory.ports import HttpUnanswered

    network.names.update({"internal.example": ["10.0.0.5"], "link.example": ["fe80::1"], "unique.example": ["fd00::1"]})
    network.names["loopback.example"] = ["127.0.0.1"]
    http = public_http_client()
    for url in (
        *(f"http://{host}:{listener.port}/" for host in ("2130706433", "127.1", "0x7f000001", "localhost")),
        f"http://loopback.example:{listener.port}/",
        "http://internal.example/",
        "http://link.example/",
        "http://unique.example/",
    ):
        with pytest.raises(HttpUnanswered, match="not public"):
            await http.get(url, headers={}, timeout_seconds=5)
    assert listener.connections == 0 and network.beyond_loopback == []


async def test_the_local_server_fetches_through_that_client(
    tmp_path: Path,
    embedder,  # type: ignore[no-untyped-def]
    network: LoopbackNetwork,
) -> None:
    from companion_memory.adapters.local.runtime import build_local_runtime
    from companion_memory.api.app import create_app

    network.names["internal.example"] = ["10.0.0.5"]
    runtime = await build_local_runtime(Settings(CHATBOX_API_KEY=OWNER_KEY), tmp_path, embedder=embedder)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(runtime)), base_url=ISSUER) as local:
        await unreadable(local, "https://internal.example/c.json")
    assert network.beyond_loopback == []  # refused on its resolved address, before connecting


async def test_client_names_lose_their_bidi_and_invisible_characters(
    client: httpx.AsyncClient, documents: respx.MockRouter
) -> None:
    client_id = await register(client, client_name="\u202eppa liveC\u202c \u200bClaude\u2066\u2069\ufeff")
    consent = await start(client, authorize_params(client_id, pkce()[1]))
    shown = (await client.get(f"/v1/oauth/requests/{consent.request_id}", headers=OWNER)).json()
    assert shown["client_name"] == "ppa liveC Claude"
    for uri in ("https://app.example/cb\u202e", "https://app.example/\u200bcb"):
        refused(await client.post("/oauth/register", json={"redirect_uris": [uri]}), "invalid_redirect_uri")
    document = {"client_id": DOCUMENT_URL, "client_name": "Ex\u200dample\u2067", "redirect_uris": [REDIRECT]}
    documents.get(DOCUMENT_URL).respond(200, json=document)
    consent = await start(client, authorize_params(DOCUMENT_URL, pkce()[1]))
    shown = (await client.get(f"/v1/oauth/requests/{consent.request_id}", headers=OWNER)).json()
    assert shown["client_name"] == "Example"
    refused(await authorize_as(client, "https://app.example/\u202egpj.json"), "invalid_client", 401)
