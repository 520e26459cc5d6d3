"""The mood timeline: logged over REST and MCP, read by days and whose with its
distribution, shown in the boot package, found by the dream with and without a model,
never recalled, pruned by retention."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.memory.moods import MOOD_LABELS, emotion_tags, moods_in, normalise_mood
from tests.conftest import MCP_KEY, auth
from tests.test_mcp_scopes import mcp_call
from tests.test_plans import tool

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
    await log(client, label="happy", intensity=0.4, felt_at="2026-11-28T09:30:00+08:00")

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
    ],
)
def test_explicit_statements_of_a_mood(said: str, found: list[tuple[str, float]]) -> None:
    assert [(m.label, m.intensity) for m in moods_in(said)] == found
    assert all(m.quote in said for m in moods_in(said))


def test_a_reason_is_the_words_after_because() -> None:
    assert [m.reason for m in moods_in("有点难过，因为考砸了")] == ["考砸了"]
    assert [m.reason for m in moods_in("I'm so tired because of the night shift.")] == ["of the night shift"]


def test_emotion_tags_use_the_vocabulary() -> None:
    assert emotion_tags(["trip", "emotion:开心", "Emotion:Happy", "emotion:hungry"]) == (
        ["trip", "emotion:happy"],
        ["emotion:hungry"],
    )
