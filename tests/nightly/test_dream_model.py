"""The dream with DREAM_MODEL: a local server speaking the OpenAI format plays the model
with scripted answers (valid, invalid, rate-limited, quotes that were never said, secrets)."""

from __future__ import annotations

import json
from datetime import UTC

import httpx
import pytest

from companion_memory.memory.model_call import JobModel
from companion_memory.nightly.dream import Dream
from companion_memory.nightly.dream_model import ModelExtractor, parse
from companion_memory.nightly.extraction import read_extraction
from companion_memory.runtime import Runtime
from tests.conftest import auth
from tests.nightly.test_dream import say
from tests.upstreams import RecordingUpstream


def answer(**extraction: object) -> str:
    return (
        "```json\n"
        + json.dumps({"title": "A long day at the park", "summary": "Walked Mochi.", **extraction})
        + "\n```"
    )


def test_an_answer_is_read_with_defaults_and_tolerance() -> None:
    extraction = parse(
        answer(
            title="  Tea  ",
            add=[{"content": "Likes tea", "evidence": ["I like tea"], "importance": "0.8", "fact_key": None, "x": 1}],
            delete=[{"target_id": "m1", "evidence": ["no more tea"]}],
        )
    )
    assert extraction.title == "Tea" and extraction.summary == "Walked Mochi." and extraction.update == []
    added = extraction.add[0]
    assert (added.type, added.fact_key, added.importance, added.confidence) == ("note", None, 0.8, 0.6)
    assert extraction.delete[0].target_id == "m1" and extraction.delete[0].content is None


def test_an_answer_that_does_not_fit_names_every_problem() -> None:
    bad = answer(
        title=None,
        add=[{"content": "x", "evidence": "I like tea", "confidence": 2}, "tea"],
        update=[{"content": "Likes coffee"}],
    )
    with pytest.raises(ValueError, match="the extraction does not fit") as raised:
        parse(bad)
    assert str(raised.value).split(": ", 1)[1].split("; ") == [
        "title: expected a string, got null",
        "add.0.content: 1 characters, at least 2 expected",
        "add.0.confidence: 2.0 is not between 0 and 1",
        "add.0.evidence: expected a list, got a string",
        "add.1: expected an object, got a string",
        "update.0.target_id: missing",
        "update.0.evidence: missing",
    ]
    with pytest.raises(ValueError, match="the answer: expected an object, got a list"):
        read_extraction([{"title": "Tea"}])


async def test_model_answers_become_checked_candidates(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    old = (
        await client.post("/v1/memories", json={"fact_key": "job", "content": "Works at the bakery"}, headers=auth())
    ).json()["memory"]
    gone = (
        await client.post("/v1/memories", json={"fact_key": "car", "content": "Drives a red car"}, headers=auth())
    ).json()["memory"]
    await say(
        client,
        (
            "user",
            "I quit the bakery, I'm a nurse now! Also I sold my car. My pin is 4242 4242 4242 4242",
            "2026-11-29T02:00:00Z",
        ),
    )
    upstream.reply_text = answer(
        add=[
            {"content": "Works as a nurse", "type": "fact", "fact_key": "job.nurse", "evidence": ["I'm a nurse now"]},
            {"content": "Loves opera", "type": "preference", "evidence": ["I love opera"]},
            {"content": "Card 4242 4242 4242 4242", "evidence": ["4242 4242 4242 4242"]},
        ],
        update=[
            {"target_id": old["id"], "content": "Works as a nurse (left the bakery)", "evidence": ["I quit the bakery"]}
        ],
        delete=[
            {"target_id": gone["id"], "evidence": ["I sold my car"]},
            {"target_id": "ghost", "evidence": ["I sold my car"]},
        ],
    )
    report = (await dreaming.dream.night())[0]
    assert report["status"] == "succeeded" and report["extractor"] == "model:dreamer"
    assert report["counts"]["rejected_no_evidence"] == 1 and report["counts"]["rejected_sensitive"] == 1
    assert report["counts"]["rejected_unknown_target"] == 1
    sent = upstream.requests[-1].json
    assert sent["model"] == "dreamer" and old["id"] in sent["messages"][1]["content"]
    pending = {
        c["kind"] + ":" + c["content"]: c
        for c in (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    }
    assert set(pending) == {
        "add:Works as a nurse",
        "update:Works as a nurse (left the bakery)",
        "delete:Drives a red car",
    }
    assert pending["update:Works as a nurse (left the bakery)"]["target_memory_id"] == old["id"]
    diary = (await client.get("/v1/diary", params={"date": "2026-11-29"}, headers=auth())).json()["diary"]
    assert diary["title"] == "A long day a" and diary["summary"] == "Walked Mochi."
    approved = (
        await client.post(f"/v1/candidates/{pending['delete:Drives a red car']['id']}/approve", headers=auth())
    ).json()
    assert approved["action"] == "archived"


async def test_invalid_json_fails_the_batch_and_keeps_the_cursor(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    await say(client, ("user", "remember I like tea", "2026-11-29T02:00:00Z"))
    upstream.reply_text = '{"title": "cut off", "add": [{"content": "Likes t'
    failed = (await dreaming.dream.night())[0]
    assert failed["status"] == "failed" and "not valid JSON" in failed["error"] and len(upstream.requests) == 2
    assert (await client.get("/v1/candidates", headers=auth())).json()["count"] == 0
    upstream.reply_text = answer(add=[{"content": "Likes tea", "evidence": ["I like tea"]}])
    fixed = (await dreaming.dream.night())[0]
    assert fixed["status"] == "succeeded" and fixed["messages_read"] == 1 and fixed["candidates_created"] == 1


async def test_rate_limits_back_off_then_succeed(
    dreaming: Runtime, client: httpx.AsyncClient, upstream: RecordingUpstream
) -> None:
    await say(client, ("user", "remember I like tea", "2026-11-29T02:00:00Z"))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    chosen = dreaming.router.route("dreamer")
    dream = Dream(
        dreaming.db,
        dreaming.writer,
        dreaming.mirror,
        dreaming.clock,
        dreaming.config,
        ModelExtractor(JobModel(chosen.chat_model, chosen.model, sleep=sleep), 1000),
    )
    upstream.fail_with(429, times=2)
    upstream.reply_text = answer(add=[{"content": "Likes tea", "evidence": ["I like tea"]}])
    report = (await dream.night())[0]
    assert report["status"] == "succeeded" and waits == [2.0, 8.0] and report["candidates_created"] == 1
    upstream.fail_with(503, times=3)
    await say(client, ("user", "remember I like coffee too", "2026-11-29T03:00:00Z"))
    assert (await dream.night())[0]["status"] == "failed"


async def test_without_a_configured_model_the_requests_extractor_dreams(runtime: Runtime) -> None:
    assert runtime.dream.extractor.name == "requests"  # default DREAM_MODEL is Workers AI, with no account set


async def test_rollups_are_summarised_by_the_dream_model(dreaming: Runtime, upstream: RecordingUpstream) -> None:
    from datetime import datetime

    from tests.gateway.test_boot_diary import add_daily

    for day in ("2026-10-05", "2026-10-06", "2026-10-07"):
        await add_daily(dreaming, day, f"Day {day[-2:]}", f"walked Mochi on {day}")
    dreaming.clock._now = datetime(2026, 10, 30, 12, tzinfo=UTC)  # type: ignore[attr-defined]
    upstream.reply_text = "A calm week of long walks with Mochi. " * 20  # too long: cut to 300
    assert dreaming.rollups.summarizer.name == "model:dreamer"
    assert await dreaming.rollups.weekly() == 1
    week = await dreaming.db.first("SELECT week, summary FROM weekly_log")
    assert (
        week["week"] == "2026-W41"
        and week["summary"].startswith("A calm week of long walks")
        and len(week["summary"]) <= 300
    )
    prompt = upstream.requests[-1].json["messages"][1]["content"]
    assert "2026-10-06: Day 06 — walked Mochi on 2026-10-06" in prompt

    await add_daily(dreaming, "2026-10-12", "Rainy", "stayed in")
    dreaming.clock._now = datetime(2026, 11, 6, 12, tzinfo=UTC)  # type: ignore[attr-defined]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    assert dreaming.dream_model is not None
    dreaming.dream_model.sleep = sleep
    upstream.fail_with(500, times=3)  # the model is down: the week is still rolled, from the entries
    assert await dreaming.rollups.weekly() == 1
    fallback = await dreaming.db.first("SELECT summary FROM weekly_log WHERE week = '2026-W42'")
    assert fallback["summary"] == "2026-10-12: Rainy — stayed in" and waits == [2.0, 8.0]


async def test_a_world_fact_correction_is_applied_at_once_the_rest_waits(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    office = (
        await client.post(
            "/v1/memories",
            json={"fact_key": "world.office.address", "type": "fact", "content": "The office is on Orchard Road"},
            headers=auth(),
        )
    ).json()["memory"]
    job = (
        await client.post("/v1/memories", json={"fact_key": "job", "content": "Works at the bakery"}, headers=auth())
    ).json()["memory"]
    await say(
        client, ("user", "The office moved to Tanjong Pagar last week. I quit the bakery.", "2026-11-29T02:00:00Z")
    )
    upstream.reply_text = answer(
        update=[
            {
                "target_id": office["id"],
                "content": "The office is in Tanjong Pagar",
                "evidence": ["The office moved to Tanjong Pagar"],
            },
            {"target_id": job["id"], "content": "Left the bakery", "evidence": ["I quit the bakery"]},
        ]
    )
    dry = (await client.post("/v1/dream/run", json={"dry_run": True}, headers=auth())).json()["runs"][0]
    assert dry["counts"]["applied_world_facts"] == 0
    assert (await client.get(f"/v1/memories/{office['id']}", headers=auth())).json()["memory"]["status"] == "active"

    report = (await dreaming.dream.night())[0]
    assert report["status"] == "succeeded" and report["counts"]["applied_world_facts"] == 1
    old = (await client.get(f"/v1/memories/{office['id']}", headers=auth())).json()["memory"]
    assert old["status"] == "superseded"
    new = (await client.get(f"/v1/memories/{old['superseded_by']}", headers=auth())).json()["memory"]
    assert new["content"] == "The office is in Tanjong Pagar" and new["fact_key"] == "world.office.address"
    approved = (await client.get("/v1/candidates", params={"status": "approved"}, headers=auth())).json()["candidates"]
    assert [(c["content"], c["result_memory_id"]) for c in approved] == [("The office is in Tanjong Pagar", new["id"])]
    pending = (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    assert [c["content"] for c in pending] == ["Left the bakery"]  # about the user: waits for review
    assert (await client.get(f"/v1/memories/{job['id']}", headers=auth())).json()["memory"]["status"] == "active"
