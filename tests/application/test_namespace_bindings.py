"""Namespaces as an access boundary (issue 28, item 5): a key bound to namespaces
(``IM_API_NAMESPACES_READ`` / ``_WRITE`` and the like) reads and writes there only, and
sees another namespace only through what the owner approved to share into its own.

The MCP tools and their REST twins are covered key by key in tests/api/test_mcp_scopes.py;
here: the issue's repro, shares, read wider than write, the REST-only routes, the chat
gateway with the openai SDK, OAuth apps, the settings, and that every input naming a
namespace or a row is checked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from pydantic import ValidationError

from companion_memory.application.fields import InNamespace, RowOf
from companion_memory.application.principal import BINDINGS, Principal
from companion_memory.application.use_case import USE_CASES
from companion_memory.domain.scopes import OWNER
from companion_memory.settings import Settings
from tests.api.test_mcp_scopes import fast_runtime, mcp_call
from tests.conftest import DEBUG_KEY, IM_KEY, MCP_KEY, OWNER_KEY, all_keys_settings, app_on, auth
from tests.live_server import LiveServer
from tests.upstreams import RecordingUpstream

SECRET = "The spare key is under the blue flowerpot"


def bound(**namespaces: str) -> Settings:
    """The test keys, with these binding settings as the environment would give them."""
    keys = {
        "CHATBOX_API_KEY": OWNER_KEY,
        "IM_API_KEY": IM_KEY,
        "DEBUG_API_KEY": DEBUG_KEY,
        "MEMORY_MCP_API_KEY": MCP_KEY,
    }
    return Settings.from_env({**keys, **namespaces})


async def client_on(settings: Settings) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app_on(await fast_runtime(settings)))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


async def remember(http: httpx.AsyncClient, namespace: str, content: str = SECRET) -> str:
    written = await http.post(
        "/v1/memories",
        json={"namespace": namespace, "fact_key": f"k.{namespace}.{abs(hash(content))}", "content": content},
        headers=auth(OWNER_KEY),
    )
    assert written.status_code == 201, written.text
    return str(written.json()["memory"]["id"])


def refusal(response: httpx.Response) -> tuple[str, Any]:
    """A REST refusal's message and the namespace it names."""
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "forbidden" and SECRET not in response.text
    return error["message"], error.get("details", {}).get("namespace")


def tool_refusal(response: httpx.Response) -> tuple[str, Any]:
    result = response.json()["result"]
    assert result["isError"] is True and SECRET not in response.text, result
    error = result["structuredContent"]["error"]
    assert error["code"] == "forbidden"
    return error["message"], error.get("details", {}).get("namespace")


@pytest.fixture
def settings() -> Settings:
    """The IM and MCP keys and every OAuth app bound to 'default'; the debug key reads
    'default' and 'family' and writes 'default'. The conftest's ``client`` runs on it (on
    each database), ``http`` too (on SQLite only)."""
    return bound(
        IM_API_NAMESPACES_READ="default",
        IM_API_NAMESPACES_WRITE="default",
        MEMORY_MCP_NAMESPACES_READ="default",
        MEMORY_MCP_NAMESPACES_WRITE="default",
        DEBUG_API_NAMESPACES_READ="default, family",
        DEBUG_API_NAMESPACES_WRITE="default",
        OAUTH_NAMESPACES_READ="default",
        OAUTH_NAMESPACES_WRITE="default",
    )


@pytest.fixture
async def http(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    async with await client_on(settings) as client:
        yield client


async def test_the_issue_repro_a_bound_key_cannot_recall_another_namespace(client: httpx.AsyncClient) -> None:
    """With the IM or MCP key, ``recall {"namespaces": ["private-ns"]}`` read another
    namespace with no share approved."""
    http = client
    await remember(http, "private-ns")
    for body in (
        {"query": "spare key", "namespaces": ["private-ns"]},
        {"query": "spare key", "namespace": "private-ns"},
    ):
        message, namespace = refusal(await http.post("/v1/memory/recall", json=body, headers=auth(IM_KEY)))
        assert namespace == "private-ns" and "'private-ns'" in message and "im key" in message
        message, namespace = tool_refusal(await mcp_call(http, MCP_KEY, "memory_recall", body))
        assert namespace == "private-ns" and "mcp key" in message
    own = await http.post("/v1/memory/recall", json={"query": "spare key", "min_score": 0}, headers=auth(IM_KEY))
    assert own.status_code == 200 and own.json()["hits"] == []


async def test_unbound_keys_keep_todays_behaviour() -> None:
    async with await client_on(all_keys_settings()) as http:
        await remember(http, "private-ns")
        body = {"query": "spare key", "namespaces": ["private-ns"], "min_score": 0}
        for key in (IM_KEY, MCP_KEY, DEBUG_KEY):
            answer = await http.post("/v1/memory/recall", json=body, headers=auth(key))
            assert answer.status_code == 200 and [h["content"] for h in answer.json()["hits"]] == [SECRET]


async def test_another_namespace_is_seen_through_an_approved_share_only(client: httpx.AsyncClient) -> None:
    http = client
    memory_id = await remember(http, "family")
    recall = {"query": "spare key", "min_score": 0}

    async def recalled() -> list[tuple[str, Any]]:
        answer = await http.post("/v1/memory/recall", json=recall, headers=auth(IM_KEY))
        assert answer.status_code == 200, answer.text
        via_mcp = (await mcp_call(http, MCP_KEY, "memory_recall", recall)).json()["result"]["structuredContent"]
        hits = [(h["id"], h["share_id"]) for h in answer.json()["hits"]]
        assert [(h["id"], h["share_id"]) for h in via_mcp["hits"]] == hits
        return hits

    assert await recalled() == []
    assert refusal(await http.get(f"/v1/memories/{memory_id}", headers=auth(IM_KEY)))[1] == "family"
    # A bound key offers only what it may write; the owner may offer anything.
    offer = {"memory_id": memory_id, "target_namespace": "default"}
    assert refusal(await http.post("/v1/shares", json=offer, headers=auth(IM_KEY)))[1] == "family"
    share = (await http.post("/v1/shares", json=offer, headers=auth(OWNER_KEY))).json()
    assert share["status"] == "proposed" and await recalled() == []
    assert refusal(await http.get(f"/v1/memories/{memory_id}", headers=auth(IM_KEY)))[1] == "family"

    approved = await http.post(f"/v1/shares/{share['id']}/approve", json={}, headers=auth(OWNER_KEY))
    assert approved.status_code == 200, approved.text
    assert await recalled() == [(memory_id, share["id"])]
    got = await http.get(f"/v1/memories/{memory_id}", headers=auth(IM_KEY))
    assert got.status_code == 200 and got.json()["memory"]["content"] == SECRET
    assert (await mcp_call(http, MCP_KEY, "memory_get", {"id": memory_id})).json()["result"]["isError"] is False
    assert (await http.get(f"/v1/shares/{share['id']}", headers=auth(IM_KEY))).status_code == 200
    # The share, not the namespace: 'family' itself stays closed, and its memory is not the key's to change.
    for response in (
        await http.get("/v1/memories", params={"namespace": "family"}, headers=auth(IM_KEY)),
        await http.post("/v1/memory/recall", json={**recall, "namespaces": ["family"]}, headers=auth(IM_KEY)),
        await http.post(f"/v1/memories/{memory_id}/archive", headers=auth(IM_KEY)),
        await http.patch(f"/v1/memories/{memory_id}", json={"importance": 1}, headers=auth(IM_KEY)),
        await http.get("/v1/shares", params={"namespace": "family"}, headers=auth(IM_KEY)),
    ):
        assert refusal(response)[1] == "family"
    assert refusal(await http.get("/v1/shares", headers=auth(IM_KEY)))[1] is None  # every namespace: name one
    assert (await http.get("/v1/shares", params={"namespace": "default"}, headers=auth(IM_KEY))).status_code == 200

    revoked = await http.post(f"/v1/shares/{share['id']}/revoke", json={}, headers=auth(OWNER_KEY))
    assert revoked.status_code == 200, revoked.text
    assert await recalled() == []
    assert refusal(await http.get(f"/v1/memories/{memory_id}", headers=auth(IM_KEY)))[1] == "family"


async def test_a_share_of_a_dead_memory_shows_nothing(client: httpx.AsyncClient) -> None:
    http = client
    memory_id = await remember(http, "family")
    share = (
        await http.post(
            "/v1/shares", json={"memory_id": memory_id, "target_namespace": "default"}, headers=auth(OWNER_KEY)
        )
    ).json()
    await http.post(f"/v1/shares/{share['id']}/approve", json={}, headers=auth(OWNER_KEY))
    assert (await http.get(f"/v1/memories/{memory_id}", headers=auth(IM_KEY))).status_code == 200
    assert (await http.post(f"/v1/memories/{memory_id}/archive", headers=auth(OWNER_KEY))).status_code == 200
    assert refusal(await http.get(f"/v1/memories/{memory_id}", headers=auth(IM_KEY)))[1] == "family"


async def test_a_key_proposes_its_own_memories_and_revokes_its_own_shares(http: httpx.AsyncClient) -> None:
    written = await http.post(
        "/v1/memories", json={"fact_key": "bot.tea", "content": "Likes jasmine tea"}, headers=auth(IM_KEY)
    )
    offer = {"memory_id": written.json()["memory"]["id"], "target_namespace": "family"}
    share = await http.post("/v1/shares", json=offer, headers=auth(IM_KEY))
    assert share.status_code == 201, share.text
    revoked = await http.post(f"/v1/shares/{share.json()['id']}/revoke", json={}, headers=auth(IM_KEY))
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"


async def test_reads_may_reach_wider_than_writes(http: httpx.AsyncClient) -> None:
    """The debug key reads 'default' and 'family', writes 'default' only; and writes only
    where it reads, whatever its write setting says."""
    await remember(http, "family")
    body = {"query": "spare key", "namespaces": ["family"], "min_score": 0}
    answer = await http.post("/v1/memory/recall", json=body, headers=auth(DEBUG_KEY))
    assert answer.status_code == 200 and [h["namespace"] for h in answer.json()["hits"]] == ["family"]
    write = {"fact_key": "x", "content": "A new fact", "namespace": "family"}
    message, namespace = refusal(await http.post("/v1/memories", json=write, headers=auth(DEBUG_KEY)))
    assert namespace == "family" and "may not write namespace 'family'" in message and "only 'default'" in message
    assert (await http.post("/v1/memories", json={**write, "namespace": "default"}, headers=auth(DEBUG_KEY))).is_success

    async with await client_on(bound(IM_API_NAMESPACES_READ="default", IM_API_NAMESPACES_WRITE="default,bot")) as only:
        refused = await only.post("/v1/todos", json={"text": "x", "namespace": "bot"}, headers=auth(IM_KEY))
        assert refusal(refused)[1] == "bot"
        allowed = await only.post("/v1/todos", json={"text": "x"}, headers=auth(IM_KEY))
        assert allowed.status_code == 201


async def test_export_of_every_namespace_needs_an_unbound_key(http: httpx.AsyncClient) -> None:
    await remember(http, "family")
    message, namespace = refusal(await http.get("/api/memories/export?all=true", headers=auth(DEBUG_KEY)))
    assert namespace is None and "name one" in message
    family = await http.get("/api/memories/export", params={"namespace": "family"}, headers=auth(DEBUG_KEY))
    assert family.status_code == 200 and SECRET in family.text
    assert refusal(await http.get("/api/memories/export?namespace=other", headers=auth(DEBUG_KEY)))[1] == "other"
    assert SECRET in (await http.get("/api/memories/export?all=true", headers=auth(OWNER_KEY))).text


async def test_the_dream_status_shows_a_bound_key_the_runs_of_its_namespaces(http: httpx.AsyncClient) -> None:
    for namespace in ("default", "elsewhere"):
        said = {"role": "user", "content": f"remember that I live in {namespace}", "created_at": "2026-11-29T08:00:00Z"}
        ingested = await http.post(
            "/v1/ingest/messages", json={"namespace": namespace, "messages": [said]}, headers=auth(OWNER_KEY)
        )
        assert ingested.is_success, ingested.text
    dreamt = await http.post("/v1/dream/run", json={"date": "2026-11-29"}, headers=auth(OWNER_KEY))
    assert {run["namespace"] for run in dreamt.json()["runs"]} == {"default", "elsewhere"}
    for key, seen in ((OWNER_KEY, {"default", "elsewhere"}), (IM_KEY, {"default"})):
        status = await http.get("/v1/dream/status", headers=auth(key))
        assert {run["namespace"] for run in status.json()["runs"]} == seen


async def test_the_owner_key_is_never_bound() -> None:
    settings = bound(IM_API_NAMESPACES_READ="default")
    assert "chatbox" not in BINDINGS and "guide_dog" not in BINDINGS
    async with await client_on(settings) as http:
        await remember(http, "private-ns")
        body = {"query": "spare key", "namespace": "private-ns", "min_score": 0}
        answer = await http.post("/v1/memory/recall", json=body, headers=auth(OWNER_KEY))
        assert [h["content"] for h in answer.json()["hits"]] == [SECRET]


# --------------------------------------------------------------- the REST-only routes


async def seed_rows(http: httpx.AsyncClient, namespace: str) -> dict[str, str]:
    """One row of each kind the routes below act on, in ``namespace``."""
    owner = auth(OWNER_KEY)
    entry = await http.post("/v1/glossary", json={"term": "bbt", "namespace": namespace}, headers=owner)
    precious = await http.post("/v1/precious", json={"content": "My lighthouse", "namespace": namespace}, headers=owner)
    person = await http.post("/v1/people", json={"name": "Ana", "namespace": namespace}, headers=owner)
    memory = await remember(http, namespace, f"{SECRET} ({namespace})")
    share = await http.post("/v1/shares", json={"memory_id": memory, "target_namespace": "family"}, headers=owner)
    return {
        "glossary": entry.json()["entry"]["id"],
        "precious": precious.json()["precious"]["id"],
        "person": person.json()["person"]["id"],
        "memory": memory,
        "share": share.json()["id"],
    }


# (method, path, body, status in the key's own namespace): {ns} the namespace acted in,
# {glossary} ... a row seeded there. In its own namespace the key meets what any key
# meets: no such cache entry, relation, event or diary; the proposer rule for a share the
# owner proposed.
ROUTES: list[tuple[str, str, dict[str, Any] | None, int]] = [
    ("GET", "/v1/glossary?namespace={ns}", None, 200),
    ("POST", "/v1/glossary", {"term": "boba", "namespace": "{ns}"}, 201),
    ("GET", "/v1/glossary/{glossary}", None, 200),
    ("PATCH", "/v1/glossary/{glossary}", {"definition": "bubble tea"}, 200),
    ("DELETE", "/v1/glossary/{glossary}", None, 200),
    ("GET", "/v1/precious?namespace={ns}", None, 200),
    ("GET", "/v1/precious/{precious}", None, 200),
    ("PUT", "/v1/cache/{ns}/k", {"value": 1}, 200),
    ("GET", "/v1/cache/{ns}/k", None, 404),
    ("DELETE", "/v1/cache/{ns}/k", None, 404),
    ("PATCH", "/v1/memories/{memory}", {"importance": 0.5}, 200),
    ("POST", "/v1/memories/{memory}/relations", {"target_id": "{memory}", "relation": "supports"}, 400),
    ("DELETE", "/v1/memories/{memory}/relations/nope", None, 404),
    ("POST", "/v1/memories/{memory}/events/1/undo", None, 404),
    ("PATCH", "/v1/people/{person}", {"name": "Ana", "notes": "a sister", "namespace": "{ns}"}, 200),
    ("GET", "/v1/person_proposals?namespace={ns}", None, 200),
    ("GET", "/v1/candidates?namespace={ns}", None, 200),
    ("GET", "/v1/diary?date=2026-11-29&namespace={ns}", None, 404),
    ("GET", "/v1/admin/graph?namespace={ns}", None, 200),
    ("GET", "/v1/admin/starmap?format=mermaid&namespace={ns}", None, 200),
    ("GET", "/v1/admin/diary?namespace={ns}", None, 200),
    ("GET", "/v1/conversations?namespace={ns}", None, 200),
    ("GET", "/v1/dream/status?namespace={ns}", None, 200),
    ("GET", "/v1/shares/{share}", None, 200),
    ("POST", "/v1/shares/{share}/revoke", {}, 403),
]


def filled(template: Any, values: dict[str, str]) -> Any:
    if isinstance(template, str):
        return template.format(**values)
    if isinstance(template, dict):
        return {k: filled(v, values) for k, v in template.items()}
    return template


@pytest.mark.parametrize("method, path, body, own_status", ROUTES, ids=[f"{r[0]} {r[1]}" for r in ROUTES])
async def test_each_rest_route_is_bound_to_the_keys_namespaces(
    http: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None, own_status: int
) -> None:
    elsewhere = {"ns": "elsewhere", **await seed_rows(http, "elsewhere")}
    response = await http.request(method, filled(path, elsewhere), json=filled(body, elsewhere), headers=auth(IM_KEY))
    message, namespace = refusal(response)
    assert namespace == "elsewhere" and "'elsewhere'" in message
    own = {"ns": "default", **await seed_rows(http, "default")}
    response = await http.request(method, filled(path, own), json=filled(body, own), headers=auth(IM_KEY))
    assert response.status_code == own_status, response.text
    assert "namespace" not in response.json().get("error", {}).get("details", {}), response.text


# --------------------------------------------------------------- the chat gateway, OAuth


@pytest.fixture
def chat_server(tmp_path: Path, embedder, upstream: RecordingUpstream) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    settings = bound(
        CHAT_BASE_URL=upstream.url + "/v1",
        IM_API_NAMESPACES_READ="bot",
        IM_API_NAMESPACES_WRITE="bot",
        DEBUG_API_NAMESPACES_READ="default",
    )
    live = LiveServer(settings, tmp_path / "data", embedder)
    yield live
    live.stop()


def test_the_chat_gateway_needs_its_namespace_in_the_binding(
    chat_server: LiveServer, upstream: RecordingUpstream
) -> None:
    """The gateway recalls from 'default' and stores the turn there: a key bound elsewhere
    gets the OpenAI error object, and the provider is never called."""
    turn: list[Any] = [{"role": "user", "content": "ping"}]
    refused = openai.OpenAI(base_url=chat_server.url + "/v1", api_key=IM_KEY, max_retries=0)
    with pytest.raises(openai.PermissionDeniedError) as raised:
        refused.chat.completions.create(model="companion", messages=turn)
    assert raised.value.status_code == 403 and "'default'" in raised.value.message
    assert upstream.requests == []
    allowed = openai.OpenAI(base_url=chat_server.url + "/v1", api_key=DEBUG_KEY, max_retries=0)
    assert allowed.chat.completions.create(model="companion", messages=turn).choices[0].message.content
    assert len(upstream.requests) == 1


async def test_connected_apps_are_bound_by_the_oauth_settings(client: httpx.AsyncClient) -> None:
    from tests.oauth.test_oauth import tokens_for

    await remember(client, "private-ns")
    _, tokens = await tokens_for(client)
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}

    async def call(arguments: dict[str, Any]) -> httpx.Response:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_recall", "arguments": arguments},
        }
        return await client.post("/mcp", json=body, headers={**bearer, "MCP-Protocol-Version": "2025-11-25"})

    message, namespace = tool_refusal(await call({"query": "spare key", "namespaces": ["private-ns"]}))
    assert namespace == "private-ns" and "oauth key" in message
    assert (await call({"query": "spare key"})).json()["result"]["isError"] is False


# --------------------------------------------------------------- settings and coverage


def test_binding_settings_are_comma_lists_and_star_or_empty_is_every_namespace() -> None:
    settings = Settings.from_env(
        {"IM_API_NAMESPACES_READ": " default, bot.kiki ,", "IM_API_NAMESPACES_WRITE": "*", "OAUTH_NAMESPACES_READ": ""}
    )
    assert {"default", "bot.kiki"} == settings.IM_API_NAMESPACES_READ
    assert settings.IM_API_NAMESPACES_WRITE is None and settings.OAUTH_NAMESPACES_READ is None
    with pytest.raises(ValidationError, match="MEMORY_MCP_NAMESPACES_WRITE") as raised:
        Settings.from_env({"MEMORY_MCP_NAMESPACES_WRITE": "default, not a namespace"})
    assert "'not a namespace' is not a namespace" in str(raised.value)
    for reads, writes in BINDINGS.values():
        assert reads in Settings.model_fields and writes in Settings.model_fields


# Fields that name a namespace or a row but are not checked, and why.
UNCHECKED = {
    ("shares.propose", "target_namespace"): "the owner decides what is recalled there",
    ("memories.unrelate", "relation_id"): "the edge is looked up among memory_id's own",
    ("memories.undo_consolidation", "event_id"): "the event is looked up in memory_id's history",
}


def test_every_input_that_names_a_namespace_or_a_row_is_checked() -> None:
    """Each field of a use case's input called ``namespace(s)``, ``id`` or ``…_id`` carries
    the mark the bindings check (for every scope a bound key may hold), or is listed above."""
    for name, case in USE_CASES.items():
        if case.scope in (OWNER, "oauth:client", "guide_dog"):
            continue
        marked = {field for field, _ in case.confinement.namespaces} | {field for field, _ in case.confinement.rows}
        for field in case.input.model_fields:
            if "namespace" in field or field == "id" or field.endswith("_id"):
                if field == "conversation_id":  # a client's label inside the namespace ingested into
                    continue
                assert field in marked or (name, field) in UNCHECKED, f"{name}.{field} is not checked"
    assert isinstance(USE_CASES["memories.supersede"].confinement.namespaces[0][1], InNamespace)
    assert USE_CASES["context.expand"].confinement.rows == (("fold_id", RowOf("context_folds")),)


async def test_an_unbound_caller_costs_no_query() -> None:
    case = USE_CASES["memories.get"]
    unbound = Principal("im", frozenset({"memory:read"}))
    await case.confinement.check(None, unbound, case.scope, case.input(id="anything"))  # type: ignore[arg-type]
