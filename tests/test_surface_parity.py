"""REST and MCP say the same thing the same way: a write's answer, a hit, a glossary hit."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import OWNER_KEY, auth
from tests.test_mcp_scopes import mcp_call


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
