"""Her own todos over REST and MCP: add, the next one by the documented rule, done and
abandoned, stats, the prompt summary, the boot package and bad input."""

from __future__ import annotations

import dataclasses
from datetime import date
from typing import Any

import httpx

from companion_memory.clock import FixedClock
from companion_memory.domain.todo import Todo
from companion_memory.memory.todos import SUMMARY_CHARS, pick_next, todo_summary
from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import MCP_KEY, auth
from tests.memory.test_plans import tool

# The test clock reads 2026-11-30 12:00 UTC: Monday 20:00 in Singapore (DREAM_TIME_ZONE).
TODAY = date(2026, 11, 30)


async def add(client: httpx.AsyncClient, text: str, **fields: Any) -> dict[str, Any]:
    response = await client.post("/v1/todos", json={"text": text, **fields}, headers=auth(MCP_KEY))
    assert response.status_code == 201, response.text
    todo: dict[str, Any] = response.json()["todo"]
    return todo


async def listed(client: httpx.AsyncClient, status: str = "open") -> list[str]:
    rest = (await client.get("/v1/todos", params={"status": status}, headers=auth())).json()
    assert await tool(client, "todo_list", {"status": status}) == rest
    return [t["text"] for t in rest["todos"]]


async def next_one(client: httpx.AsyncClient) -> str | None:
    rest = (await client.get("/v1/todos/next", headers=auth())).json()
    assert await tool(client, "todo_next", {}) == rest
    return rest["todo"]["text"] if rest["todo"] else None


async def test_her_list_over_rest_and_mcp(client: httpx.AsyncClient, clock: FixedClock) -> None:
    assert await next_one(client) is None
    await add(client, "Sort the star map")
    clock.advance(minutes=1)
    urgent = await add(client, "Answer the letter", priority=5)
    clock.advance(minutes=1)
    mcp = await tool(client, "todo_add", {"text": "Water the plants", "due": "2026-11-30", "priority": 1})
    assert (mcp["todo"]["source"], mcp["todo"]["status"], mcp["todo"]["due"]) == ("mcp", "open", "2026-11-30")
    clock.advance(minutes=1)
    await add(client, "Read the poem", due="2026-12-05")
    clock.advance(minutes=1)
    await add(client, "Tidy the notes")

    # Due today first, then the highest priority, then the earliest due day, then the oldest.
    assert await listed(client) == [
        "Water the plants",
        "Answer the letter",
        "Read the poem",
        "Sort the star map",
        "Tidy the notes",
    ]
    assert await next_one(client) == "Water the plants"

    done = await tool(client, "todo_done", {"id": mcp["todo"]["id"]})
    assert (done["todo"]["status"], done["todo"]["closed_at"]) == ("done", "2026-11-30T12:04:00.000Z")
    abandoned = await client.post(f"/v1/todos/{urgent['id']}/abandon", headers=auth())
    assert abandoned.status_code == 200 and abandoned.json()["todo"]["status"] == "abandoned"
    again = await client.post(f"/v1/todos/{urgent['id']}/done", headers=auth())
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_open"
    missing = await client.post("/v1/todos/nope/done", headers=auth())
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    mcp_missing = (await mcp_call(client, MCP_KEY, "todo_abandon", {"id": "nope"})).json()["result"]
    assert mcp_missing["isError"] is True and mcp_missing["structuredContent"]["error"]["code"] == "not_found"

    assert await next_one(client) == "Read the poem"
    assert await listed(client, "done") == ["Water the plants"]
    assert await listed(client, "abandoned") == ["Answer the letter"]

    clock.advance(days=6)  # 2026-12-06: the poem is overdue
    stats = (await client.get("/v1/todos/stats", headers=auth())).json()
    assert await tool(client, "todo_stats", {}) == stats
    assert {k: stats[k] for k in ("open", "done", "abandoned", "done_last_7_days", "overdue")} == {
        "open": 3,
        "done": 1,
        "abandoned": 1,
        "done_last_7_days": 1,
        "overdue": 1,
    }
    assert stats["next"]["text"] == "Read the poem"
    assert stats["summary"].splitlines() == [
        "[Her todos] 3 open, 1 done in the last 7 days",
        "- Read the poem (due 2026-12-05 overdue)",
        "- Sort the star map",
        "- Tidy the notes",
    ]
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["todos"] == stats
    clock.advance(days=2)
    assert (await tool(client, "todo_stats", {}))["done_last_7_days"] == 0


async def test_namespaces_keep_their_own_lists(client: httpx.AsyncClient) -> None:
    await add(client, "Mine", namespace="work")
    assert await listed(client) == []
    page = (await client.get("/v1/todos", params={"namespace": "work"}, headers=auth())).json()
    assert [t["text"] for t in page["todos"]] == ["Mine"]
    assert (await tool(client, "todo_next", {"namespace": "work"}))["todo"]["text"] == "Mine"


async def test_bad_input_is_a_4xx_with_a_message(client: httpx.AsyncClient) -> None:
    for body in (
        {"text": ""},
        {"text": "x", "priority": 9},
        {"text": "x", "due": "someday"},
        {"text": "x" * 501},
        {"priority": 2},
        {"text": "x", "namespace": "bad namespace!"},
    ):
        response = await client.post("/v1/todos", json=body, headers=auth())
        assert 400 <= response.status_code < 500, (body, response.status_code)
        assert response.json()["error"]["message"]
    bad_status = await client.get("/v1/todos", params={"status": "finished"}, headers=auth())
    assert 400 <= bad_status.status_code < 500 and bad_status.json()["error"]["message"]
    for name, arguments in (
        ("todo_add", {"text": "x", "priority": 0}),
        ("todo_done", {}),
        ("todo_list", {"status": "finished"}),
    ):
        result = (await mcp_call(client, MCP_KEY, name, arguments)).json()
        assert result.get("error") or result["result"]["isError"], (name, result)
    guest = await client.post("/v1/todos", json={"text": "x"}, headers={"Authorization": "Bearer nope"})
    assert guest.status_code == 401


def test_the_summary_stays_short() -> None:
    todos = [
        Todo(
            id=str(i),
            namespace="default",
            text="a long todo " * 20,
            priority=3,
            source="api",
            created_at=f"{i}",
            updated_at=f"{i}",
        )
        for i in range(20)
    ]
    summary = todo_summary(todos, 2, TODAY)
    assert len(summary) <= SUMMARY_CHARS and summary.endswith("more")
    assert summary.count("\n- ") <= 4
    assert todo_summary([], 0, TODAY) == ""
    assert todo_summary([], 3, TODAY) == "[Her todos] 0 open, 3 done in the last 7 days"
    assert pick_next([dataclasses.replace(todos[0], status="done")], TODAY) is None


async def test_export_and_import_carry_todos_and_moods(client: httpx.AsyncClient, runtime: Runtime) -> None:
    todo = await add(client, "Sort the star map", due="2026-12-02", priority=4)
    await client.post(f"/v1/todos/{(await add(client, 'Old one'))['id']}/done", headers=auth())
    mood = (await client.post("/v1/moods", json={"label": "warm", "reason": "被夸了"}, headers=auth())).json()["mood"]
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert sorted(t["text"] for t in exported["todos"]) == ["Old one", "Sort the star map"]
    assert exported["moods"] == [mood]
    await runtime.db.run("DELETE FROM todos")
    await runtime.db.run("DELETE FROM moods")
    imported = await client.post("/api/memories/import", json=exported, headers=auth())
    assert imported.status_code == 200, imported.text
    assert (imported.json()["imported"]["todos"], imported.json()["imported"]["moods"]) == (2, 1)
    assert await listed(client) == ["Sort the star map"] and await listed(client, "done") == ["Old one"]
    assert (await client.get("/v1/todos/next", headers=auth())).json()["todo"] == todo
    assert (await client.get("/v1/moods", headers=auth())).json()["moods"] == [mood]

    exported["moods"][0]["label"] = "hungry"
    refused = await client.post("/api/memories/import", json=exported, headers=auth())
    assert refused.status_code == 400 and "moods[0].label" in refused.json()["error"]["message"]
    exported["moods"] = []
    exported["todos"][0]["status"] = "someday"  # the table's CHECK refuses it: counted, not a 500
    partly = (await client.post("/api/memories/import", json=exported, headers=auth())).json()
    assert partly["refused"] == {"todos": 1}
