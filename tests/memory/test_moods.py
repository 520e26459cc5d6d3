"""The mood timeline: logged over REST and MCP, read by days and whose with its
distribution, shown in the boot package, found by the dream with and without a model,
never recalled, pruned by retention."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.domain.mood import MOOD_LABELS
from companion_memory.memory.moods import emotion_tags, moods_in, normalise_mood
from companion_memory.nightly.extraction import read_extraction
from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import MCP_KEY, auth
from tests.memory.test_plans import tool
from tests.nightly.test_dream import DAY, say
from tests.nightly.test_dream_model import answer
from tests.upstreams import RecordingUpstream

# The test clock reads 2026-11-30 12:00 UTC: Monday 20:00 in Singapore (DREAM_TIME_ZONE).


async def log(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/v1/moods", json=body, headers=auth(MCP_KEY))
    assert response.status_code == 201, response.text
    mood: dict[str, Any] = response.json()["mood"]
    return mood


async def timeline(client: httpx.AsyncClient, **query: Any) -> dict[str, Any]:
    rest: dict[str, Any] = (await client.get("/v1/moods", params=query, headers=auth())).json()
    assert await tool(client, "mood_recent", query) == rest
    return rest


async def test_log_and_read_the_timeline_over_rest_and_mcp(client: httpx.AsyncClient, clock: FixedClock) -> None:
    old = await log(client, label="sad", reason="rain all week", felt_at="2026-11-22T10:00:00Z")
    mine = await log(client, label="开心", reason="被夸了一句", intensity=0.8)
    assert (mine["label"], mine["whose"], mine["source"], mine["felt_at"]) == (
        "happy",
        "companion",
        "api",
        "2026-11-30T12:00:00.000Z",
    )
    clock.advance(minutes=5)
    theirs = await tool(client, "mood_log", {"label": "Worn out", "whose": "owner", "reason": "加班", "intensity": 0.9})
    assert (theirs["mood"]["label"], theirs["mood"]["source"]) == ("tired", "mcp")
    earlier = await log(client, label="happy", intensity=0.4, felt_at="2026-11-28T09:30")  # read in Singapore
    assert earlier["felt_at"] == "2026-11-28T01:30:00.000Z"

    week = await timeline(client)
    assert [m["label"] for m in week["moods"]] == ["tired", "happy", "happy"]  # the newest first; not the 22nd
    assert week["distribution"] == [
        {"label": "happy", "count": 2, "average_intensity": 0.6},
        {"label": "tired", "count": 1, "average_intensity": 0.9},
    ]
    assert [m["whose"] for m in (await timeline(client, whose="owner"))["moods"]] == ["owner"]
    assert [m["id"] for m in (await timeline(client, days=30))["moods"]][-1] == old["id"]
    assert (await timeline(client, days=1))["count"] == 2

    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["moods"]["today"]["companion"]["id"] == mine["id"]
    assert boot["moods"]["today"]["owner"]["label"] == "tired"
    assert boot["moods"]["week"]["companion"] == [{"label": "happy", "count": 2, "average_intensity": 0.6}]
    assert (await tool(client, "memory_boot", {}))["moods"] == boot["moods"]

    clock.advance(hours=4)  # past midnight in Singapore: nothing logged today yet
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["moods"]["today"] == {"owner": None, "companion": None}
    assert boot["moods"]["week"]["owner"] == [{"label": "tired", "count": 1, "average_intensity": 0.9}]


async def test_moods_are_not_memories(client: httpx.AsyncClient) -> None:
    await log(client, label="lonely", reason="she went travelling without me")
    recall = (
        await client.post("/v1/memory/recall", json={"query": "travelling lonely", "min_score": 0}, headers=auth())
    ).json()
    assert recall["hits"] == []
    assert (await client.get("/v1/memories", headers=auth())).json()["memories"] == []


async def test_bad_input_is_a_4xx_with_a_message(client: httpx.AsyncClient) -> None:
    unknown = await client.post("/v1/moods", json={"label": "hungry"}, headers=auth())
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "invalid_mood"
    assert "happy" in unknown.json()["error"]["message"]
    for body in (
        {},
        {"label": "happy", "intensity": 1.5},
        {"label": "happy", "whose": "cat"},
        {"label": "happy", "felt_at": "yesterday"},
        {"label": "happy", "felt_at": "9999-12-31T23:59:59-14:00"},
        {"label": "happy", "reason": "x" * 501},
    ):
        response = await client.post("/v1/moods", json=body, headers=auth())
        assert 400 <= response.status_code < 500, (body, response.status_code)
        assert response.json()["error"]["message"]
    for query in ({"days": 0}, {"days": 91}, {"whose": "cat"}):
        response = await client.get("/v1/moods", params=query, headers=auth())
        assert 400 <= response.status_code < 500 and response.json()["error"]["message"]
    refused = (await mcp_call(client, MCP_KEY, "mood_log", {"label": "hungry"})).json()["result"]
    assert refused["isError"] is True and refused["structuredContent"]["error"]["code"] == "invalid_mood"


@pytest.mark.parametrize(
    "loose, label",
    [
        ("Happy", "happy"),
        ("开心", "happy"),
        ("好累", "tired"),
        ("开心死了", "happy"),
        ("worn  out", "tired"),
        ("暖", "warm"),
        ("不开心", "sad"),
        ("焦虑", "anxious"),
        ("hungry", None),
        ("", None),
    ],
)
def test_loose_labels_are_read_into_the_vocabulary(loose: str, label: str | None) -> None:
    assert normalise_mood(loose) == label
    assert label is None or label in MOOD_LABELS


@pytest.mark.parametrize(
    "said, found",
    [
        ("我今天好累", [("tired", 0.75)]),
        ("好开心！", [("happy", 0.75)]),
        ("有点难过，因为考砸了", [("sad", 0.4)]),
        ("我累了", [("tired", 0.6)]),
        ("今天太累了，但是很开心", [("tired", 0.9), ("happy", 0.75)]),
        ("I'm so happy", [("happy", 0.75)]),
        ("I feel anxious about tomorrow", [("anxious", 0.6)]),
        ("I've been feeling a bit lonely", [("lonely", 0.4)]),
        ("I am so so tired", [("tired", 0.8)]),
        ("你好累吧？", []),  # a question
        ("你今天好累", []),  # someone else's
        ("我不是很开心", []),  # a negation says nothing sure
        ("I'm not happy", []),
        ("这道题好困难", []),
        ("麻烦你了", []),
        ("The exam was hard", []),
        ("I'm good at chess", []),
        ("I'm alone at home tonight", []),
    ],
)
def test_explicit_statements_of_a_mood(said: str, found: list[tuple[str, float]]) -> None:
    assert [(m.label, m.intensity) for m in moods_in(said)] == found
    assert all(m.quote in said for m in moods_in(said))


def test_a_reason_is_the_words_after_because() -> None:
    assert [m.reason for m in moods_in("有点难过，因为考砸了")] == ["考砸了"]
    assert [m.reason for m in moods_in("I'm so tired because of the night shift.")] == ["the night shift"]


def test_emotion_tags_use_the_vocabulary() -> None:
    assert emotion_tags(["trip", "emotion:开心", "Emotion:Happy", "emotion:hungry"]) == (
        ["trip", "emotion:happy"],
        ["emotion:hungry"],
    )


async def dream_moods(client: httpx.AsyncClient) -> list[tuple[str, str, float, str]]:
    moods = (await timeline(client, days=7))["moods"]
    return sorted((m["whose"], m["label"], m["intensity"], m["source"]) for m in moods)


async def test_the_dream_without_a_model_logs_stated_moods(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    await say(
        client,
        ("user", "我今天好累，加班到十点", "2026-11-29T02:00:00Z"),
        ("assistant", "辛苦啦。你回来我好开心！", "2026-11-29T02:00:05Z"),
        ("user", "I feel anxious about the exam because I didn't study", "2026-11-29T03:00:00Z"),
        ("user", "你开心吗？", "2026-11-29T04:00:00Z"),  # a question: no mood
        ("user", "I'm so tired, my number is 13812345678", "2026-11-29T05:00:00Z"),  # a secret: not kept
    )
    report = (await runtime.dream.night())[0]
    assert report["status"] == "succeeded" and report["counts"]["moods_logged"] == 3
    assert report["candidates_created"] == 0 and report["counts"]["rejected_sensitive"] == 1
    assert await dream_moods(client) == [
        ("companion", "happy", 0.75, "dream"),
        ("owner", "anxious", 0.6, "dream"),
        ("owner", "tired", 0.75, "dream"),
    ]
    moods = (await timeline(client))["moods"]
    tired = next(m for m in moods if m["label"] == "tired")
    said = await runtime.db.first("SELECT id, created_at FROM messages WHERE content LIKE '我今天好累%'")
    assert said is not None
    assert (tired["source_message_id"], tired["felt_at"]) == (said["id"], said["created_at"])
    assert next(m for m in moods if m["label"] == "anxious")["reason"] == "I didn't study"
    assert (await client.get("/v1/candidates", headers=auth())).json()["count"] == 0
    assert (await client.get("/v1/memories", headers=auth())).json()["memories"] == []

    # Read again (the cursor reset by hand): the same messages log nothing twice.
    await runtime.db.run("DELETE FROM processing_cursors")
    again = (await runtime.dream.night(DAY))[0]
    assert again["counts"]["moods_logged"] == 3 and (await timeline(client))["count"] == 3


async def test_the_dream_with_a_model_logs_its_moods_after_checking_them(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    await say(
        client,
        ("user", "今天被老板骂了，好委屈", "2026-11-29T02:00:00Z"),
        ("assistant", "抱抱你。我也有点难过。", "2026-11-29T02:00:05Z"),
    )
    upstream.reply_text = answer(
        moods=[
            {"whose": "owner", "label": "委屈", "intensity": 0.8, "reason": "被老板骂了", "evidence": ["好委屈"]},
            {"whose": "assistant", "label": "sad", "intensity": "0.4", "evidence": ["我也有点难过"]},
            {"whose": "owner", "label": "hungry", "evidence": ["好委屈"]},  # not in the vocabulary
            {"whose": "the cat", "label": "happy", "evidence": ["好委屈"]},  # nobody we know
            {"whose": "owner", "label": "angry", "evidence": ["老板真讨厌"]},  # never said
        ]
    )
    report = (await dreaming.dream.night())[0]
    assert report["status"] == "succeeded", report["error"]
    assert (report["counts"]["moods_logged"], report["counts"]["rejected_moods"]) == (2, 2)
    assert report["counts"]["rejected_no_evidence"] == 1
    sent = upstream.requests[-1].json["messages"][0]["content"]
    assert '"moods"' in sent and "happy|excited|warm|calm|tired|sad|lonely|anxious|angry" in sent
    moods = (await timeline(client))["moods"]
    assert sorted((m["whose"], m["label"], m["intensity"], m["reason"]) for m in moods) == [
        ("companion", "sad", 0.4, "我也有点难过"),
        ("owner", "sad", 0.8, "被老板骂了"),
    ]


def test_a_model_answer_with_moods_is_read_and_checked() -> None:
    extraction = read_extraction(
        {"moods": [{"label": "happy", "evidence": ["so happy"], "intensity": 0.9, "x": 1}], "title": "t"}
    )
    assert [(m.whose, m.label, m.intensity, m.reason) for m in extraction.moods] == [("owner", "happy", 0.9, "")]
    with pytest.raises(ValueError) as problem:
        read_extraction({"moods": [{"label": "", "intensity": 3}, "sad"]})
    assert str(problem.value) == (
        "the extraction does not fit: moods.0.label: 0 characters, at least 1 expected; "
        "moods.0.intensity: 3.0 is not between 0 and 1; moods.0.evidence: missing; "
        "moods.1: expected an object, got a string"
    )


async def test_retention_prunes_old_moods(client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock) -> None:
    await log(client, label="calm", felt_at="2026-08-01T00:00:00Z")
    recent = await log(client, label="warm")
    report = await runtime.retention.run(force=True)
    assert report["moods"] == 1
    assert [m["id"] for m in (await timeline(client, days=90))["moods"]] == [recent["id"]]


async def test_a_memory_carries_an_emotion_as_a_tag_in_the_vocabulary(client: httpx.AsyncClient) -> None:
    body = {"fact_key": "trip.sea", "content": "The day at the sea", "tags": ["trip", "emotion:开心", "emotion:happy"]}
    written = await client.post("/v1/memories", json=body, headers=auth())
    assert written.status_code == 201 and written.json()["memory"]["tags"] == ["trip", "emotion:happy"]
    memory_id = written.json()["memory"]["id"]
    edited = await client.patch(f"/v1/memories/{memory_id}", json={"tags": ["Emotion:Worn out"]}, headers=auth())
    assert edited.json()["memory"]["tags"] == ["emotion:tired"]
    refused = await client.patch(f"/v1/memories/{memory_id}", json={"tags": ["emotion:hungry"]}, headers=auth())
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_emotion"
    assert "emotion:<happy|" in refused.json()["error"]["message"]
    mcp = (await mcp_call(client, MCP_KEY, "memory_upsert", {**body, "tags": ["emotion:meh"]})).json()["result"]
    assert mcp["isError"] is True and mcp["structuredContent"]["error"]["code"] == "invalid_emotion"
