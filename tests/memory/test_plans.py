"""Plans: a type with an end. Written with valid_to or valid_days, recalled until the end,
expired by the nightly job, marked done or abandoned over REST and MCP, found by the
dream with and without a model, listed in the boot package, carried by export/import."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.memory.plan_dates import resolve_when
from companion_memory.nightly.statements import PLAN, statements_in
from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import MCP_KEY, auth
from tests.nightly.test_dream import say
from tests.nightly.test_dream_model import answer
from tests.upstreams import RecordingUpstream

# The test clock reads 2026-11-30 12:00 UTC: Monday 20:00 in Singapore (DREAM_TIME_ZONE).
TODAY = "2026-11-30"


async def tool(client: httpx.AsyncClient, name: str, arguments: dict[str, Any], key: str = MCP_KEY) -> dict[str, Any]:
    result = (await mcp_call(client, key, name, arguments)).json()["result"]
    assert result["isError"] is False, result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


async def write_plan(client: httpx.AsyncClient, fact_key: str, content: str, **end: Any) -> dict[str, Any]:
    body = {"fact_key": fact_key, "content": content, "type": "plan", **end}
    response = await client.post("/v1/memories", json=body, headers=auth())
    assert response.status_code == 201, response.text
    memory: dict[str, Any] = response.json()["memory"]
    return memory


async def recalled(client: httpx.AsyncClient, query: str) -> list[str]:
    """What REST and MCP recall for ``query``: the same ids on both."""
    body = {"query": query, "min_score": 0}
    rest = await client.post("/v1/memory/recall", json=body, headers=auth())
    mcp = await tool(client, "memory_recall", body)
    ids = [h["id"] for h in rest.json()["hits"]]
    assert [h["id"] for h in mcp["hits"]] == ids
    return ids


async def open_plans(client: httpx.AsyncClient, status: str = "active") -> list[str]:
    rest = (await client.get("/v1/plans", params={"status": status}, headers=auth())).json()
    mcp = await tool(client, "plan_list", {"status": status})
    assert mcp == rest and rest["count"] == len(rest["plans"])
    return [p["id"] for p in rest["plans"]]


async def test_a_plan_is_recalled_until_it_ends_then_the_nightly_job_expires_it(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    plan = await write_plan(client, "plan.sea", "周末去看海 at Sentosa", valid_days=3)
    assert (plan["type"], plan["valid_to"], plan["plan_status"]) == ("plan", "2026-12-03", "active")
    mcp = await tool(
        client,
        "memory_upsert",
        {"fact_key": "plan.ski", "content": "Skiing in Niseko", "type": "plan", "valid_days": 30},
    )
    assert mcp["memory"]["valid_to"] == "2026-12-30"
    assert await recalled(client, "去看海 Sentosa") == [plan["id"]]
    assert await open_plans(client) == [plan["id"], mcp["memory"]["id"]]  # the soonest end first
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert [(p["content"], p["valid_to"]) for p in boot["plans"]] == [
        ("周末去看海 at Sentosa", "2026-12-03"),
        ("Skiing in Niseko", "2026-12-30"),
    ]
    assert "until 2026-12-03] 周末去看海" in (await tool(client, "memory_recall", {"query": "去看海"}))["prompt"]

    clock.advance(days=3)  # Thursday 2026-12-03, 20:00 in Singapore: the plan's last day
    assert await recalled(client, "去看海 Sentosa") == [plan["id"]]
    clock.advance(hours=4)  # past midnight there: over, and recall knows it before the nightly job runs
    assert await recalled(client, "去看海 Sentosa") == []
    assert await open_plans(client) == [mcp["memory"]["id"]]
    assert await open_plans(client, "expired") == [plan["id"]]

    report = await runtime.nightly.run()
    assert {s.name: s.result for s in report.steps}["plans"] == {"plans_expired": 1}
    detail = (await client.get(f"/v1/memories/{plan['id']}", headers=auth())).json()
    assert detail["memory"]["plan_status"] == "expired" and detail["memory"]["status"] == "active"
    assert detail["events"][-1]["event"] == "plan_expired" and detail["events"][-1]["actor"] == "nightly"
    assert await runtime.vectors.get([plan["id"]]) == []
    assert await recalled(client, "去看海 Sentosa") == []
    assert [p["id"] for p in (await client.get("/v1/memory_boot", headers=auth())).json()["plans"]] == [
        mcp["memory"]["id"]
    ]
    assert {s.name: s.result for s in (await runtime.nightly.run()).steps}["plans"] == {"plans_expired": 0}

    # A new end is a new commitment: the plan is open (and recalled) again.
    body = {"fact_key": "plan.sea", "content": "周末去看海 at Sentosa", "type": "plan", "valid_to": "2026-12-13"}
    again = (await client.post("/v1/memories", json=body, headers=auth())).json()["memory"]
    assert (again["id"], again["plan_status"], again["valid_to"]) == (plan["id"], "active", "2026-12-13")
    assert await recalled(client, "去看海 Sentosa") == [plan["id"]]


async def test_done_and_abandoned_over_rest_and_mcp(client: httpx.AsyncClient) -> None:
    sea = await write_plan(client, "plan.sea", "Seaside trip", valid_to="2026-12-06")
    call = await write_plan(client, "plan.call", "Call grandma", valid_to="2026-12-01T10:00:00+08:00")
    assert call["valid_to"] == "2026-12-01T02:00:00.000Z"
    open_ended = await write_plan(client, "plan.book", "Write a book")
    assert (open_ended["valid_to"], open_ended["plan_status"]) == (None, "active")

    done = await client.post(f"/v1/plans/{sea['id']}/done", headers=auth(MCP_KEY))
    assert done.status_code == 200, done.text
    assert (done.json()["action"], done.json()["memory"]["plan_status"]) == ("done", "done")
    assert done.json()["old_status"] == "active"
    again = (await client.post(f"/v1/plans/{sea['id']}/done", headers=auth())).json()
    assert again["action"] == "unchanged"
    refused = await client.post(f"/v1/plans/{sea['id']}/abandon", headers=auth())
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_active"

    abandoned = await tool(client, "plan_update", {"id": call["id"], "status": "abandoned"})
    assert abandoned["memory"]["plan_status"] == "abandoned"
    assert await open_plans(client) == [open_ended["id"]]
    assert await open_plans(client, "done") == [sea["id"]]
    assert await open_plans(client, "abandoned") == [call["id"]]
    assert await recalled(client, "Seaside trip grandma") == []
    assert (await client.get(f"/v1/memories/{sea['id']}", headers=auth())).json()["events"][-1]["event"] == "plan_done"

    # A plan written by hand is the owner's to close.
    mine = await write_plan(client, "plan.mine", "Learn the cello", valid_days=90, authored_by="me")
    agent = await client.post(f"/v1/plans/{mine['id']}/done", headers=auth(MCP_KEY))
    assert agent.status_code == 409 and agent.json()["error"]["code"] == "authored_memory"
    assert (await client.post(f"/v1/plans/{mine['id']}/done", headers=auth())).json()["action"] == "done"

    fact = (await client.post("/v1/memories", json={"fact_key": "tea", "content": "Likes tea"}, headers=auth())).json()
    not_a_plan = await client.post(f"/v1/plans/{fact['memory']['id']}/done", headers=auth())
    assert not_a_plan.status_code == 409 and not_a_plan.json()["error"]["code"] == "not_a_plan"
    assert (await client.post("/v1/plans/nope/abandon", headers=auth())).status_code == 404
    mcp_missing = (await mcp_call(client, MCP_KEY, "plan_update", {"id": "nope", "status": "done"})).json()["result"]
    assert mcp_missing["isError"] is True and mcp_missing["structuredContent"]["error"]["code"] == "not_found"
    bad_status = await client.get("/v1/plans", params={"status": "finished"}, headers=auth())
    assert bad_status.status_code == 400 and bad_status.json()["error"]["code"] == "invalid_status"


async def test_what_a_plan_end_may_be(client: httpx.AsyncClient) -> None:
    bad = await client.post(
        "/v1/memories", json={"fact_key": "p", "content": "x", "type": "plan", "valid_to": "soon"}, headers=auth()
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_time"
    assert bad.json()["error"]["message"].startswith("valid_to: 'soon' is neither a day")
    too_far = await client.post(
        "/v1/memories", json={"fact_key": "p", "content": "x", "type": "plan", "valid_days": 5000}, headers=auth()
    )
    assert too_far.status_code == 400
    naive = await write_plan(client, "plan.naive", "Dentist", valid_to="2026-12-02T09:30")  # read in Singapore
    assert naive["valid_to"] == "2026-12-02T01:30:00.000Z"

    fact = await client.post(
        "/v1/memories", json={"fact_key": "f", "content": "Likes tea", "valid_days": 3}, headers=auth()
    )
    assert fact.json()["memory"]["valid_to"] is None and fact.json()["memory"]["plan_status"] is None
    assert fact.json()["notes"] == ["valid_to and valid_days are for plans; ignored for a note"]
    # No longer a plan: the plan columns go with the type.
    edited = await client.patch(f"/v1/memories/{naive['id']}", json={"type": "event"}, headers=auth())
    assert edited.json()["memory"]["valid_to"] is None and edited.json()["memory"]["plan_status"] is None
    # A memory made a plan by an edit is an open plan.
    made = await client.patch(f"/v1/memories/{naive['id']}", json={"type": "plan", "valid_days": 1}, headers=auth())
    assert made.json()["memory"]["plan_status"] == "active" and made.json()["memory"]["valid_to"] == "2026-12-01"


async def test_export_and_import_carry_plans(client: httpx.AsyncClient, runtime: Runtime) -> None:
    plan = await write_plan(client, "plan.sea", "Seaside trip", valid_to="2026-12-06")
    await client.post(f"/v1/plans/{plan['id']}/done", headers=auth())
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    row = exported["memories"][0]
    assert (row["valid_to"], row["plan_status"]) == ("2026-12-06", "done")
    await runtime.db.run("DELETE FROM memories")
    imported = await client.post("/api/memories/import", json=exported, headers=auth())
    assert imported.status_code == 200, imported.text
    assert await open_plans(client, "done") == [plan["id"]]
    exported["memories"][0]["plan_status"] = "finished"
    refused = await client.post("/api/memories/import", json=exported, headers=auth())
    assert refused.status_code == 400 and "plan_status" in refused.json()["error"]["message"]


async def test_the_dream_without_a_model_finds_plans_with_their_days(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    await say(
        client,
        ("user", "周末去看海", "2026-11-30T02:00:00Z"),
        ("user", "I'm visiting my sister next week. What should I bring her?", "2026-11-30T03:00:00Z"),
        ("user", "明天去哪儿吃饭？", "2026-11-30T04:00:00Z"),  # a question, not a plan
        ("user", "I went to the beach last weekend", "2026-11-30T05:00:00Z"),  # past
        ("assistant", "I will remind you tomorrow.", "2026-11-30T06:00:00Z"),  # not the user's
    )
    clock.advance(days=1)
    report = (await runtime.dream.night())[0]
    assert report["status"] == "succeeded" and report["extractor"] == "requests"
    pending = (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    plans = sorted((c["content"], c["type"], c["valid_to"], c["evidence"][0]["quote"]) for c in pending)
    assert plans == [
        ("I'm visiting my sister next week", "plan", "2026-12-13", "I'm visiting my sister next week"),
        ("周末去看海", "plan", "2026-12-06", "周末去看海"),
    ]
    sea = next(c for c in pending if c["content"] == "周末去看海")
    approved = (await client.post(f"/v1/candidates/{sea['id']}/approve", headers=auth())).json()
    assert (approved["memory"]["type"], approved["memory"]["valid_to"]) == ("plan", "2026-12-06")
    assert approved["memory"]["plan_status"] == "active"
    assert await open_plans(client) == [approved["memory"]["id"]]


async def test_the_dream_with_a_model_gets_plan_days_from_it_or_from_the_words(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    await say(
        client,
        ("user", "下周五和小林吃饭，周末去看海", "2026-11-29T02:00:00Z"),
        ("user", "Tomorrow I'm seeing the dentist", "2026-11-29T03:00:00Z"),
        ("user", "I'll repaint the fence today", "2026-11-29T04:00:00Z"),
    )
    upstream.reply_text = answer(
        add=[
            {"content": "和小林吃饭", "type": "plan", "valid_to": "2026-12-04", "evidence": ["下周五和小林吃饭"]},
            {"content": "去看海", "type": "plan", "valid_to": "this weekend", "evidence": ["周末去看海"]},
            {"content": "看海", "type": "plan", "valid_to": "0005-12-06", "evidence": ["周末去看海"]},
            {"content": "Dentist appointment", "type": "plan", "evidence": ["Tomorrow I'm seeing the dentist"]},
            {"content": "Repaint the fence", "type": "plan", "evidence": ["I'll repaint the fence today"]},
        ]
    )
    report = (await dreaming.dream.night())[0]
    assert report["status"] == "succeeded" and report["counts"]["past_plans"] == 1
    sent = upstream.requests[-1].json
    assert "Day: 2026-11-29 (Sunday)" in sent["messages"][1]["content"]
    assert '"valid_to"' in sent["messages"][0]["content"]
    pending = (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    assert sorted((c["content"], c["valid_to"]) for c in pending) == [
        ("Dentist appointment", "2026-11-30"),  # the day after it was said
        ("去看海", "2026-12-06"),  # the model's "this weekend" is no date: the words say which
        ("和小林吃饭", "2026-12-04"),
        ("看海", "2026-12-06"),  # nor is a year outside the range kept (it was a plan long over)
    ]


@pytest.mark.parametrize(
    "words, said_on, day",
    [
        ("周末去看海", "2026-11-30", "2026-12-06"),
        ("这周末去看海", "2026-12-05", "2026-12-06"),
        ("周末去看海", "2026-12-06", "2026-12-13"),  # said on a Sunday: the coming weekend
        ("下周末搬家", "2026-11-30", "2026-12-13"),
        ("明天开会", "2026-11-30", "2026-12-01"),
        ("后天回来", "2026-11-30", "2026-12-02"),
        ("大后天出差", "2026-11-30", "2026-12-03"),
        ("下周去北京", "2026-11-30", "2026-12-13"),
        ("下星期三面试", "2026-11-30", "2026-12-09"),
        ("周五见", "2026-11-30", "2026-12-04"),
        ("星期天回家", "2026-11-30", "2026-12-06"),
        ("下个月考试", "2026-11-30", "2026-12-31"),
        ("下个月考试", "2026-12-15", "2027-01-31"),
        ("三天后回来", "2026-11-30", "2026-12-03"),
        ("I'm visiting my sister next week", "2026-11-30", "2026-12-13"),
        ("tomorrow I fly out", "2026-11-30", "2026-12-01"),
        ("the day after tomorrow", "2026-11-30", "2026-12-02"),
        ("we go camping this weekend", "2026-11-30", "2026-12-06"),
        ("on Friday I have a date", "2026-11-30", "2026-12-04"),
        ("next Friday", "2026-11-30", "2026-12-11"),
        ("next month", "2026-01-31", "2026-02-28"),
        ("in two weeks", "2026-11-30", "2026-12-14"),
    ],
)
def test_the_day_words_name(words: str, said_on: str, day: str) -> None:
    found = resolve_when(words, date.fromisoformat(said_on))
    assert found is not None and found[0].isoformat() == day


def test_words_without_a_day_ahead_name_none() -> None:
    for words in (
        "I like the sea",
        "我喜欢看海",
        "I went there last weekend",
        "上周末去了海边",
        "上周五",
        "last Friday",
    ):
        assert resolve_when(words, date(2026, 11, 30)) is None, words


@pytest.mark.parametrize(
    "said, plans",
    [
        ("明天回老家。后天去上海！", [("明天回老家", "2026-12-01"), ("后天去上海", "2026-12-02")]),
        ("下周三要面试", [("下周三要面试", "2026-12-09")]),
        ("I'll call mom on Friday", [("I'll call mom on Friday", "2026-12-04")]),
        (
            "My sister and I are going to Paris next month.",
            [("My sister and I are going to Paris next month", "2026-12-31")],
        ),
        ("I have a dentist appointment tomorrow", [("I have a dentist appointment tomorrow", "2026-12-01")]),
        ("明天会下雨", []),  # weather, not a plan
        ("I think it will rain tomorrow", []),
        ("Tomorrow is Monday", []),
        ("明天你有空吗", []),  # a question
        ("我上周末去了海边", []),  # the past
        ("我今天去爬山了", []),  # said today, and done
        ("I'm not going to the party next week", []),
        ("我明天不去上班了", []),
    ],
)
def test_what_the_rules_take_for_a_plan(said: str, plans: list[tuple[str, str]]) -> None:
    found = statements_in(said, date(2026, 11, 30))
    assert [(p.content, p.valid_to) for p in found] == plans
    assert all(p.kind == PLAN and p.quote in said for p in found)
