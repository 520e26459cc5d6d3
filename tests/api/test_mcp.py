"""The MCP endpoint with real clients: the official ``mcp`` Python SDK against our server on
a real port, once over the 2025 handshake and once over the stateless 2026-07-28 protocol
(``server/discover``), and raw JSON-RPC over HTTP for everything a client can get wrong.

The dev extra installs the SDK (``mcp>=2.3``); the results are also checked against its
per-version schemas."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types.methods import validate_server_result

from companion_memory.api.mcp.tools import RETIRED, TOOLS
from companion_memory.settings import Settings
from companion_memory.store.folds import FoldStore
from tests.api.test_mcp_scopes import fold_row
from tests.conftest import GUIDE_DOG_KEY, MCP_KEY, OWNER_KEY
from tests.live_server import LiveServer

MODERN = "2026-07-28"
# What the MCP key may call: every tool but memory_export, which needs the export scope as
# GET /api/memories/export does, the health report's two, which need the debug scope as
# /v1/health/* does, and conversation_forget, persona_tune and persona_revert, the owner's
# as their REST twins are (tests/api/test_mcp_scopes.py checks every tool and key).
OWNER_ONLY_TOOLS = (
    "memory_export",
    "memory_health",
    "memory_unanchored",
    "conversation_forget",
    "persona_tune",
    "persona_revert",
)
MCP_KEY_TOOLS = [name for name in TOOLS if name not in OWNER_ONLY_TOOLS]
WRITING_TOOLS = {
    "memory_upsert",
    "memory_supersede",
    "memory_archive",
    "memory_delete",
    "memory_ingest",
    "memory_pin",
    "glossary_set",
    "plan_update",
    "memory_share",
    "mood_log",
    "todo_add",
    "todo_done",
    "todo_abandon",
    "person_upsert",
    "person_merge",
    "conversation_forget",
    "persona_tune",
    "persona_revert",
}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    settings = Settings(CHATBOX_API_KEY=OWNER_KEY, MEMORY_MCP_API_KEY=MCP_KEY, GUIDE_DOG_API_KEY=GUIDE_DOG_KEY)
    live = LiveServer(settings, tmp_path_factory.mktemp("mcp") / "data", embedder)
    yield live
    live.stop()


# ------------------------------------------------------------------------ the official client

ERAS = {"legacy": "2025-11-25", "auto": MODERN}  # Client mode → the version it must end up speaking


@asynccontextmanager
async def connect(
    server: LiveServer,
    mode: str,
    *,
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
    key: str | None = MCP_KEY,
) -> AsyncIterator[Client]:
    headers = {**({"Authorization": f"Bearer {key}"} if key else {}), **(headers or {})}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(server.url + path, http_client=http), mode=mode) as client,
    ):
        yield client


def mcp_error(group: BaseException) -> MCPError:
    """The MCPError a failed connect raised (the SDK wraps it in task-group exception groups)."""
    pending = [group]
    while pending:
        error = pending.pop()
        if isinstance(error, MCPError):
            return error
        pending.extend(getattr(error, "exceptions", ()))
    raise AssertionError(f"no MCPError in {group!r}")


@pytest.fixture(params=list(ERAS))
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def schema_check():  # type: ignore[no-untyped-def]
    """The SDK's validator for a result against one protocol version's schema."""
    return validate_server_result


async def test_the_client_connects_in_each_era(server: LiveServer, mode: str) -> None:
    async with connect(server, mode) as client:
        assert client.protocol_version == ERAS[mode]
        if mode == "auto":  # the stateless protocol: discovered, no handshake
            assert client.session.discover_result is not None and client.session.initialize_result is None
            assert client.session.discover_result.supported_versions == [MODERN]
        else:
            assert client.session.initialize_result is not None
        assert client.server_info is not None and client.server_info.name == "companion-memory"
        assert client.server_capabilities.tools is not None


async def test_lists_all_tools_with_their_schemas(server: LiveServer, mode: str) -> None:
    async with connect(server, mode, key=OWNER_KEY) as client:
        tools = (await client.list_tools()).tools
    async with connect(server, mode) as client:
        assert [t.name for t in (await client.list_tools()).tools] == MCP_KEY_TOOLS
    assert [t.name for t in tools] == list(TOOLS) and len(tools) == 40
    for tool in tools:
        assert tool.input_schema == TOOLS[tool.name].input_schema
        assert tool.input_schema["type"] == "object" and tool.input_schema["additionalProperties"] is False
        assert tool.description == TOOLS[tool.name].description
        assert tool.annotations is not None and tool.annotations.read_only_hint == (tool.name not in WRITING_TOOLS)


def valid_arguments(namespace: str, ids: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {
        "memory_search": {"query": "coffee", "namespace": namespace},
        "memory_recall": {"query": "coffee", "namespace": namespace},
        "conversation_search": {"query": "hiking", "namespace": namespace, "roles": ["user"], "limit": 5},
        "memory_list": {"namespace": namespace, "limit": 5},
        "memory_get": {"id": ids["get"]},
        "memory_export": {"namespace": namespace},
        "memory_boot": {"namespace": namespace},
        "diary_get": {"namespace": namespace},
        "memory_upsert": {
            "fact_key": "user.tea",
            "content": "Likes jasmine tea",
            "namespace": namespace,
            "type": "preference",
            "tags": ["drink"],
        },
        "memory_supersede": {"old_id": ids["supersede"], "content": "Now drinks black coffee", "namespace": namespace},
        "memory_archive": {"id": ids["archive"]},
        "memory_delete": {"id": ids["delete"]},
        "memory_ingest": {
            "messages": [{"role": "user", "content": "I went hiking today"}],
            "namespace": namespace,
            "conversation_id": "c1",
        },
        "memory_pin": {"content": "You are my lighthouse.", "namespace": namespace},
        "glossary_set": {"term": "Moonbun", "aliases": ["moon bun"], "definition": "the cat", "namespace": namespace},
        "plan_list": {"namespace": namespace, "status": "active"},
        "plan_update": {"id": ids["plan"], "status": "abandoned"},
        "context_expand": {"fold_id": ids["fold"]},
        "memory_share": {"memory_id": ids["get"], "target_namespace": "default", "note": "the family should know"},
        "share_list": {"namespace": namespace, "status": "proposed"},
        "memory_health": {},
        "memory_unanchored": {"namespace": namespace, "limit": 5},
        "mood_log": {"label": "暖", "reason": "被夸了一句", "namespace": namespace},
        "mood_recent": {"namespace": namespace, "days": 3, "whose": "companion"},
        "night_dreams_recent": {"namespace": namespace, "nights": 3, "limit": 5},
        "todo_add": {"text": "Sort the star map", "priority": 4, "due": "2026-12-24", "namespace": namespace},
        "todo_next": {"namespace": namespace},
        "todo_list": {"namespace": namespace, "status": "open"},
        "todo_stats": {"namespace": namespace},
        "todo_done": {"id": ids["todo_done"]},
        "todo_abandon": {"id": ids["todo_abandon"]},
        "person_upsert": {
            "name": "Ana",
            "aliases": ["my sister", "安娜"],
            "relation": "sister",
            "namespace": namespace,
        },
        "person_get": {"id": ids["person"]},
        "person_list": {"namespace": namespace, "query": "my sister"},
        "person_merge": {"person_id": ids["person"], "other_id": ids["other_person"], "namespace": namespace},
        "conversation_get": {"message_id": ids["said"], "before": 2, "after": 2},
        "conversation_forget": {"message_id": ids["forget"]},
        "persona_get": {"namespace": namespace, "language": "zh"},
        "persona_tune": {"knob": "initiative", "delta": 0.05, "reason": "希望更主动", "namespace": namespace},
        "persona_revert": {"knob": "initiative", "reason": "back again", "namespace": namespace},
    }


def seed_fold(server: LiveServer, fold_id: str) -> None:
    statement = FoldStore.insert(fold_row(fold_id))
    with sqlite3.connect(server.runtime.db.path) as db:  # type: ignore[attr-defined]
        db.execute(statement.sql, statement.params)


INVALID_ARGUMENTS: dict[str, tuple[dict[str, Any], str]] = {
    "memory_search": ({"query": ""}, "query"),
    "memory_recall": ({"query": "x", "k": "many"}, "k"),
    "conversation_search": ({"query": "x", "start_date": "last week"}, "start_date"),
    "memory_list": ({"limit": 0}, "limit"),
    "memory_get": ({}, "id"),
    "memory_export": ({"namespace": "bad namespace!"}, "namespace"),
    "memory_boot": ({"surprise": True}, "surprise"),
    "diary_get": ({"date": "yesterday-ish"}, "date"),
    "memory_upsert": ({"content": "no key"}, "fact_key"),
    "memory_supersede": ({"old_id": "x", "content": 42}, "content"),
    "memory_archive": ({"id": ["a"]}, "id"),
    "memory_delete": ({"id": None}, "id"),
    "memory_ingest": ({"messages": []}, "messages"),
    "memory_pin": ({"content": "x", "note": 7}, "note"),
    "glossary_set": ({"term": "t", "aliases": "not-a-list"}, "aliases"),
    "plan_list": ({"limit": 500}, "limit"),
    "plan_update": ({"id": "x", "status": "finished"}, "status"),
    "context_expand": ({"fold_id": ""}, "fold_id"),
    "memory_share": ({"memory_id": "x", "target_namespace": "no spaces"}, "target_namespace"),
    "share_list": ({"status": "pending-ish" * 20}, "status"),
    "memory_health": ({"namespace": "default"}, "namespace"),
    "memory_unanchored": ({"cursor": 7}, "cursor"),
    "mood_log": ({"label": "happy", "intensity": 2}, "intensity"),
    "mood_recent": ({"days": 0}, "days"),
    "night_dreams_recent": ({"nights": 0}, "nights"),
    "todo_add": ({"text": ""}, "text"),
    "todo_next": ({"namespace": 7}, "namespace"),
    "todo_list": ({"status": "finished"}, "status"),
    "todo_stats": ({"extra": 1}, "extra"),
    "todo_done": ({}, "id"),
    "todo_abandon": ({"id": 5}, "id"),
    "person_upsert": ({"name": ""}, "name"),
    "person_get": ({"id": ""}, "id"),
    "person_list": ({"limit": 0}, "limit"),
    "person_merge": ({"person_id": "x"}, "other_id"),
    "conversation_get": ({"message_id": "x", "before": 51}, "before"),
    "conversation_forget": ({"message_id": ""}, "message_id"),
    "persona_get": ({"language": "fr"}, "language"),
    "persona_tune": ({"knob": "initiative", "delta": 0.05}, "reason"),
    "persona_revert": ({"knob": "charm", "reason": "x"}, "knob"),
}


async def upsert(client: Client, namespace: str, fact_key: str, content: str) -> str:
    result = await client.call_tool("memory_upsert", {"fact_key": fact_key, "content": content, "namespace": namespace})
    assert not result.is_error, result.content
    return result.structured_content["memory"]["id"]  # type: ignore[index]


async def test_every_tool_with_valid_and_invalid_arguments(server: LiveServer, mode: str) -> None:
    namespace = f"every-{mode}"
    async with connect(server, mode, key=OWNER_KEY) as client:  # the one key that may call them all
        ids = {
            name: await upsert(client, namespace, f"seed.{name}", f"Seed memory for {name}")
            for name in ("get", "supersede", "archive", "delete")
        }
        plan = {
            "fact_key": "seed.plan",
            "content": "周末去看海",
            "namespace": namespace,
            "type": "plan",
            "valid_days": 5,
        }
        ids["plan"] = (await client.call_tool("memory_upsert", plan)).structured_content["memory"]["id"]  # type: ignore[index]
        ids["fold"] = f"fold-{mode}"
        seed_fold(server, ids["fold"])
        for name in ("todo_done", "todo_abandon"):
            todo = {"text": f"Seed todo for {name}", "namespace": namespace}
            ids[name] = (await client.call_tool("todo_add", todo)).structured_content["todo"]["id"]  # type: ignore[index]
        for name, person in (("person", "Bo"), ("other_person", "Bobby")):
            found = await client.call_tool("person_upsert", {"name": person, "namespace": namespace})
            ids[name] = found.structured_content["person"]["id"]  # type: ignore[index]
        said = {
            "messages": [{"role": "user", "content": f"Seed turn {n}"} for n in range(2)],
            "namespace": namespace,
            "conversation_id": f"seed-{mode}",
        }
        stored = (await client.call_tool("memory_ingest", said)).structured_content["messages"]  # type: ignore[index]
        ids["said"], ids["forget"] = (m["id"] for m in stored)
        valid = valid_arguments(namespace, ids)
        assert set(valid) == set(TOOLS) == set(INVALID_ARGUMENTS)
        for name, arguments in valid.items():
            result = await client.call_tool(name, arguments)
            assert result.is_error is False, (name, result.content)
            assert isinstance(result.structured_content, dict)
            assert [c.type for c in result.content] == ["text"]
            assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        for name, (arguments, named) in INVALID_ARGUMENTS.items():
            result = await client.call_tool(name, arguments)
            assert result.is_error is True, (name, result.structured_content)
            text = result.content[0].text  # type: ignore[union-attr]
            assert text.startswith(f"Invalid arguments for {name}: ") and named in text, text
            # A time is refused as REST refuses it; any other argument as the MCP convention says.
            code = "invalid_time" if name in ("diary_get", "conversation_search") else "invalid_arguments"
            assert result.structured_content == {"error": {"code": code, "message": text}}


async def test_results_say_what_happened(server: LiveServer, mode: str) -> None:
    namespace = f"effects-{mode}"
    async with connect(server, mode) as client:
        memory_id = await upsert(client, namespace, "user.city", "Lives in Lisbon")
        got = (await client.call_tool("memory_get", {"id": memory_id})).structured_content
        assert got["memory"]["content"] == "Lives in Lisbon" and got["memory"]["source"] == "mcp"  # type: ignore[index]
        new = (
            await client.call_tool(
                "memory_supersede", {"old_id": memory_id, "content": "Moved to Porto", "namespace": namespace}
            )
        ).structured_content
        assert new["action"] == "superseded" and new["created"] is True  # type: ignore[index]
        assert new["memory"]["content"] == "Moved to Porto" and new["old_status"] == "active"  # type: ignore[index]
        listed = (await client.call_tool("memory_list", {"namespace": namespace})).structured_content
        assert [m["content"] for m in listed["memories"]] == ["Moved to Porto"]  # type: ignore[index]
        ingest = {"messages": [{"role": "user", "content": "hello", "id": "m1"}], "namespace": namespace}
        first = (await client.call_tool("memory_ingest", ingest)).structured_content
        again = (await client.call_tool("memory_ingest", ingest)).structured_content
        assert first and again and (first["stored"], first["duplicates"]) == (1, 0)
        assert (again["stored"], again["duplicates"]) == (0, 1) and again["messages"][0]["duplicate"] is True


async def test_upsert_then_recall_the_same_fact(server: LiveServer, mode: str) -> None:
    namespace = f"recall-{mode}"
    async with connect(server, mode) as client:
        first = await client.call_tool(
            "memory_upsert",
            {
                "fact_key": "user.coffee",
                "namespace": namespace,
                "type": "preference",
                "content": "Takes her coffee with oat milk",
            },
        )
        second = await client.call_tool(
            "memory_upsert",
            {
                "fact_key": "user.coffee",
                "namespace": namespace,
                "type": "preference",
                "content": "Takes her coffee with oat milk",
            },
        )
        assert first.structured_content["created"] is True and second.structured_content["created"] is False  # type: ignore[index]
        recalled = await client.call_tool(
            "memory_recall", {"query": "How does she take her coffee?", "namespace": namespace}
        )
    hits = recalled.structured_content["hits"]  # type: ignore[index]
    assert hits and hits[0]["content"] == "Takes her coffee with oat milk" and hits[0]["fact_key"] == "user.coffee"
    assert "oat milk" in recalled.structured_content["prompt"]  # type: ignore[index]


async def test_tool_failures_are_results_the_model_can_read(server: LiveServer, mode: str) -> None:
    async with connect(server, mode) as client:
        missing = await client.call_tool("memory_get", {"id": "no-such-memory"})
        secret = await client.call_tool(
            "memory_upsert",
            {
                "fact_key": "user.key",
                "namespace": f"secret-{mode}",
                "content": "my openai key is sk-proj-abcdefghijklmnopqrstuvwxyz123456",
            },
        )
        no_diary = await client.call_tool("diary_get", {"date": "2020-01-01"})
    assert missing.is_error and "not found" in missing.content[0].text  # type: ignore[union-attr]
    assert missing.structured_content["error"]["code"] == "not_found"  # type: ignore[index]
    assert secret.is_error and secret.structured_content["error"]["code"] == "sensitive_content"  # type: ignore[index]
    assert no_diary.is_error and "2020-01-01" in no_diary.content[0].text  # type: ignore[union-attr]


async def test_retired_tools_name_their_replacement(server: LiveServer, mode: str) -> None:
    async with connect(server, mode) as client:
        for name, message in RETIRED.items():
            result = await client.call_tool(name, {"content": "x"})
            assert result.is_error is True and result.content[0].text == message  # type: ignore[union-attr]
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("memory_teleport", {})
    assert unknown.value.error.code == -32602 and "Unknown tool: memory_teleport" in unknown.value.error.message


async def test_empty_resources_and_prompts(server: LiveServer, mode: str) -> None:
    async with connect(server, mode) as client:
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resource_templates == []
        assert (await client.list_prompts()).prompts == []


@pytest.mark.parametrize("path", ["/mcp", "/memory-mcp"])
async def test_the_key_in_the_query_or_the_header(server: LiveServer, mode: str, path: str) -> None:
    async with connect(server, mode, path=f"{path}?token={MCP_KEY}", key=None) as client:
        assert [t.name for t in (await client.list_tools()).tools] == MCP_KEY_TOOLS
    async with connect(server, mode, path=path, key=OWNER_KEY) as client:
        assert len((await client.list_tools()).tools) == len(TOOLS)


@pytest.mark.parametrize("key, says", [("wrong-key", "unknown API key"), (None, "Authorization: Bearer")])
async def test_a_wrong_or_missing_key_is_refused(server: LiveServer, mode: str, key: str | None, says: str) -> None:
    with pytest.raises(BaseException) as refused:
        async with connect(server, mode, key=key):
            pass
    error = mcp_error(refused.value)
    assert error.error.code == -31401 and says in error.error.message


# --------------------------------------------------------------------------- raw JSON-RPC


def post(
    server: LiveServer,
    body: Any,
    *,
    key: str | None = MCP_KEY,
    path: str = "/mcp",
    raw: bytes | None = None,
    **headers: str,
) -> httpx.Response:
    sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if key:
        sent["Authorization"] = f"Bearer {key}"
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx.post(server.url + path, content=content, headers=sent, timeout=30)


def modern(
    server: LiveServer,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    id: Any = 1,
    meta: dict[str, Any] | None = META,
    **headers: str,
) -> httpx.Response:
    body_params = dict(params or {})
    if meta is not None:
        body_params["_meta"] = meta
    routing = {"MCP_Protocol_Version": MODERN, "Mcp_Method": method}
    if method == "tools/call" and "name" in body_params:
        routing["Mcp_Name"] = body_params["name"]
    return post(server, {"jsonrpc": "2.0", "id": id, "method": method, "params": body_params}, **{**routing, **headers})


def legacy(
    server: LiveServer, method: str, params: dict[str, Any] | None = None, *, version: str = "2025-11-25", id: Any = 1
) -> httpx.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    return post(server, body, MCP_Protocol_Version=version)


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    return body["error"]


def test_malformed_json_is_a_parse_error(server: LiveServer) -> None:
    response = post(server, None, raw=b'{"jsonrpc": "2.0", "id": 1, "method": ')
    assert response.status_code == 400
    assert response.json()["id"] is None and error_of(response)["code"] == -32700


@pytest.mark.parametrize(
    "body",
    [
        "hello",
        42,
        None,
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": ["ping"]},
        {"jsonrpc": "2.0", "id": 1, "method": {"a": 1}},
    ],
)
def test_what_is_not_a_request_is_an_invalid_request(server: LiveServer, body: Any) -> None:
    response = post(server, body)
    error = error_of(response)
    assert error["code"] in (-32600, -32602) and error["message"].startswith("Invalid")
    assert response.status_code in (200, 400)


def test_unknown_methods(server: LiveServer) -> None:
    old = legacy(server, "tools/teleport", {})
    assert old.status_code == 200 and error_of(old)["code"] == -32601
    new = modern(server, "tools/teleport")
    assert new.status_code == 404 and error_of(new)["code"] == -32601 and new.json()["id"] == 1
    # 2026-07-28 has no handshake and no ping
    for method in ("initialize", "ping"):
        gone = modern(server, method)
        assert gone.status_code == 404 and error_of(gone)["code"] == -32601


def test_a_modern_request_without_meta(server: LiveServer) -> None:
    response = modern(server, "tools/list", meta=None)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32602 and "_meta" in error["message"]
    partial = modern(server, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": MODERN})
    assert partial.status_code == 400 and "clientCapabilities" in error_of(partial)["message"]
    # server/discover exists only in 2026-07-28, so it is read as such even without headers
    discover = post(server, {"jsonrpc": "2.0", "id": 3, "method": "server/discover"})
    assert discover.status_code == 400 and error_of(discover)["code"] == -32602


def test_an_unsupported_protocol_version(server: LiveServer) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    response = modern(server, "tools/list", meta=meta, MCP_Protocol_Version="2099-01-01")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32022 and error["data"]["requested"] == "2099-01-01"
    assert MODERN in error["data"]["supported"] and "2025-11-25" in error["data"]["supported"]
    handshake_era = legacy(server, "tools/list", {}, version="1999-12-31")
    assert handshake_era.status_code == 400 and error_of(handshake_era)["code"] == -32022


@pytest.mark.parametrize(
    "headers, named",
    [
        ({"Mcp_Method": "tools/call"}, "Mcp-Method"),
        ({"MCP_Protocol_Version": "2025-11-25"}, "MCP-Protocol-Version"),
        ({"Mcp_Name": "memory_search"}, "Mcp-Name"),
    ],
)
def test_headers_must_match_the_body(server: LiveServer, headers: dict[str, str], named: str) -> None:
    method = "tools/call" if "Mcp_Name" in headers else "tools/list"
    params = {"name": "memory_list", "arguments": {}} if method == "tools/call" else {}
    response = modern(server, method, params, **headers)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == -32020 and named in error["message"]


def test_missing_routing_headers_are_a_mismatch(server: LiveServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    response = post(server, body)
    assert response.status_code == 400 and error_of(response)["code"] == -32020
    no_name = post(
        server,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_list", "arguments": {}, "_meta": META},
        },
        MCP_Protocol_Version=MODERN,
        Mcp_Method="tools/call",
    )
    assert no_name.status_code == 400 and "Mcp-Name" in error_of(no_name)["message"]


def test_a_base64_mcp_name_is_decoded(server: LiveServer) -> None:
    response = modern(
        server,
        "tools/call",
        {"name": "memory_list", "arguments": {"namespace": "b64"}},
        Mcp_Name="=?base64?bWVtb3J5X2xpc3Q=?=",
    )
    assert response.status_code == 200 and response.json()["result"]["isError"] is False


def test_wrong_argument_types_are_tool_errors_never_500(server: LiveServer) -> None:
    for arguments in (
        {"query": ["a"]},
        {"query": "x", "k": {"n": 1}},
        {"query": "x", "min_score": "high"},
        {"query": "x", "k": 10**30},
    ):
        for response in (
            legacy(server, "tools/call", {"name": "memory_search", "arguments": arguments}),
            modern(server, "tools/call", {"name": "memory_search", "arguments": arguments}),
        ):
            assert response.status_code == 200, response.text
            result = response.json()["result"]
            assert result["isError"] is True and result["content"][0]["text"].startswith("Invalid arguments")


def test_an_unknown_type_filter_is_refused_as_on_rest(server: LiveServer) -> None:
    arguments = {"query": "x", "types": ["not-a-type"]}
    for response in (
        legacy(server, "tools/call", {"name": "memory_search", "arguments": arguments}),
        modern(server, "tools/call", {"name": "memory_search", "arguments": arguments}),
    ):
        result = response.json()["result"]
        assert result["isError"] is True and result["structuredContent"]["error"]["code"] == "invalid_type"
        assert "known types: fact" in result["content"][0]["text"]


@pytest.mark.parametrize(
    "params, says, modern_code",
    [
        ({"name": "memory_search", "arguments": "query=x"}, "arguments must be an object", -32602),
        ({"name": 12, "arguments": {}}, "params.name", -32020),  # 2026-07-28: no Mcp-Name can match a number
        ({"arguments": {}}, "params.name", -32602),
    ],
)
def test_a_malformed_tools_call_is_invalid_params(
    server: LiveServer, params: dict[str, Any], says: str, modern_code: int
) -> None:
    old = legacy(server, "tools/call", params)
    assert old.status_code == 200 and error_of(old)["code"] == -32602 and says in error_of(old)["message"]
    new = post(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": META}},
        MCP_Protocol_Version=MODERN,
        Mcp_Method="tools/call",
        **({"Mcp_Name": params["name"]} if isinstance(params.get("name"), str) else {}),
    )
    assert new.status_code == 400 and error_of(new)["code"] == modern_code


def test_oversized_arguments(server: LiveServer) -> None:
    long_query = legacy(server, "tools/call", {"name": "memory_search", "arguments": {"query": "x" * 20_000}})
    result = long_query.json()["result"]
    assert (
        result["isError"] is True
        and "query: String should have at most 10000 characters" in result["content"][0]["text"]
    )
    huge = legacy(server, "tools/call", {"name": "memory_pin", "arguments": {"content": "x" * 1_100_000}})
    assert huge.status_code == 413
    assert error_of(huge)["code"] == -32600 and "larger than 1048576 bytes" in error_of(huge)["message"]


def test_initialize_negotiates_the_version(server: LiveServer, schema_check) -> None:  # type: ignore[no-untyped-def]
    def initialize(version: str) -> httpx.Response:
        return post(
            server,
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            },
        )

    for asked, answered in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        (MODERN, "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ]:
        response = initialize(asked)
        assert response.status_code == 200 and "mcp-session-id" not in response.headers
        result = response.json()["result"]
        assert result["protocolVersion"] == answered and result["serverInfo"]["name"] == "companion-memory"
        schema_check("initialize", answered, result)
    bad = post(server, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
    assert error_of(bad)["code"] == -32602


def test_initialized_notification_and_ping(server: LiveServer) -> None:
    note = post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, MCP_Protocol_Version="2025-11-25")
    assert note.status_code == 202 and note.content == b""
    assert legacy(server, "ping").json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    # A session id from some other server is ignored, not required.
    response = post(
        server,
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list"},
        MCP_Protocol_Version="2025-06-18",
        Mcp_Session_Id="stale-session",
    )
    assert response.status_code == 200 and len(response.json()["result"]["tools"]) == len(MCP_KEY_TOOLS)
    modern_note = post(
        server,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": META}},
        MCP_Protocol_Version=MODERN,
        Mcp_Method="notifications/cancelled",
    )
    assert modern_note.status_code == 202 and modern_note.content == b""


def test_batches_only_where_the_version_has_them(server: LiveServer) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/teleport"},
        "junk",
    ]
    for headers in ({"MCP_Protocol_Version": "2025-03-26"}, {}):  # no header: taken as 2025-03-26
        response = post(server, batch, **headers)
        assert response.status_code == 200
        answers = response.json()
        assert [a["id"] for a in answers] == [1, 2, 3, 4, None]
        assert len(answers[0]["result"]["tools"]) == len(MCP_KEY_TOOLS) and answers[1]["result"] == {}
        assert [a["error"]["code"] for a in answers[2:]] == [-32600, -32601, -32600]
    only_notes = post(
        server, [{"jsonrpc": "2.0", "method": "notifications/initialized"}], MCP_Protocol_Version="2025-03-26"
    )
    assert only_notes.status_code == 202 and only_notes.content == b""
    for version in ("2025-06-18", "2025-11-25", MODERN):
        refused = post(server, batch[:1], MCP_Protocol_Version=version)
        assert (
            refused.status_code == 400
            and error_of(refused)["code"] == -32600
            and "batch" in error_of(refused)["message"]
        )
    assert error_of(post(server, [], MCP_Protocol_Version="2025-03-26"))["code"] == -32600


def test_a_modern_client_may_not_post_responses(server: LiveServer) -> None:
    response = post(
        server,
        {"jsonrpc": "2.0", "id": 5, "result": {}, "params": {"_meta": META}},
        MCP_Protocol_Version=MODERN,
        Mcp_Method="",
    )
    assert response.status_code == 400 and error_of(response)["code"] == -32600
    assert post(server, {"jsonrpc": "2.0", "id": 5, "result": {}}, MCP_Protocol_Version="2025-11-25").status_code == 202


def test_results_match_the_official_schema_of_each_version(server: LiveServer, schema_check) -> None:  # type: ignore[no-untyped-def]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("tools/list", {}),
        ("tools/call", {"name": "memory_list", "arguments": {"namespace": "schema"}}),
        ("tools/call", {"name": "memory_get", "arguments": {"id": "missing"}}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("prompts/list", {}),
    ]
    for method, params in [*calls, ("server/discover", {})]:
        response = modern(server, method, params)
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        assert result["resultType"] == "complete"
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "companion-memory"
        schema_check(method, MODERN, result)
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        for method, params in calls:
            if method == "resources/templates/list" and version == "2024-11-05":
                continue
            response = legacy(server, method, params, version=version)
            assert response.status_code == 200 and "resultType" not in response.json()["result"]
            schema_check(method, version, response.json()["result"])


def test_server_discover(server: LiveServer) -> None:
    result = modern(server, "server/discover").json()["result"]
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"]["tools"] == {"listChanged": False}
    assert result["instructions"] and result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")


def test_resources_and_prompts_that_do_not_exist(server: LiveServer) -> None:
    assert error_of(legacy(server, "resources/read", {"uri": "memory://x"}))["code"] == -32002
    read = post(
        server,
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "memory://x", "_meta": META}},
        MCP_Protocol_Version=MODERN,
        Mcp_Method="resources/read",
        Mcp_Name="memory://x",
    )
    assert read.status_code == 400 and error_of(read)["code"] == -32602
    assert error_of(legacy(server, "prompts/get", {"name": "hello"}))["code"] == -32602


def test_get_and_delete_are_not_allowed(server: LiveServer) -> None:
    for method in ("GET", "DELETE"):
        for headers in (
            {},
            {"MCP-Protocol-Version": MODERN},
            {"Mcp-Session-Id": "x", "MCP-Protocol-Version": "2025-11-25"},
        ):
            response = httpx.request(
                method,
                server.url + "/mcp",
                headers={**headers, "Authorization": f"Bearer {MCP_KEY}", "Accept": "text/event-stream"},
            )
            assert response.status_code == 405 and "POST" in response.headers["allow"]
            assert error_of(response)["code"] == -32600


def test_cors_for_browser_clients(server: LiveServer) -> None:
    preflight = httpx.options(
        server.url + "/mcp",
        headers={
            "Origin": "http://localhost:6274",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert "POST" in preflight.headers["access-control-allow-methods"]
    allowed = preflight.headers["access-control-allow-headers"].lower()
    for header in ("authorization", "mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-region"):
        assert header in allowed
    answer = post(server, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, Origin="http://localhost:6274")
    assert answer.headers["access-control-allow-origin"] == "*"
    refused = post(server, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, key="nope", Origin="http://localhost:6274")
    assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == "*"


def test_auth_errors_are_json_rpc(server: LiveServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for key in (None, "wrong"):
        response = post(server, body, key=key)
        assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["id"] is None and error_of(response)["code"] == -31401
    guide_dog = post(server, body, key=GUIDE_DOG_KEY)
    assert guide_dog.status_code == 403 and error_of(guide_dog)["code"] == -31403
    query = httpx.post(f"{server.url}/memory-mcp?token={MCP_KEY}", json=body, timeout=30)
    assert query.status_code == 200 and len(query.json()["result"]["tools"]) == len(MCP_KEY_TOOLS)
    x_api_key = post(server, body, key=None, X_API_Key=MCP_KEY)
    assert x_api_key.status_code == 200


def test_the_token_never_reaches_the_access_log(server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    access = logging.getLogger("uvicorn.access")
    before = access.level
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    try:
        server.server.config.access_log = True
        for key in (MCP_KEY, "a-wrong-token"):
            httpx.post(
                f"{server.url}/mcp?token={key}&x=1", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, timeout=30
            )
    finally:
        access.setLevel(before)
    lines = [r.getMessage() for r in caplog.records if r.name == "uvicorn.access"]
    assert len(lines) == 2 and all("/mcp" in line for line in lines), lines
    assert not any(MCP_KEY in line or "a-wrong-token" in line for line in lines), lines


# ------------------------------------------------------------- in process, on both databases


async def test_upsert_and_recall_in_process_on_sqlite_and_d1(client: httpx.AsyncClient) -> None:
    """The Worker's path: the ASGI app without a server, on the local SQLite and the D1 adapter."""
    headers = {"Authorization": f"Bearer {MCP_KEY}", "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}

    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0",
            "id": name,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
        response = await client.post("/mcp", json=body, headers={**headers, "Mcp-Name": name})
        assert response.status_code == 200, response.text
        return response.json()["result"]

    stored = await call("memory_upsert", {"fact_key": "user.pet", "content": "Has a grey cat called Moonbun"})
    assert stored["isError"] is False and stored["structuredContent"]["created"] is True
    recalled = await call("memory_recall", {"query": "what is the cat's name?"})
    assert recalled["structuredContent"]["hits"][0]["fact_key"] == "user.pet"
    listed = await client.post(
        "/memory-mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {MCP_KEY}"},
    )
    assert len(listed.json()["result"]["tools"]) == len(MCP_KEY_TOOLS)


async def test_a_private_span_is_never_stored_by_a_tool(server: LiveServer) -> None:
    async with connect(server, "auto", key=OWNER_KEY) as client:
        memory_id = await upsert(client, "private", "work", "I work at <private>Acme Corp</private> as a nurse")
        got = await client.call_tool("memory_get", {"id": memory_id})
        assert got.structured_content["memory"]["content"] == "I work at as a nurse"  # type: ignore[index]
        for tool, arguments in (
            ("memory_upsert", {"fact_key": "all", "content": "<private>all of it</private>"}),
            ("todo_add", {"text": "<private>all of it</private>"}),
            ("person_upsert", {"name": "<private>all of it</private>"}),
            ("glossary_set", {"term": "<private>all of it</private>"}),
        ):
            refused = await client.call_tool(tool, {**arguments, "namespace": "private"})
            assert refused.is_error and refused.structured_content["error"]["code"] == "empty_content"  # type: ignore[index]

        # Every tool that writes text the owner gave: the span is cut before the row is made.
        span = "<private>quokkaberry Tuesday</private>"
        written = [
            ("todo_add", {"text": f"buy {span} milk", "note": f"for {span}"}),
            ("glossary_set", {"term": f"tea {span}", "aliases": [f"chai {span}"], "definition": f"a {span} drink"}),
            ("person_upsert", {"name": f"Anna {span}", "aliases": [span + " sis"], "notes": f"ill {span}"}),
            ("person_upsert", {"name": "Lin", "relation": f"friend {span}"}),
            ("mood_log", {"label": "happy", "reason": f"the {span} news"}),
            ("memory_pin", {"content": f"you {span} matter", "note": f"said {span}"}),
            ("memory_ingest", {"messages": [{"role": "user", "content": f"I like {span} tea"}]}),
        ]
        answers = []
        for tool, arguments in written:
            answer = await client.call_tool(tool, {**arguments, "namespace": "private"})
            assert not answer.is_error, answer.content
            answers.append(answer.structured_content)
        anna, lin = answers[2]["person"]["id"], answers[3]["person"]["id"]  # type: ignore[index]
        merge = {"person_id": anna, "other_id": lin, "reason": f"same {span}", "namespace": "private"}
        assert not (await client.call_tool("person_merge", merge)).is_error
        share = {"memory_id": memory_id, "target_namespace": "default", "note": f"worth {span}"}
        assert not (await client.call_tool("memory_share", share)).is_error
    assert answers[0]["todo"]["text"] == "buy milk" and answers[2]["person"]["aliases"] == ["sis"]  # type: ignore[index]
    with sqlite3.connect(server.runtime.db.path) as db:  # type: ignore[attr-defined]
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        stored = str([db.execute(f'SELECT * FROM "{name}"').fetchall() for name in tables]).lower()
    assert "quokkaberry" not in stored and "private>" not in stored
