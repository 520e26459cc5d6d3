"""People over REST and MCP, on both databases: the registry, recall by any of her names,
familiarity (mentions and the half-life), the dream's proposals (offline and from the
model) and the owner's decisions on them, a merge re-pointing memories."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.domain.person import mentioned
from companion_memory.memory.people.extract import people_in, same_people_in
from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import MCP_KEY, auth
from tests.fakes.embedder import HashEmbedder
from tests.memory.test_plans import tool
from tests.nightly.test_dream import say
from tests.nightly.test_dream_model import answer
from tests.upstreams import RecordingUpstream


async def register(client: httpx.AsyncClient, name: str, **fields: Any) -> dict[str, Any]:
    response = await client.post("/v1/people", json={"name": name, **fields}, headers=auth(MCP_KEY))
    assert response.status_code == 201, response.text
    person: dict[str, Any] = response.json()["person"]
    return person


async def remember(client: httpx.AsyncClient, key: str, content: str) -> str:
    response = await client.post("/v1/memories", json={"fact_key": key, "content": content}, headers=auth())
    assert response.status_code == 201, response.text
    memory_id: str = response.json()["memory"]["id"]
    return memory_id


async def recalled(client: httpx.AsyncClient, query: str) -> list[str]:
    """The contents recall answers over REST; MCP memory_recall answers the same."""
    rest = await client.post("/v1/memory/recall", json={"query": query, "k": 5}, headers=auth())
    assert rest.status_code == 200, rest.text
    mcp = await tool(client, "memory_recall", {"query": query, "k": 5, "min_score": 0})
    rest_ids = [h["id"] for h in rest.json()["hits"]]
    assert [h["id"] for h in mcp["hits"]] == rest_ids
    return [h["content"] for h in rest.json()["hits"]]


async def pending(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    rest = (await client.get("/v1/person_proposals", headers=auth())).json()
    proposals: list[dict[str, Any]] = rest["proposals"]
    return proposals


async def test_the_registry_over_rest_and_mcp(client: httpx.AsyncClient) -> None:
    ana = await register(client, "Ana", aliases=["my sister", "安娜"], relation="sister", notes="Lives in Lisbon")
    assert (ana["familiarity"], ana["mentions"], ana["status"], ana["source"]) == (0.0, 0, "active", "api")
    tom = await tool(client, "person_upsert", {"name": "Tom", "relation": "colleague"})
    assert tom["created"] is True and tom["person"]["source"] == "mcp"

    # The same name again (any case, any of her names) changes her instead of adding one.
    again = await client.post("/v1/people", json={"name": "ana", "notes": "Moved to Porto"}, headers=auth())
    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["person"]["id"] == ana["id"] and again.json()["person"]["notes"] == "Moved to Porto"
    assert again.json()["person"]["aliases"] == ["my sister", "安娜"]

    # A name another person goes by is refused: a merge says two are one.
    taken = await client.patch(
        f"/v1/people/{tom['person']['id']}", json={"name": "Tom", "aliases": ["安娜"]}, headers=auth()
    )
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "name_taken"
    mcp_taken = (await mcp_call(client, MCP_KEY, "person_upsert", {"name": "My Sister"})).json()["result"]
    assert mcp_taken["isError"] is False and mcp_taken["structuredContent"]["person"]["id"] == ana["id"]

    edited = await client.patch(
        f"/v1/people/{tom['person']['id']}", json={"name": "Tom", "aliases": ["Tommy"]}, headers=auth()
    )
    assert edited.status_code == 200 and edited.json()["person"]["aliases"] == ["Tommy"]
    assert edited.json()["person"]["relation"] == "colleague"

    rest = (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()
    assert await tool(client, "person_get", {"id": ana["id"]}) == rest
    assert rest["person"]["name"] == "Ana" and rest["memories"] == []
    listed = (await client.get("/v1/people", headers=auth())).json()
    assert await tool(client, "person_list", {}) == listed
    assert [p["name"] for p in listed["people"]] == ["Ana", "Tom"]
    named = (await client.get("/v1/people", params={"query": "what did my sister say?"}, headers=auth())).json()
    assert [p["name"] for p in named["people"]] == ["Ana"]
    assert [p["name"] for p in (await tool(client, "person_list", {"query": "to"}))["people"]] == ["Tom"]

    missing = await client.get("/v1/people/nope", headers=auth())
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    mcp_missing = (await mcp_call(client, MCP_KEY, "person_get", {"id": "nope"})).json()["result"]
    assert mcp_missing["isError"] is True and mcp_missing["structuredContent"]["error"]["code"] == "not_found"
    blank = await client.post("/v1/people", json={"name": "  "}, headers=auth())
    assert blank.status_code == 400


async def test_memories_about_her_are_recalled_by_any_of_her_names(client: httpx.AsyncClient) -> None:
    await remember(client, "people.ana.cats", "安娜养了两只猫")
    await remember(client, "people.ana.job", "Ana works as a nurse in Porto")
    await remember(client, "user.tea", "I drink green tea every morning")
    # Before she is registered, "my sister" names nothing that the memories say.
    assert "Ana works as a nurse in Porto" not in await recalled(client, "what does my sister do")

    ana = await register(client, "Ana", aliases=["my sister", "安娜"], relation="sister")
    for query in ("what does my sister do", "Ana", "安娜最近怎么样"):
        found = await recalled(client, query)
        assert {"安娜养了两只猫", "Ana works as a nurse in Porto"} <= set(found), (query, found)
        assert "I drink green tea every morning" not in found
    note = (await client.post("/v1/memory/search", json={"query": "my sister"}, headers=auth())).json()["meta"]
    assert any("also searched as Ana, 安娜" in n for n in note["notes"])

    # Registering her linked the memories that name her.
    detail = (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()
    assert sorted(m["content"] for m in detail["memories"]) == ["Ana works as a nurse in Porto", "安娜养了两只猫"]
    assert (await client.get("/v1/people", headers=auth())).json()["people"][0]["memory_count"] == 2


async def test_a_query_is_embedded_once_and_again_when_it_gains_her_other_names(
    client: httpx.AsyncClient, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    embed = embedder.embed

    async def recording(texts: Sequence[str], *, kind: str) -> list[list[float]]:
        if kind == "query":
            asked.extend(texts)
        return await embed(texts, kind=kind)

    monkeypatch.setattr(embedder, "embed", recording)
    await register(client, "Ana", aliases=["my sister", "安娜"], relation="sister")

    async def embedded_for(query: str) -> list[str]:
        asked.clear()
        response = await client.post("/v1/memory/recall", json={"query": query}, headers=auth())
        assert response.status_code == 200, response.text
        return list(asked)

    # Asked for at once, before recall knows whom the query names: used as it is.
    assert len(await embedded_for("what do I drink in the morning")) == 1
    # The vector search looks for her other names too.
    *_, last = await embedded_for("what does my sister do")
    assert "ana" in last.casefold() and "安娜" in last


async def test_familiarity_grows_with_mentions_and_halves_with_the_half_life(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    ana = await register(client, "Ana", aliases=["安娜"])
    await say(
        client,
        ("user", "Ana called me today", "2026-11-29T02:00:00Z"),
        ("assistant", "How is Ana doing?", "2026-11-29T02:00:05Z"),
        ("user", "安娜说她很好", "2026-11-29T03:00:00Z"),
        ("user", "Banana bread for dinner", "2026-11-29T04:00:00Z"),  # "Ana" is no word of it
    )
    report = (await runtime.dream.night())[0]
    assert report["counts"]["people_mentioned"] == 1
    person = (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()["person"]
    assert person["mentions"] == 3 and person["last_mentioned_at"] == "2026-11-29T03:00:00.000Z"
    # Three mentions; she was registered after them (now), so nothing has faded yet.
    expected = mentioned(0.0, 3)
    assert person["familiarity"] == pytest.approx(expected, abs=1e-4)
    # The dream read those messages: a second night counts nothing twice.
    await runtime.dream.night()
    assert (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()["person"]["mentions"] == 3

    clock.advance(days=30)
    later = (await tool(client, "person_get", {"id": ana["id"]}))["person"]["familiarity"]
    assert later == pytest.approx(expected / 2, abs=1e-4)


def test_explicit_words_name_people() -> None:
    [ana] = people_in("I'm meeting my sister Ana tomorrow.")
    assert (ana.name, ana.aliases, ana.relation, ana.evidence) == ("Ana", ["my sister"], "sister", ["my sister Ana"])
    [lin] = people_in("我姐姐安娜今天来了")
    assert (lin.name, lin.aliases, lin.relation, lin.evidence) == ("安娜", ["我姐姐"], "sister", ["我姐姐安娜"])
    [friend] = people_in("我的朋友叫小雨，她很好")
    assert (friend.name, friend.relation) == ("小雨", "friend")
    assert people_in("my sister is great") == [] and people_in("我姐姐今天来了") == []
    [same] = same_people_in("Ana, also called 安娜, is coming")
    assert same.names == ("Ana", "安娜")


async def test_the_dream_proposes_people_and_the_owner_decides(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await say(
        client,
        ("user", "I'm meeting my sister Ana tomorrow.", "2026-11-29T02:00:00Z"),
        ("user", "我的同事小雨也来", "2026-11-29T03:00:00Z"),
        ("user", "my sister is great", "2026-11-29T04:00:00Z"),  # no name: no one
    )
    report = (await runtime.dream.night())[0]
    assert report["counts"]["people_proposals"] == 2
    proposals = {p["name"]: p for p in await pending(client)}
    assert set(proposals) == {"Ana", "小雨"}
    assert (proposals["Ana"]["kind"], proposals["Ana"]["aliases"], proposals["Ana"]["relation"]) == (
        "person",
        ["my sister"],
        "sister",
    )
    assert proposals["Ana"]["evidence"] == ["my sister Ana"] and proposals["Ana"]["source"] == "dream"

    # An agent's key may read the queue but not decide it.
    denied = await client.post(f"/v1/person_proposals/{proposals['Ana']['id']}/approve", headers=auth(MCP_KEY))
    assert denied.status_code == 403
    approved = await client.post(f"/v1/person_proposals/{proposals['Ana']['id']}/approve", headers=auth())
    assert approved.status_code == 200, approved.text
    ana = approved.json()["person"]
    assert (ana["name"], ana["aliases"], ana["relation"], ana["source"]) == ("Ana", ["my sister"], "sister", "dream")
    assert approved.json()["proposal"]["status"] == "approved"
    twice = await client.post(f"/v1/person_proposals/{proposals['Ana']['id']}/approve", headers=auth())
    assert twice.status_code == 409 and twice.json()["error"]["code"] == "proposal_not_pending"
    rejected = await client.post(f"/v1/person_proposals/{proposals['小雨']['id']}/reject", headers=auth())
    assert rejected.status_code == 200 and rejected.json()["person"] is None
    assert [p["name"] for p in (await client.get("/v1/people", headers=auth())).json()["people"]] == ["Ana"]
    assert await pending(client) == []


async def test_a_merge_keeps_the_names_and_re_points_the_memories(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ana = await register(client, "Ana", notes="Nurse")
    sister = await register(client, "安娜", aliases=["我姐姐"], relation="sister", notes="Has two cats")
    cats = await remember(client, "people.sister.cats", "我姐姐养了两只猫")
    nurse = await remember(client, "people.ana.job", "Ana works as a nurse")
    await runtime.nightly.run("test")  # links the memories written since they were registered
    assert [m["id"] for m in (await client.get(f"/v1/people/{sister['id']}", headers=auth())).json()["memories"]] == [
        cats
    ]

    # The dream reads that the two are one, and proposes the merge.
    await say(client, ("user", "Ana, also called 安娜, is visiting", "2026-11-29T02:00:00Z"))
    await runtime.dream.night()
    [proposal] = await pending(client)
    assert (proposal["kind"], proposal["person_id"], proposal["other_id"]) == ("merge", ana["id"], sister["id"])
    assert proposal["person"]["name"] == "Ana" and proposal["other"]["name"] == "安娜"
    # Proposing the same merge over MCP is the same question, not a second one.
    same = await tool(client, "person_merge", {"person_id": ana["id"], "other_id": sister["id"]})
    assert same["proposal"]["id"] == proposal["id"] and len(await pending(client)) == 1

    # Rejected, both stay.
    assert (await client.post(f"/v1/person_proposals/{proposal['id']}/reject", headers=auth())).status_code == 200
    assert len((await client.get("/v1/people", headers=auth())).json()["people"]) == 2

    # Asked again (by an agent) and approved: one person, every name, every memory.
    asked = await tool(client, "person_merge", {"person_id": ana["id"], "other_id": sister["id"], "reason": "same"})
    assert asked["proposal"]["status"] == "pending" and asked["proposal"]["source"] == "mcp"
    decided = await client.post(f"/v1/person_proposals/{asked['proposal']['id']}/approve", headers=auth())
    assert decided.status_code == 200, decided.text
    merged = decided.json()["person"]
    assert (merged["id"], merged["name"], merged["aliases"]) == (ana["id"], "Ana", ["安娜", "我姐姐"])
    assert (merged["relation"], merged["notes"]) == ("sister", "Nurse\nHas two cats")
    detail = (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()
    assert sorted(m["id"] for m in detail["memories"]) == sorted([cats, nurse])
    gone = (await client.get(f"/v1/people/{sister['id']}", headers=auth())).json()
    assert (gone["person"]["status"], gone["person"]["merged_into"], gone["memories"]) == ("merged", ana["id"], [])
    assert [p["name"] for p in (await client.get("/v1/people", headers=auth())).json()["people"]] == ["Ana"]
    # Her old names now find what was said of Ana.
    assert "Ana works as a nurse" in await recalled(client, "我姐姐最近怎么样")

    late = await client.patch(f"/v1/people/{sister['id']}", json={"name": "安娜"}, headers=auth())
    assert late.status_code == 409 and late.json()["error"]["code"] == "person_merged"
    itself = await client.post(
        "/v1/person_proposals", json={"person_id": ana["id"], "other_id": ana["id"]}, headers=auth()
    )
    assert itself.status_code == 400 and itself.json()["error"]["code"] == "same_person"
    assert itself.json()["error"]["message"] == "a person cannot be merged into themselves"


async def test_the_dream_model_proposes_people_and_merges(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    ana = await register(client, "Ana")
    sister = await register(client, "my sister")
    await say(client, ("user", "Ana is my sister, and Jo from work says hi", "2026-11-29T02:00:00Z"))
    upstream.reply_text = answer(
        people=[
            {"name": "Jo", "relation": "colleague", "aliases": ["Jo from work"], "evidence": ["Jo from work"]},
            {"name": "Made Up", "evidence": ["words nobody said"]},
        ],
        same_person=[{"names": ["Ana", "my sister"], "evidence": ["Ana is my sister"]}],
    )
    report = (await dreaming.dream.night())[0]
    assert report["status"] == "succeeded" and report["counts"]["people_proposals"] == 2
    assert report["counts"]["rejected_no_evidence"] == 1
    found = {p["kind"]: p for p in await pending(client)}
    assert (found["merge"]["person_id"], found["merge"]["other_id"]) == (ana["id"], sister["id"])
    assert (found["person"]["name"], found["person"]["relation"]) == ("Jo", "colleague")
    sent = upstream.requests[-1].json["messages"][0]["content"]
    assert '"same_person"' in sent and '"people"' in sent


async def test_the_star_map_shows_people_as_their_own_kind_of_star(client: httpx.AsyncClient) -> None:
    cats = await remember(client, "people.ana.cats", "安娜养了两只猫")
    await remember(client, "user.tea", "I drink green tea every morning")
    ana = await register(client, "Ana", aliases=["安娜"], relation="sister")
    graph = (await client.get("/v1/admin/graph", headers=auth())).json()
    [person] = [n for n in graph["nodes"] if n["kind"] == "person"]
    assert (person["id"], person["type"], person["content"], person["tags"]) == (
        ana["id"],
        "person",
        "Ana (sister)",
        ["安娜"],
    )
    assert [(e["source_id"], e["target_id"], e["relation"]) for e in graph["edges"]] == [(ana["id"], cats, "about")]
    alone = (await client.get("/v1/admin/graph", params={"people": "false"}, headers=auth())).json()
    assert {n["kind"] for n in alone["nodes"]} == {"memory"} and alone["edges"] == []

    drawn = (await client.get("/v1/admin/starmap", headers=auth())).json()
    assert drawn["content"].count('<polygon class="person"') == 1 and 'stroke-dasharray="4 3"' in drawn["content"]
    mermaid = (await client.get("/v1/admin/starmap", params={"format": "mermaid"}, headers=auth())).json()["content"]
    assert '(("person: Ana (sister)"))' in mermaid and '-.->|"about"|' in mermaid
    assert mermaid.startswith("%% companion-memory star map: 2 memories, 1 relations, 1 people")


async def test_export_and_import_carry_people_and_proposals(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ana = await register(client, "Ana", aliases=["安娜"], relation="sister", notes="Porto")
    other = await register(client, "my sister")
    await tool(client, "person_merge", {"person_id": ana["id"], "other_id": other["id"]})
    cats = await remember(client, "people.ana.cats", "安娜养了两只猫")
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert sorted(p["name"] for p in exported["people"]) == ["Ana", "my sister"]
    assert [p["kind"] for p in exported["person_proposals"]] == ["merge"]
    await runtime.db.run("DELETE FROM people")
    await runtime.db.run("DELETE FROM person_proposals")
    imported = await client.post("/api/memories/import", json=exported, headers=auth())
    assert imported.status_code == 200, imported.text
    assert (imported.json()["imported"]["people"], imported.json()["imported"]["person_proposals"]) == (2, 1)
    back = (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()
    assert (back["person"]["aliases"], back["person"]["notes"], back["memories"]) == (["安娜"], "Porto", [])
    # The links are not exported: the nightly job makes them again.
    await runtime.nightly.run("test")
    assert [m["id"] for m in (await client.get(f"/v1/people/{ana['id']}", headers=auth())).json()["memories"]] == [cats]
    assert len(await pending(client)) == 1
