"""Layers and weight, through REST and MCP on both databases: instant memories wake,
sleep and become tombstones unless recalled, short ones that keep coming up become long,
unused ones go cold (out of recall, still searchable, restorable), identity and pinned
ones are permanent; recall ranks by learned importance and per-type freshness, shows each
hit's components, and the floor reads the raw relevance."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock, iso
from companion_memory.runtime import Runtime
from tests.conftest import auth
from tests.memory.test_plans import tool


async def write(client: httpx.AsyncClient, fact_key: str, content: str, **fields: Any) -> dict[str, Any]:
    response = await client.post(
        "/v1/memories", json={"fact_key": fact_key, "content": content, **fields}, headers=auth()
    )
    assert response.status_code in (200, 201), response.text
    memory: dict[str, Any] = response.json()["memory"]
    return memory


async def memory(client: httpx.AsyncClient, memory_id: str) -> dict[str, Any]:
    detail: dict[str, Any] = (await client.get(f"/v1/memories/{memory_id}", headers=auth())).json()
    return detail


async def recall(client: httpx.AsyncClient, query: str, **body: Any) -> dict[str, Any]:
    """One recall over REST (it counts as using what it returns)."""
    response = await client.post("/v1/memory/recall", json={"query": query, "min_score": 0, **body}, headers=auth())
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def search(client: httpx.AsyncClient, query: str) -> list[str]:
    response = await client.post("/v1/memory/search", json={"query": query, "min_score": 0}, headers=auth())
    assert response.status_code == 200, response.text
    return [h["id"] for h in response.json()["hits"]]


async def night(runtime: Runtime) -> dict[str, Any]:
    report = await runtime.nightly.run()
    result: dict[str, Any] = {s.name: s.result for s in report.steps}["layers"]
    return result


async def test_new_memories_start_short_and_lasting_kinds_are_permanent(client: httpx.AsyncClient) -> None:
    note = await write(client, "note.tea", "Bought oolong tea leaves")
    assert (note["layer"], note["layer_reason"]) == ("short", "new memory")
    for fact_key, kind in (("user.name", "identity"), ("bot.persona", "persona"), ("rule.night", "boundary")):
        written = await write(client, fact_key, f"A {kind} memory", type=kind)
        assert written["layer"] == "permanent" and kind in written["layer_reason"]

    pinned = (await client.patch(f"/v1/memories/{note['id']}", json={"pinned": True}, headers=auth())).json()["memory"]
    assert (pinned["layer"], pinned["layer_reason"]) == ("permanent", "pinned")
    unpinned = (await client.patch(f"/v1/memories/{note['id']}", json={"pinned": False}, headers=auth())).json()[
        "memory"
    ]
    assert unpinned["layer"] == "long"

    by_mcp = await tool(
        client,
        "memory_upsert",
        {"fact_key": "now.cooking", "content": "Cooking carbonara right now", "layer": "instant"},
    )
    assert by_mcp["memory"]["layer"] == "instant" and by_mcp["memory"]["layer_reason"].startswith("written as instant")
    listed = await tool(client, "memory_list", {"layer": "instant"})
    assert [m["id"] for m in listed["memories"]] == [by_mcp["memory"]["id"]]
    rest = (await client.get("/v1/memories", params={"layer": "permanent"}, headers=auth())).json()
    assert {m["type"] for m in rest["memories"]} == {"identity", "persona", "boundary"}

    refused = await client.post(
        "/v1/memories", json={"fact_key": "x", "content": "x y z", "layer": "permanent"}, headers=auth()
    )
    assert refused.status_code == 400 and "layer" in refused.json()["error"]["message"]
    bad_filter = await client.get("/v1/memories", params={"layer": "warm"}, headers=auth())
    assert bad_filter.status_code == 400 and "layer" in bad_filter.json()["error"]["message"]


async def test_an_instant_memory_wakes_sleeps_and_becomes_a_tombstone(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    instant = await write(client, "now.cooking", "Cooking spaghetti carbonara for dinner tonight", layer="instant")
    vague_query = "what are we eating"  # found by meaning alone
    assert [h["id"] for h in (await recall(client, vague_query))["hits"]] == [instant["id"]]  # revived once

    clock.advance(hours=7)  # asleep: only a query that names it brings it back
    vague = await recall(client, vague_query)
    assert vague["hits"] == [] and instant["id"] in vague["meta"]["resting"]
    assert await search(client, vague_query) == [instant["id"]]  # search still finds it
    named = await recall(client, "spaghetti carbonara")
    assert [h["id"] for h in named["hits"]] == [instant["id"]]
    assert named["hits"][0]["revivals"] == 2 and named["hits"][0]["layer_at"] == iso(clock.now())

    clock.advance(hours=7)  # revived seven hours ago: asleep again
    assert (await recall(client, vague_query))["hits"] == []
    clock.advance(hours=6)  # thirteen hours unrecalled: a tombstone from now on
    assert await search(client, "spaghetti carbonara") == []
    assert await night(runtime) == {"moved": {}, "tombstones": 1}
    detail = await memory(client, instant["id"])
    assert detail["memory"]["status"] == "expired"
    assert detail["events"][-1]["event"] == "expired" and "not recalled" in detail["events"][-1]["detail"]["reason"]


async def test_an_instant_memory_revived_three_times_is_kept(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    instant = await write(client, "now.reading", "Reading Piranesi by Susanna Clarke", layer="instant")
    for _ in range(2):
        clock.advance(hours=5)
        await recall(client, "Piranesi Susanna Clarke")
    by_mcp = await tool(client, "memory_recall", {"query": "Piranesi Susanna Clarke", "min_score": 0})
    kept = by_mcp["hits"][0]
    assert (kept["id"], kept["layer"], kept["revivals"]) == (instant["id"], "long", 3)
    assert kept["layer_reason"] == "instant memory revived 3 times"
    events = (await memory(client, instant["id"]))["events"]
    assert events[-1]["event"] == "layer_changed" and events[-1]["detail"]["to"] == "long"
    clock.advance(days=2)
    assert (await night(runtime))["tombstones"] == 0
    assert (await memory(client, instant["id"]))["memory"]["status"] == "active"


async def test_short_becomes_long_when_mentioned_three_times_over_two_days(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    slow = await write(client, "user.bread", "Bakes sourdough bread on weekends")
    quick = await write(client, "user.tea", "Drinks jasmine tea in the afternoon")
    for _ in range(2):
        await write(client, "user.tea", "Drinks jasmine tea in the afternoon")  # three times in an hour
    clock.advance(days=1)
    await write(client, "user.bread", "Bakes sourdough bread on weekends")
    clock.advance(days=1)
    await write(client, "user.bread", "Bakes sourdough bread on weekends")

    assert await night(runtime) == {"moved": {"long": 1}, "tombstones": 0}
    moved = await memory(client, slow["id"])
    assert moved["memory"]["layer"] == "long"
    assert moved["memory"]["layer_reason"] == "mentioned or recalled 3 times over 2 days"
    assert moved["events"][-1]["event"] == "layer_changed" and moved["events"][-1]["actor"] == "nightly"
    assert (await memory(client, quick["id"]))["memory"]["layer"] == "short"


async def test_unused_memories_go_cold_stay_searchable_and_come_back(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    old = await write(client, "user.lamp", "The reading lamp in the study is brass")
    other = await write(client, "user.chair", "The study chair is a brass-legged Eames copy")
    name = await write(client, "user.name", "Her name is Mei", type="identity")
    clock.advance(days=91)
    assert len((await recall(client, "Eames chair", k=1))["hits"]) == 1  # the chair is used; the lamp is not
    assert await night(runtime) == {"moved": {"cold": 1}, "tombstones": 0}

    cold = (await memory(client, old["id"]))["memory"]
    assert cold["layer"] == "cold" and cold["layer_reason"] == "not mentioned or recalled for 91 days"
    answer = await recall(client, "brass reading lamp in the study")
    assert old["id"] not in [h["id"] for h in answer["hits"]] and old["id"] in answer["meta"]["resting"]
    assert old["id"] in await search(client, "brass reading lamp")
    listed = (await client.get("/v1/memories", params={"layer": "cold"}, headers=auth())).json()
    assert [m["id"] for m in listed["memories"]] == [old["id"]]
    assert (await memory(client, name["id"]))["memory"]["layer"] == "permanent"
    assert (await memory(client, other["id"]))["memory"]["layer"] == "short"

    restored = await client.patch(f"/v1/memories/{old['id']}", json={"layer": "long"}, headers=auth())
    assert restored.json()["memory"]["layer_reason"].startswith("moved to long by")
    assert old["id"] in [h["id"] for h in (await recall(client, "brass reading lamp in the study"))["hits"]]

    await client.patch(f"/v1/memories/{old['id']}", json={"layer": "cold"}, headers=auth())
    said_again = await write(client, "user.lamp", "The reading lamp in the study is brass")
    assert (said_again["layer"], said_again["layer_reason"]) == ("long", "said again after going cold")


async def test_importance_ranks_and_meta_shows_each_hits_components(client: httpx.AsyncClient) -> None:
    low = await write(client, "user.snack.a", "Snack of choice: salted peanuts", importance=0.05)
    high = await write(client, "user.snack.b", "Snack of choice: salted almonds", importance=0.95)
    for answer in (
        await recall(client, "snack of choice salted"),
        await tool(client, "memory_search", {"query": "snack of choice salted", "min_score": 0}),
    ):
        assert [h["id"] for h in answer["hits"]] == [high["id"], low["id"]]
        parts = answer["meta"]["components"]
        assert parts[high["id"]]["importance"] > parts[low["id"]]["importance"] + 0.4
        for hit in answer["hits"]:
            part = parts[hit["id"]]
            assert part["score"] == pytest.approx(hit["score"], abs=1e-5)
            assert part["score"] == pytest.approx(part["relevance"] * part["weight"] * part["decay"])


async def test_events_fade_and_preferences_do_not(client: httpx.AsyncClient, clock: FixedClock) -> None:
    event = await write(client, "day.hike", "Went hiking at the reservoir with Ana", type="event")
    liking = await write(client, "user.hike", "Likes hiking at the reservoir", type="preference")
    clock.advance(days=30)
    parts = (await recall(client, "hiking at the reservoir"))["meta"]["components"]
    assert parts[event["id"]]["freshness"] == pytest.approx(0.5)
    assert parts[liking["id"]]["freshness"] == 1.0


async def test_being_recalled_feeds_importance(client: httpx.AsyncClient, clock: FixedClock) -> None:
    kept = await write(client, "user.plant", "Waters the monstera every Sunday")
    before = (await recall(client, "monstera"))["meta"]["components"][kept["id"]]["importance"]
    for _ in range(4):
        clock.advance(hours=1)
        await recall(client, "monstera")
    after = (await recall(client, "monstera"))["meta"]["components"][kept["id"]]["importance"]
    assert after > before + 0.1


async def test_a_hand_written_memory_ranks_higher_but_the_floor_reads_raw_relevance(
    client: httpx.AsyncClient,
) -> None:
    plain = await write(client, "user.city.a", "Lived in Lisbon for two years")
    by_hand = await write(client, "user.city.b", "Lived in Porto for two years", authored_by="owner")
    answer = await recall(client, "lived for two years")
    parts = answer["meta"]["components"]
    assert parts[by_hand["id"]]["authored"] == 1.15 and parts[plain["id"]]["authored"] == 1.0
    assert answer["hits"][0]["id"] == by_hand["id"]
    raw = parts[by_hand["id"]]["raw_score"]
    floored = await recall(client, "lived for two years", min_score=min(1.0, raw + 0.01))
    assert by_hand["id"] in floored["meta"]["floored"]
