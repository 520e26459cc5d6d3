"""Nightly consolidation (issue 14, part 5): near-duplicates archived into the
best-evidenced copy, rules and promises strengthened, relation edges faded, and each
action undone from the memory's history."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.nightly import consolidation
from companion_memory.nightly.consolidation import normalised_text, standing_rule
from companion_memory.runtime import Runtime
from tests.conftest import MCP_KEY, FlakyIndex, auth


async def write(client: httpx.AsyncClient, key: str, content: str, **fields: Any) -> str:
    answer = await client.post("/v1/memories", json={"fact_key": key, "content": content, **fields}, headers=auth())
    assert answer.status_code == 201, answer.text
    return str(answer.json()["memory"]["id"])


async def detail(client: httpx.AsyncClient, memory_id: str) -> dict[str, Any]:
    answer = await client.get(f"/v1/memories/{memory_id}", headers=auth())
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def event(memory: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in memory["events"] if e["event"] == name)


async def consolidate(runtime: Runtime) -> dict[str, Any]:
    report = await runtime.nightly.run(trigger="test")
    step = next(s for s in report.steps if s.name == "consolidate")
    assert step.ok, step.error
    return dict(step.result)


async def undo(client: httpx.AsyncClient, memory_id: str, event_id: int) -> httpx.Response:
    return await client.post(f"/v1/memories/{memory_id}/events/{event_id}/undo", headers=auth())


async def test_near_duplicates_are_archived_into_the_best_evidenced_copy_and_undone(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    text = "She drinks green tea every morning"
    thin = await write(client, "tea.a", text, evidence=[{"quote": "green tea again"}], source_message_ids=["m1"])
    rich = await write(
        client,
        "tea.b",
        text,
        evidence=[{"quote": "I always have green tea"}, {"quote": "green tea, every morning"}],
        source_message_ids=["m2"],
    )
    bare = await write(client, "tea.c", "she drinks green tea every morning!")
    by_hand = await write(client, "tea.d", text, authored_by="owner")
    pinned = await write(client, "tea.e", text, pinned=True)
    other_type = await write(client, "tea.f", text, type="event")
    unrelated = await write(client, "cat", "Her cat is called Mochi")

    result = await consolidate(runtime)
    assert result["duplicates_archived"] == 2 and result["duplicate_check"] == "vectors"

    kept = await detail(client, rich)
    assert kept["memory"]["status"] == "active"
    assert [e["quote"] for e in kept["memory"]["evidence"]] == [
        "I always have green tea",
        "green tea, every morning",
        "green tea again",
    ]
    assert kept["memory"]["source_message_ids"] == ["m2", "m1"]
    merged = event(kept, "consolidation_merged")
    assert sorted(a["id"] for a in merged["detail"]["archived"]) == sorted([thin, bare])
    for archived in (thin, bare):
        memory = await detail(client, archived)
        assert memory["memory"]["status"] == "archived"
        assert event(memory, "consolidation_archived")["detail"]["kept"] == rich
    for untouched in (by_hand, pinned, other_type, unrelated):
        assert (await detail(client, untouched))["memory"]["status"] == "active"
    listed = (await client.get("/v1/memories", params={"type": "note"}, headers=auth())).json()
    assert thin not in {m["id"] for m in listed["memories"]}

    archived_event = event(await detail(client, thin), "consolidation_archived")
    answer = await undo(client, thin, archived_event["id"])
    assert answer.status_code == 200, answer.text
    assert answer.json()["changed"] == [thin, rich]
    assert (await detail(client, thin))["memory"]["status"] == "active"
    kept = await detail(client, rich)
    assert [e["quote"] for e in kept["memory"]["evidence"]] == ["I always have green tea", "green tea, every morning"]
    assert kept["memory"]["source_message_ids"] == ["m2"]
    assert (await undo(client, thin, archived_event["id"])).json()["error"]["code"] == "already_undone"

    # The whole merge undone from the kept memory's history brings back the rest.
    assert (await undo(client, rich, merged["id"])).status_code == 200
    assert (await detail(client, bare))["memory"]["status"] == "active"
    # Nothing changed since the last pass, so the next night leaves the undone copies alone.
    assert (await consolidate(runtime))["duplicates_archived"] == 0


async def test_an_undo_refused_on_a_memory_written_by_hand_since_moves_nothing(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    text = "She drinks green tea every morning"
    thin = await write(client, "tea.a", text, evidence=[{"quote": "green tea again"}])
    rich = await write(client, "tea.b", text, evidence=[{"quote": "I always have green tea"}, {"quote": "every day"}])
    assert (await consolidate(runtime))["duplicates_archived"] == 1
    # The owner has since made the kept memory her own: an agent may no longer change it.
    mine = await client.patch(f"/v1/memories/{rich}", json={"authored_by": "owner"}, headers=auth())
    assert mine.status_code == 200, mine.text
    archived = event(await detail(client, thin), "consolidation_archived")
    path = f"/v1/memories/{thin}/events/{archived['id']}/undo"
    refused = await client.post(path, headers=auth(MCP_KEY))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "authored_memory"
    assert (await detail(client, thin))["memory"]["status"] == "archived"
    assert len((await detail(client, rich))["memory"]["evidence"]) == 3
    assert (await client.post(path, headers=auth())).json()["changed"] == [thin, rich]


async def test_without_the_vector_index_duplicates_are_found_by_their_text(
    client: httpx.AsyncClient, runtime: Runtime, vectors: FlakyIndex
) -> None:
    first = await write(client, "cat.a", "Her cat is called Mochi.")
    second = await write(client, "cat.b", "ＨＥＲ cat is called   mochi", evidence=[{"quote": "my cat Mochi"}])
    near = await write(client, "cat.c", "Her cat is called Mochi too")
    vectors.down = True
    result = await consolidate(runtime)
    assert result["duplicate_check"] == "text" and result["duplicates_archived"] == 1
    assert (await detail(client, first))["memory"]["status"] == "archived"
    assert (await detail(client, second))["memory"]["status"] == "active"
    assert (await detail(client, near))["memory"]["status"] == "active"


@pytest.mark.parametrize(
    ("text", "fits"),
    [
        ("以后不要叫我小名", "boundary"),
        ("不要再提起他了", "boundary"),
        ("永远不要在半夜打电话给我", "boundary"),
        ("我永远会记得你的生日", "decision"),
        ("从今以后每天都要早睡", "decision"),
        ("Never mention my ex again", "boundary"),
        ("From now on, don't call me Bobby", "boundary"),
        ("I will always check in before a trip", "decision"),
        ("From now on call me Mei", "decision"),
        ("I'll always be honest with you", "decision"),
    ],
)
def test_rules_and_promises_are_recognised_in_chinese_and_english(text: str, fits: str) -> None:
    found = standing_rule(text)
    assert found is not None and found[0] == fits


@pytest.mark.parametrize(
    "text", ["她喜欢喝绿茶", "质量保证很重要", "He always liked tea", "I never liked coffee", "Let's meet again soon"]
)
def test_ordinary_statements_are_not_rules(text: str) -> None:
    assert standing_rule(text) is None


def test_the_text_check_ignores_width_case_spacing_and_punctuation() -> None:
    assert normalised_text("Ｈer  cat, Mochi!") == normalised_text("her cat mochi")


async def test_rules_and_promises_are_strengthened_and_can_be_undone(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    rule = await write(client, "nickname", "以后不要叫我小名", importance=0.3)
    promise = await write(client, "check.in", "I will always check in before a trip", importance=0.9, type="fact")
    by_hand = await write(client, "ex", "Never mention my ex again", importance=0.2, authored_by="owner")
    assert (await consolidate(runtime))["rules_strengthened"] == 2

    strengthened = await detail(client, rule)
    assert strengthened["memory"]["type"] == "boundary" and strengthened["memory"]["importance"] == 0.8
    change = event(strengthened, "consolidation_strengthened")
    assert change["detail"]["old_importance"] == 0.3 and change["detail"]["old_type"] == "note"
    kept = (await detail(client, promise))["memory"]
    assert kept["type"] == "decision" and kept["importance"] == 0.9
    assert (await detail(client, by_hand))["memory"]["importance"] == 0.2

    assert (await undo(client, rule, change["id"])).status_code == 200
    restored = (await detail(client, rule))["memory"]
    assert restored["type"] == "note" and restored["importance"] == 0.3


async def test_relation_edges_fade_with_a_half_life_and_a_dropped_one_can_be_restored(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    runtime.settings = runtime.settings.model_copy(update={"RELATION_HALF_LIFE_DAYS": 10.0})
    source = await write(client, "trip", "Planning a trip to Kyoto")
    target = await write(client, "friend", "Aiko lives in Kyoto")
    answer = await client.post(
        f"/v1/memories/{source}/relations", json={"target_id": target, "relation": "same_thread"}, headers=auth()
    )
    assert answer.status_code == 201, answer.text

    clock.advance(days=10)
    assert (await consolidate(runtime))["edges_decayed"] == 1
    [edge] = (await detail(client, source))["relations"]
    assert edge["weight"] == pytest.approx(0.5)
    # A snapshot keeps when the weight was set, so the edge brought back is not faded twice.
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    await runtime.db.run("DELETE FROM memory_relations")
    assert (await client.post("/api/memories/import", json=exported, headers=auth())).status_code == 200
    clock.advance(days=10)
    assert (await consolidate(runtime))["edges_decayed"] == 1
    [edge] = (await detail(client, source))["relations"]
    assert edge["weight"] == pytest.approx(0.25)

    clock.advance(days=15)  # 0.25 × 0.5^1.5 ≈ 0.088, under RELATION_DROP_BELOW (0.1)
    assert (await consolidate(runtime))["edges_dropped"] == 1
    memory = await detail(client, source)
    assert memory["relations"] == []
    dropped = event(memory, "consolidation_edge_dropped")
    assert dropped["detail"]["relation"]["target_id"] == target

    assert (await undo(client, source, dropped["id"])).status_code == 200
    [restored] = (await detail(client, source))["relations"]
    assert restored["target_id"] == target and restored["weight"] == pytest.approx(0.25)


async def test_only_consolidation_events_can_be_undone(client: httpx.AsyncClient) -> None:
    memory_id = await write(client, "tea", "Likes tea")
    created = event(await detail(client, memory_id), "created")
    answer = await undo(client, memory_id, created["id"])
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "not_a_consolidation"
    assert (await undo(client, memory_id, 99_999)).status_code == 404


async def test_a_backlog_larger_than_a_night_continues_the_next_night(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(consolidation, "PER_RUN", 2)
    # Written in one moment, as an import writes them.
    rules = [await write(client, f"rule.{n}", f"Never use the word number{n} again") for n in range(5)]
    assert [(await consolidate(runtime))["rules_strengthened"] for _ in range(4)] == [2, 2, 1, 0]
    for rule in rules:
        assert (await detail(client, rule))["memory"]["type"] == "boundary"


async def test_an_edge_said_again_is_refreshed_and_fades_from_then(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    runtime.settings = runtime.settings.model_copy(update={"RELATION_HALF_LIFE_DAYS": 10.0})
    source = await write(client, "trip", "Planning a trip to Kyoto")
    target = await write(client, "friend", "Aiko lives in Kyoto")
    edge = {"target_id": target, "relation": "same_thread", "weight": 0.8}
    first = (await client.post(f"/v1/memories/{source}/relations", json=edge, headers=auth())).json()["relation"]
    clock.advance(days=30)  # 0.8 × 0.5^3 = 0.1: still kept
    again = await client.post(f"/v1/memories/{source}/relations", json=edge, headers=auth())
    assert again.status_code == 201 and again.json()["relation"]["id"] == first["id"]
    clock.advance(days=10)
    assert (await consolidate(runtime))["edges_dropped"] == 0
    [faded] = (await detail(client, source))["relations"]
    assert faded["id"] == first["id"] and faded["weight"] == pytest.approx(0.4)
