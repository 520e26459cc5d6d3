"""REST and MCP say the same thing the same way: a write's answer, a hit, a glossary hit."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema

from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call, seed_episode
from tests.conftest import MCP_KEY, OWNER_KEY, auth
from tests.episodes import said


async def tool(client: httpx.AsyncClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = (await mcp_call(client, OWNER_KEY, name, arguments)).json()["result"]
    assert answer["isError"] is False, answer
    return answer["structuredContent"]


DIFFER = frozenset({"id", "superseded_by", "created_at", "updated_at", "last_seen_at", "fact_key"})


def without_ids_and_times(value: Any) -> Any:
    """What differs between two writes of the same thing: ids, timestamps, the key."""
    if isinstance(value, dict):
        return {k: without_ids_and_times(v) for k, v in value.items() if k not in DIFFER}
    if isinstance(value, list):
        return [without_ids_and_times(v) for v in value]
    return value


async def test_a_write_answers_alike(client: httpx.AsyncClient) -> None:
    body = {"content": "Takes her coffee with oat milk", "type": "preference", "tags": ["drink"]}
    rest = await client.post("/v1/memories", json={**body, "fact_key": "a.coffee", "source": "mcp"}, headers=auth())
    mcp = await tool(client, "memory_upsert", {**body, "fact_key": "b.coffee"})
    assert without_ids_and_times(rest.json()) == without_ids_and_times(mcp)
    rest_new = await client.post(
        f"/v1/memories/{rest.json()['memory']['id']}/supersede",
        json={"content": "Drinks it black now", "source": "mcp"},
        headers=auth(),
    )
    mcp_new = await tool(client, "memory_supersede", {"old_id": mcp["memory"]["id"], "content": "Drinks it black now"})
    assert without_ids_and_times(rest_new.json()) == without_ids_and_times(mcp_new)


async def test_a_search_answers_alike(client: httpx.AsyncClient) -> None:
    await client.post(
        "/v1/memories", json={"fact_key": "drink", "content": "Takes her coffee with oat milk"}, headers=auth()
    )
    await client.post(
        "/v1/glossary", json={"term": "bbt", "aliases": ["boba"], "definition": "bubble tea"}, headers=auth()
    )
    query = {"query": "coffee or boba?", "k": 5, "min_score": 0}
    rest = (await client.post("/v1/memory/search", json=query, headers=auth())).json()
    mcp = await tool(client, "memory_search", query)
    assert rest["hits"] and rest["glossary_hits"]
    assert mcp == rest


async def test_every_tool_answers_what_its_output_schema_says(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """MCP clients check structuredContent against the tool's outputSchema (the official
    SDK refuses a result that does not match): every tool's answer must fit it."""
    listed = await client.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers=auth() | {"Accept": "application/json"},
    )
    schemas = {t["name"]: t["outputSchema"] for t in listed.json()["result"]["tools"]}
    written = await tool(client, "memory_upsert", {"fact_key": "drink", "content": "Takes her coffee with oat milk"})
    memory_id = written["memory"]["id"]
    await client.post(
        "/v1/ingest/messages", json={"messages": [{"role": "user", "content": "coffee time"}]}, headers=auth()
    )
    await said(runtime, "coffee time, with oat milk", conversation_id="c1")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_search", {"query": "coffee"}),
        ("conversation_search", {"query": "coffee"}),
        ("memory_recall", {"query": "coffee"}),
        ("memory_list", {}),
        ("memory_get", {"id": memory_id}),
        ("memory_export", {}),
        ("memory_boot", {}),
        ("diary_get", {}),
        ("memory_supersede", {"old_id": memory_id, "content": "Drinks it black now"}),
        ("memory_ingest", {"messages": [{"role": "user", "content": "hello"}]}),
        ("memory_pin", {"content": "You are my favourite person"}),
        ("glossary_set", {"term": "bbt", "aliases": ["boba"]}),
        ("memory_upsert", {"fact_key": "pet", "content": "Has a cat"}),
        ("memory_health", {}),
        ("memory_unanchored", {}),
    ]
    pet = None
    for name, arguments in calls:
        answer = await tool(client, name, arguments)
        jsonschema.validate(answer, schemas[name])
        if name == "memory_upsert":
            pet = answer["memory"]["id"]
    for name in ("memory_archive", "memory_delete"):
        jsonschema.validate(await tool(client, name, {"id": pet}), schemas[name])
    plan = await tool(
        client, "memory_upsert", {"fact_key": "sea", "content": "周末去看海", "type": "plan", "valid_days": 3}
    )
    jsonschema.validate(plan, schemas["memory_upsert"])
    jsonschema.validate(await tool(client, "plan_list", {}), schemas["plan_list"])
    jsonschema.validate(await tool(client, "memory_boot", {}), schemas["memory_boot"])
    done = await tool(client, "plan_update", {"id": plan["memory"]["id"], "status": "done"})
    jsonschema.validate(done, schemas["plan_update"])
    runtime.settings = runtime.settings.model_copy(update={"CONTEXT_FOLD_THRESHOLD_TOKENS": 1000})
    long_chat = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"message {n} " + "word " * 200} for n in range(30)
    ]
    fold = await runtime.folding.fold("default", long_chat)
    jsonschema.validate(await tool(client, "context_expand", {"fold_id": fold.fold_id}), schemas["context_expand"])
    shared = await tool(client, "memory_share", {"memory_id": plan["memory"]["id"], "target_namespace": "family"})
    jsonschema.validate(shared, schemas["memory_share"])
    jsonschema.validate(await tool(client, "share_list", {}), schemas["share_list"])
    mood_and_todo_calls: list[tuple[str, dict[str, Any]]] = [
        ("mood_log", {"label": "开心", "reason": "a sunny walk"}),
        ("mood_recent", {}),
        ("night_dreams_recent", {}),
        ("todo_next", {}),
        ("todo_add", {"text": "Sort the star map", "due": "2026-12-02"}),
        ("todo_list", {}),
        ("todo_next", {}),
        ("todo_stats", {}),
        ("memory_boot", {}),
        ("persona_get", {"language": "zh"}),
        ("persona_tune", {"knob": "initiative", "delta": 0.05, "reason": "希望更主动"}),
        ("memory_boot", {}),
        ("persona_revert", {"reason": "back to her usual self"}),
    ]
    for name, arguments in mood_and_todo_calls:
        jsonschema.validate(await tool(client, name, arguments), schemas[name])
    first, second = [(await tool(client, "todo_add", {"text": t}))["todo"]["id"] for t in ("a", "b")]
    jsonschema.validate(await tool(client, "todo_done", {"id": first}), schemas["todo_done"])
    jsonschema.validate(await tool(client, "todo_abandon", {"id": second}), schemas["todo_abandon"])
    ana = (await tool(client, "person_upsert", {"name": "Ana", "aliases": ["my sister"]}))["person"]["id"]
    jsonschema.validate(await tool(client, "person_get", {"id": ana}), schemas["person_get"])
    sister = (await tool(client, "person_upsert", {"name": "安娜"}))["person"]["id"]
    merge = await tool(client, "person_merge", {"person_id": ana, "other_id": sister})
    jsonschema.validate(merge, schemas["person_merge"])
    jsonschema.validate(await tool(client, "person_list", {"query": "my sister"}), schemas["person_list"])
    turn = await seed_episode(client, "said once")
    jsonschema.validate(await tool(client, "conversation_get", {"message_id": turn}), schemas["conversation_get"])
    forgot = await tool(client, "conversation_forget", {"message_id": turn})
    jsonschema.validate(forgot, schemas["conversation_forget"])
    assert set(schemas) == {name for name, _ in calls + mood_and_todo_calls} | {
        "conversation_get",
        "conversation_forget",
        "person_upsert",
        "person_get",
        "person_merge",
        "person_list",
        "memory_archive",
        "memory_delete",
        "plan_list",
        "plan_update",
        "context_expand",
        "memory_share",
        "share_list",
        "todo_done",
        "todo_abandon",
    }


async def refusal(client: httpx.AsyncClient, name: str, arguments: dict[str, Any], key: str = OWNER_KEY) -> str:
    answer = (await mcp_call(client, key, name, arguments)).json()["result"]
    assert answer["isError"] is True, answer
    return str(answer["structuredContent"]["error"]["code"])


def rest_refusal(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


async def test_the_same_mistake_is_the_same_error_on_both_surfaces(client: httpx.AsyncClient) -> None:
    cases = [
        (
            await client.get("/v1/memories/nope", headers=auth()),
            await refusal(client, "memory_get", {"id": "nope"}),
            (404, "not_found"),
        ),
        (
            await client.post("/v1/memories/nope/archive", headers=auth()),
            await refusal(client, "memory_archive", {"id": "nope"}),
            (404, "not_found"),
        ),
        (
            await client.get("/v1/memories", params={"type": "wibble"}, headers=auth()),
            await refusal(client, "memory_list", {"type": "wibble"}),
            (400, "invalid_type"),
        ),
        (
            await client.post("/v1/memory/search", json={"query": "x", "types": ["wibble"]}, headers=auth()),
            await refusal(client, "memory_search", {"query": "x", "types": ["wibble"]}),
            (400, "invalid_type"),
        ),
        (
            await client.get("/v1/memories", params={"status": "lost"}, headers=auth()),
            await refusal(client, "memory_list", {"status": "lost"}),
            (400, "invalid_status"),
        ),
        (
            await client.get("/v1/conversations/messages/nope", headers=auth()),
            await refusal(client, "conversation_get", {"message_id": "nope"}),
            (404, "not_found"),
        ),
        (
            await client.delete("/v1/conversations/nope", headers=auth()),
            await refusal(client, "conversation_forget", {"conversation_id": "nope"}),
            (404, "not_found"),
        ),
        (
            await client.post("/v1/conversations/forget", json={"since": "2026-11-30T00:00:00Z"}, headers=auth()),
            await refusal(client, "conversation_forget", {"since": "2026-11-30T00:00:00Z"}),
            (400, "invalid_forget"),
        ),
        (
            await client.delete("/v1/conversations/messages/nope", headers=auth(MCP_KEY)),
            await refusal(client, "conversation_forget", {"message_id": "nope"}, MCP_KEY),
            (403, "forbidden"),
        ),
        (
            await client.get("/api/memories/export", headers=auth(MCP_KEY)),
            await refusal(client, "memory_export", {}, MCP_KEY),
            (403, "forbidden"),
        ),
        (
            await client.post(
                "/v1/persona/tune", json={"knob": "snark", "delta": 0.2, "reason": "sharper"}, headers=auth()
            ),
            await refusal(client, "persona_tune", {"knob": "snark", "delta": 0.2, "reason": "sharper"}),
            (409, "persona_brake"),
        ),
        (
            await client.post("/v1/persona/revert", json={"reason": "mine"}, headers=auth(MCP_KEY)),
            await refusal(client, "persona_revert", {"reason": "mine"}, MCP_KEY),
            (403, "forbidden"),
        ),
    ]
    for rest, mcp, expected in cases:
        assert rest_refusal(rest) == expected
        assert mcp == expected[1]


async def test_a_search_with_episodes_answers_alike(client: httpx.AsyncClient, runtime: Runtime) -> None:
    episode = await said(runtime, "I take my coffee with oat milk since the summer", conversation_id="c1")
    await said(runtime, "coffee again today", conversation_id="now")
    query = {"query": "coffee oat milk", "k": 5, "min_score": 0, "conversation_id": "now"}
    rest = (await client.post("/v1/memory/search", json=query, headers=auth())).json()
    mcp = await tool(client, "memory_search", query)
    assert [h["id"] for h in rest["hits"]] == [episode.id] and rest["meta"]["episodes"] == [episode.id]
    assert rest["hits"][0]["role"] == "user" and rest["hits"][0]["conversation_id"] == "c1"
    assert mcp == rest
