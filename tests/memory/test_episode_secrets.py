"""A pasted secret (the sensitive-data classes) said in a conversation is kept in the raw
message for the dream alone: no other key reads it on any surface that hands out what was
said (recall, search, conversation_search, conversation_get, the boot package, over REST
and MCP), and the gateway never injects it. On SQLite, the fake D1 and the real D1 engine."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import IM_KEY, MCP_KEY, OWNER_KEY, auth
from tests.upstreams import RecordingUpstream

SECRET = "hunter22!"
SAID = f"the wifi password: {SECRET} and the router is in the hall cupboard"
SHOWN = "the wifi password: [credential] and the router is in the hall cupboard"


async def say(client: httpx.AsyncClient) -> str:
    answer = await client.post(
        "/v1/ingest/messages",
        json={"conversation_id": "home", "messages": [{"role": "user", "content": SAID}]},
        headers=auth(IM_KEY),
    )
    assert answer.status_code == 200, answer.text
    message_id: str = answer.json()["messages"][0]["id"]
    return message_id


async def tool_text(client: httpx.AsyncClient, key: str, name: str, arguments: dict[str, Any]) -> str:
    result = (await mcp_call(client, key, name, arguments)).json()["result"]
    assert result["isError"] is False, result
    return json.dumps(result, ensure_ascii=False)


@pytest.mark.parametrize("key", [MCP_KEY, IM_KEY])
async def test_no_key_but_the_owners_reads_a_secret_that_was_said(
    client: httpx.AsyncClient, runtime: Runtime, key: str
) -> None:
    message_id = await say(client)
    await runtime.mirror.drain()
    query = {"query": "where is the wifi router, what is the password"}
    rest = [
        await client.post("/v1/memory/recall", json=query, headers=auth(key)),
        await client.post("/v1/memory/search", json=query, headers=auth(key)),
        await client.post("/v1/conversations/search", json=query, headers=auth(key)),
        await client.get(f"/v1/conversations/messages/{message_id}", headers=auth(key)),
        await client.get("/v1/memory_boot", headers=auth(key)),
    ]
    for answer in rest:
        assert answer.status_code == 200, (answer.request.url, answer.text)
        assert SECRET not in answer.text and "hunter" not in answer.text, answer.request.url
    # What was said is found, its secret a mark naming its class.
    assert all(SHOWN in answer.text for answer in rest)
    mcp = [
        await tool_text(client, key, "memory_recall", query),
        await tool_text(client, key, "memory_search", query),
        await tool_text(client, key, "conversation_search", query),
        await tool_text(client, key, "conversation_get", {"message_id": message_id}),
        await tool_text(client, key, "memory_boot", {}),
    ]
    assert all(SHOWN in text and "hunter" not in text for text in mcp), mcp
    # The secret itself finds nothing: no index holds it.
    for path in ("/v1/memory/recall", "/v1/conversations/search"):
        found = await client.post(path, json={"query": SECRET}, headers=auth(key))
        assert "hunter" not in found.text and SHOWN not in found.text
    # The owner's panel reads today's messages as they were said.
    owner = await client.get("/v1/memory_boot", headers=auth(OWNER_KEY))
    assert [m["content"] for m in owner.json()["today_messages"]] == [SAID]


async def test_the_gateway_never_injects_a_secret_that_was_said(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    await say(client)
    await dreaming.mirror.drain()
    upstream.reply_text = "It is in the hall cupboard."
    turn = {"model": "companion", "messages": [{"role": "user", "content": "Where is the wifi router again?"}]}
    answer = await client.post("/v1/chat/completions", json=turn, headers=auth())
    assert answer.status_code == 200, answer.text
    sent = json.dumps(upstream.requests[-1].json, ensure_ascii=False)
    assert "by you] " + SHOWN in sent and "hunter" not in sent
