"""Contradictions: the text rules, then a contradicting write over REST and MCP on both
databases (edge, review candidate, recall of the newer only, the owner's decision), and
the dream finding one in a day's messages without a model."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.domain.contradictions import contradiction
from companion_memory.gateway.context import hit_line
from companion_memory.memory.recall.hits import Hit
from companion_memory.runtime import Runtime
from tests.conftest import MCP_KEY, FlakyIndex, auth
from tests.nightly.test_dream import say
from tests.nightly.test_dream_model import answer
from tests.upstreams import RecordingUpstream


@pytest.mark.parametrize(
    "newer, older",
    [
        ("我不喜欢咖啡", "我喜欢咖啡"),
        ("我讨厌香菜", "我很喜欢香菜"),
        ("我不能吃辣", "我能吃辣"),
        ("我不会游泳", "我会游泳"),
        ("我没有猫", "我有猫"),
        ("Doesn't like coffee", "Likes coffee"),
        ("Hates coffee", "Loves coffee"),
        ("Can't swim", "Can swim"),
        ("Is not vegetarian", "Is vegetarian"),
        ("Never drinks alcohol", "Drinks alcohol"),
        ("Moved to Berlin", "Lives in Paris"),
        ("我搬到柏林了", "我住在巴黎"),
        ("My favourite colour is green", "My favourite colour is blue"),
    ],
)
def test_these_contradict(newer: str, older: str) -> None:
    assert contradiction(newer, older)


@pytest.mark.parametrize(
    "newer, older",
    [
        ("Likes tea", "Likes coffee"),
        ("我喜欢茶", "我喜欢咖啡"),
        ("Dislikes coffee", "Likes tea"),
        ("Lives in Paris, France", "Lives in Paris"),
        ("Her sister lives in Paris", "Moved to Berlin"),
        ("Doesn't live in Paris any more", "Moved to Berlin"),
        ("我很喜欢咖啡", "我喜欢咖啡"),
    ],
)
def test_these_do_not(newer: str, older: str) -> None:
    assert contradiction(newer, older) is None


async def write(client: httpx.AsyncClient, fact_key: str, content: str) -> dict[str, Any]:
    response = await client.post("/v1/memories", json={"fact_key": fact_key, "content": content}, headers=auth())
    assert response.status_code in (200, 201), response.text
    return response.json()


async def mcp_upsert(client: httpx.AsyncClient, fact_key: str, content: str) -> dict[str, Any]:
    response = await client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "memory_upsert", "arguments": {"fact_key": fact_key, "content": content}},
        },
        headers={**auth(MCP_KEY), "MCP-Protocol-Version": "2025-11-25"},
    )
    result = response.json()["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


async def pending(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    return (await client.get("/v1/candidates", headers=auth())).json()["candidates"]


async def recall(client: httpx.AsyncClient, query: str) -> dict[str, Any]:
    response = await client.post(
        "/v1/memory/recall", json={"query": query, "min_score": 0, "include_prompt": True}, headers=auth()
    )
    assert response.status_code == 200, response.text
    return response.json()


async def status(client: httpx.AsyncClient, memory_id: str) -> str:
    return (await client.get(f"/v1/memories/{memory_id}", headers=auth())).json()["memory"]["status"]


async def test_a_contradicting_write_is_flagged_recalled_alone_and_resolved(client: httpx.AsyncClient) -> None:
    older = (await write(client, "user.coffee.like", "我喜欢咖啡"))["memory"]
    answer = await write(client, "user.drinks.coffee", "我不喜欢咖啡")
    newer = answer["memory"]
    assert any(older["id"] in note and "which one stands" in note for note in answer["notes"]), answer["notes"]

    detail = (await client.get(f"/v1/memories/{newer['id']}", headers=auth())).json()
    assert [(r["source_id"], r["target_id"]) for r in detail["relations"] if r["relation"] == "contradicts"] == [
        (newer["id"], older["id"])
    ]
    [candidate] = await pending(client)
    assert candidate["kind"] == "contradiction" and candidate["content"] == "我不喜欢咖啡"
    assert (candidate["target_memory_id"], candidate["result_memory_id"]) == (older["id"], newer["id"])
    assert "Which one stands?" in candidate["reason"] and "我喜欢咖啡" in candidate["reason"]

    found = await recall(client, "咖啡")
    assert [h["id"] for h in found["hits"]] == [newer["id"]]
    assert found["hits"][0]["contradicted_by"] == [older["id"]] and found["meta"]["contradicted"] == [older["id"]]
    assert '"我喜欢咖啡"; the user has not yet said which one stands' in found["prompt"]

    # Seen again with the same words: no second question.
    await write(client, "user.drinks.coffee", "我不喜欢咖啡")
    assert len(await pending(client)) == 1

    decided = await client.post(f"/v1/candidates/{candidate['id']}/approve", headers=auth())
    assert decided.status_code == 200, decided.text
    assert decided.json()["action"] == "superseded" and decided.json()["memory"]["id"] == newer["id"]
    assert await status(client, older["id"]) == "superseded"
    after = await recall(client, "咖啡")
    assert [h["id"] for h in after["hits"]] == [newer["id"]] and after["hits"][0]["contradicted_by"] == []
    assert "contradicts" not in after["prompt"]


async def test_discarding_keeps_the_older_and_merge_is_refused(client: httpx.AsyncClient) -> None:
    older = (await write(client, "skill.spicy", "我能吃辣"))["memory"]
    newer = (await write(client, "food.spicy", "我不能吃辣"))["memory"]
    [candidate] = await pending(client)
    path = f"/v1/candidates/{candidate['id']}"
    refused = await client.post(f"{path}/merge", json={"target_id": older["id"]}, headers=auth())
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "contradiction_decision"
    kept = (await client.post(f"{path}/discard", headers=auth())).json()
    assert kept["action"] == "archived" and kept["candidate"]["status"] == "discarded"
    assert (await status(client, newer["id"]), await status(client, older["id"])) == ("archived", "active")
    assert [h["id"] for h in (await recall(client, "吃辣"))["hits"]] == [older["id"]]


async def test_removing_the_edge_lets_both_stand(client: httpx.AsyncClient) -> None:
    older = (await write(client, "user.tea.like", "我喜欢喝茶"))["memory"]
    newer = (await write(client, "user.tea.evening", "我不喜欢喝茶"))["memory"]
    detail = (await client.get(f"/v1/memories/{newer['id']}", headers=auth())).json()
    [edge] = [r for r in detail["relations"] if r["relation"] == "contradicts"]
    removed = await client.delete(f"/v1/memories/{newer['id']}/relations/{edge['id']}", headers=auth())
    assert removed.status_code == 200, removed.text
    assert await pending(client) == []
    [closed] = (await client.get("/v1/candidates", params={"status": "discarded"}, headers=auth())).json()["candidates"]
    assert closed["reason"].startswith("both stand")
    assert {h["id"] for h in (await recall(client, "喝茶"))["hits"]} == {older["id"], newer["id"]}


async def test_over_mcp_a_move_contradicts_where_the_user_lived(client: httpx.AsyncClient, runtime: Runtime) -> None:
    older = (await mcp_upsert(client, "home", "Lives in Paris"))["memory"]
    newer = (await mcp_upsert(client, "moved", "Moved to Berlin"))["memory"]
    [candidate] = await pending(client)
    assert (candidate["target_memory_id"], candidate["result_memory_id"]) == (older["id"], newer["id"])
    # Only the older matches the words of the question: the newer answers in its place.
    found = await recall(client, "Paris")
    assert [(h["id"], h["contradicted_by"], h["via"]) for h in found["hits"]] == [
        (newer["id"], [older["id"]], older["id"])
    ]


async def test_two_preferences_are_no_contradiction(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await write(client, "drink.coffee", "Likes coffee")
    answer = await mcp_upsert(client, "drink.tea", "Likes tea")
    assert answer["notes"] == []
    assert await pending(client) == []
    assert await runtime.db.all("SELECT id FROM memory_relations WHERE relation = 'contradicts'") == []


async def test_found_from_the_words_while_the_vector_index_is_down(
    client: httpx.AsyncClient, vectors: FlakyIndex
) -> None:
    await write(client, "pet.cat", "Has a cat")
    vectors.down = True
    answer = await write(client, "pet.none", "Doesn't have a cat")
    assert answer["vector"] == "pending" and any("has/hasn't flip" in note for note in answer["notes"])
    assert len(await pending(client)) == 1
    # The other way round, and in Chinese.
    await write(client, "food.coriander", "我不吃香菜")
    assert any("negation flip" in note for note in (await write(client, "food.herbs", "我吃香菜"))["notes"])
    await write(client, "drink.wine", "Doesn't drink wine")
    assert any("negation flip" in note for note in (await write(client, "drink.red", "Drinks red wine"))["notes"])
    assert len(await pending(client)) == 3


async def test_the_dream_asks_when_a_day_contradicts_a_live_memory(client: httpx.AsyncClient, runtime: Runtime) -> None:
    older = (await write(client, "user.coffee", "我喜欢咖啡"))["memory"]
    await say(client, ("user", "请记住：我不喜欢咖啡。", "2026-11-29T02:00:00Z"))
    [report] = await runtime.dream.night()
    assert report["counts"]["contradictions"] == 1
    [candidate] = await pending(client)
    assert candidate["kind"] == "contradiction" and candidate["content"] == "我不喜欢咖啡"
    assert candidate["target_memory_id"] == older["id"] and candidate["result_memory_id"] is None
    decided = (await client.post(f"/v1/candidates/{candidate['id']}/approve", headers=auth())).json()
    assert decided["action"] == "superseded" and decided["memory"]["content"] == "我不喜欢咖啡"
    assert await status(client, older["id"]) == "superseded"


def test_the_prompt_names_the_older_claim() -> None:
    from companion_memory.domain.memory import Memory

    memory = Memory(id="n", namespace="default", type="fact", content="Moved to Berlin", created_at="", updated_at="")
    hit = Hit(memory=memory, score=1.0, raw_score=1.0, contradicted_by=["o"], contradicted_claims=["Lives in Paris"])
    assert hit_line(1, hit, "Asia/Singapore") == (
        '1. [fact, ] Moved to Berlin (this contradicts an older memory, "Lives in Paris"; '
        "the user has not yet said which one stands)"
    )


@pytest.mark.parametrize("confirmed", [True, False])
async def test_dream_model_confirms_or_dismisses_what_the_rules_suspect(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream, confirmed: bool
) -> None:
    older = (await write(client, "user.coffee", "Likes coffee"))["memory"]
    await say(client, ("user", "I don't like coffee any more.", "2026-11-29T02:00:00Z"))
    # One scripted reply serves both calls: the extraction, and the verdict on the pair.
    upstream.reply_text = answer(
        add=[{"content": "Doesn't like coffee", "evidence": ["I don't like coffee"]}], contradicts=confirmed
    )
    [report] = await dreaming.dream.night()
    assert (report["counts"]["contradictions"], report["counts"]["contradictions_dismissed"]) == (
        (1, 0) if confirmed else (0, 1)
    )
    [candidate] = await pending(client)
    assert candidate["kind"] == ("contradiction" if confirmed else "add")
    verdict_asked = upstream.requests[-1].json["messages"][1]["content"]
    assert verdict_asked == "Older: Likes coffee\nNewer: Doesn't like coffee"
    assert candidate["target_memory_id"] == (older["id"] if confirmed else None)


async def test_the_panels_content_edit_is_checked_like_any_write(client: httpx.AsyncClient) -> None:
    older = (await write(client, "user.home", "Lives in Paris"))["memory"]
    edited = (await write(client, "user.trip", "Visited Berlin"))["memory"]
    response = await client.patch(f"/v1/memories/{edited['id']}", json={"content": "Moved to Berlin"}, headers=auth())
    assert response.status_code == 200, response.text
    assert any(older["id"] in note for note in response.json()["notes"]), response.json()["notes"]
    [candidate] = await pending(client)
    assert (candidate["target_memory_id"], candidate["result_memory_id"]) == (older["id"], edited["id"])
    # Editing other fields makes no new claim: no second question.
    again = await client.patch(f"/v1/memories/{edited['id']}", json={"importance": 0.9}, headers=auth())
    assert again.status_code == 200 and again.json()["notes"] == []
    assert len(await pending(client)) == 1


async def test_two_events_both_hold_but_an_event_may_contradict_a_lasting_state(client: httpx.AsyncClient) -> None:
    async def event(fact_key: str, content: str) -> dict[str, Any]:
        body = {"fact_key": fact_key, "content": content, "type": "event"}
        response = await client.post("/v1/memories", json=body, headers=auth())
        assert response.status_code in (200, 201), response.text
        return response.json()

    # The words alone would flag them (two Sundays, though).
    assert contradiction("No hiking with Anna on Sunday", "Hiking with Anna on Sunday")
    await event("trip.1", "Hiking with Anna on Sunday")
    assert (await event("trip.2", "No hiking with Anna on Sunday"))["notes"] == []
    assert await pending(client) == []
    older = (await write(client, "user.hiking", "Likes hiking with Anna"))["memory"]
    answer = await event("trip.3", "Doesn't like hiking with Anna")
    assert any(older["id"] in note for note in answer["notes"]), answer["notes"]
    [candidate] = await pending(client)
    assert candidate["target_memory_id"] == older["id"]
