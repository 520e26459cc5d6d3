"""Week blocks: a hit from an older week brings that week's diary summary into the turn's
<memories> block (REST with include_prompt, MCP, the chat gateway), once per week, at most
RECALL_WEEK_LINES weeks, never the newest week (the ladder shows it), and the summaries
themselves are never recalled."""

from __future__ import annotations

from typing import Any

import httpx

from companion_memory.clock import FixedClock
from companion_memory.gateway.weeks import WeekBlocks
from companion_memory.ports import Database
from companion_memory.runtime import Runtime
from tests.conftest import auth, outbound
from tests.memory.test_plans import tool

# The test clock reads 2026-11-30 12:00 UTC (a Monday, 20:00 in Singapore): the newest
# rolled-up week is 2026-W47.
WEEKS = {
    "2026-W47": ("2026-11-16", "2026-11-22", "Exams, then a quiet weekend"),
    "2026-W40": ("2026-09-28", "2026-10-04", "Moved into the harbour flat; boxes everywhere, Ana helped carry them"),
    "2026-W35": ("2026-08-24", "2026-08-30", "A week by the sea with Ana; zeppelin museum on the last day"),
    "2026-W30": ("2026-07-20", "2026-07-26", "Heat wave; slept on the balcony"),
}


async def add_weeks(db: Database, namespace: str = "default") -> None:
    for week, (start, end, summary) in WEEKS.items():
        await db.run(
            "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'x', 'x')",
            (f"{namespace}-{week}", namespace, week, start, end, f"Week {week}", summary),
        )


async def test_older_weeks_come_once_each_in_the_order_of_their_best_hit(db: Database) -> None:
    await add_weeks(db)
    days = [(1, "2026-10-01"), (2, "2026-11-20"), (3, "2026-10-02"), (4, "2026-08-25"), (5, "2026-07-21")]
    assert await WeekBlocks(db, 2).for_hits("default", days) == [
        "Week 2026-W40 (the week of 1, 3): Moved into the harbour flat; boxes everywhere, Ana helped carry them",
        "Week 2026-W35 (the week of 4): A week by the sea with Ana; zeppelin museum on the last day",
    ]
    # The newest week is the ladder's, whatever is recalled from it; a week without an entry
    # (this one, not rolled up yet) brings nothing.
    assert await WeekBlocks(db, 2).for_hits("default", [(1, "2026-11-18"), (2, "2026-11-29")]) == []
    assert await WeekBlocks(db, 0).for_hits("default", days) == []  # RECALL_WEEK_LINES=0: off
    assert await WeekBlocks(db, 5).for_hits("other", days) == []  # another namespace's diary is not hers
    longest = await WeekBlocks(db, 10).for_hits("default", days)
    assert len(longest) == 3 and longest[2].startswith("Week 2026-W30 (the week of 5): Heat wave")


async def test_a_long_week_summary_is_cut_like_a_ladder_entry(db: Database) -> None:
    await db.run(
        "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, updated_at) "
        "VALUES ('w1', 'default', '2026-W40', '2026-09-28', '2026-10-04', 'Week 2026-W40', ?, 'x', 'x'), "
        "('w2', 'default', '2026-W47', '2026-11-16', '2026-11-22', 'Week 2026-W47', 'newest', 'x', 'x')",
        ("搬家。\n箱子到处都是。" * 60,),
    )
    [line] = await WeekBlocks(db, 2).for_hits("default", [(1, "2026-10-01")])
    text = line.split(": ", 1)[1]
    assert len(text) == 100 and text.endswith("…") and "\n" not in text


async def said(client: httpx.AsyncClient, at: str, content: str) -> None:
    body = {"messages": [{"role": "user", "content": content, "created_at": at}]}
    assert (await client.post("/v1/ingest/messages", json=body, headers=auth())).status_code == 200


async def test_recall_brings_the_week_of_an_older_hit_on_rest_and_mcp(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await add_weeks(runtime.db)
    await said(client, "2026-10-01T03:00:00Z", "The harbour flat finally has curtains, the boxes are gone")
    await said(client, "2026-11-18T03:00:00Z", "The harbour ferry was late again this morning")
    # A memory last written in W35 (the clock moved back for the write, then forward again).
    assert isinstance(runtime.clock, FixedClock)
    runtime.clock.advance(days=-97)
    memory = {"fact_key": "user.trip", "content": "Swam at the harbour beach every morning", "type": "event"}
    assert (await client.post("/v1/memories", json=memory, headers=auth())).status_code == 201
    runtime.clock.advance(days=97)
    await runtime.mirror.drain(limit=100)

    ask = {"query": "harbour", "min_score": 0, "k": 5}
    for answer in (
        (await client.post("/v1/memory/recall", json={**ask, "include_prompt": True}, headers=auth())).json(),
        await tool(client, "memory_recall", ask),
    ):
        prompt = answer["prompt"]
        impressions = prompt.split("Impressions:\n")[1]
        assert impressions.startswith("Week 2026-W47: Week 2026-W47 — Exams")  # the ladder's week first
        numbers = {hit["content"][:16]: n for n, hit in enumerate(answer["hits"], start=1)}
        flat, swam = numbers["The harbour flat"], numbers["Swam at the harb"]
        assert f"Week 2026-W40 (the week of {flat}): Moved into the harbour flat" in impressions
        assert f"Week 2026-W35 (the week of {swam}): A week by the sea with Ana" in impressions
        assert prompt.count("2026-W47") == 2 and "Heat wave" not in prompt  # the newest once; no hit from W30
        assert answer["meta"]["context"]["impressions"]["kept"] == 3
        # What is recalled are memories and episodes: never a week's summary.
        assert all("Ana" not in hit["content"] for hit in answer["hits"])


async def test_a_weeks_summary_is_never_recalled_itself(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await add_weeks(runtime.db)
    answer = (
        await client.post(
            "/v1/memory/recall", json={"query": "zeppelin museum", "include_prompt": True}, headers=auth()
        )
    ).json()
    assert answer["hits"] == [] and "zeppelin" not in (answer["prompt"] or "")
    searched = (await client.post("/v1/memory/search", json={"query": "zeppelin museum"}, headers=auth())).json()
    assert searched["hits"] == []


async def test_the_chat_turn_carries_the_week_after_its_cached_prefix(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await add_weeks(runtime.db)
    await said(client, "2026-10-01T03:00:00Z", "The harbour flat finally has curtains, the boxes are gone")
    await runtime.mirror.drain(limit=100)
    runtime.settings = runtime.settings.model_copy(
        update={"CHAT_BASE_URL": "http://127.0.0.1:9/v1", "CHAT_MODEL": "local-model"}
    )
    runtime.router, runtime.http = outbound(runtime.settings)
    runtime.__dict__.pop("gateway", None)
    system = {"role": "system", "content": "You are Mei's companion."}
    bodies: list[dict[str, Any]] = [
        {"model": "companion", "messages": [system, {"role": "user", "content": "curtains in the harbour flat?"}]},
        {"model": "companion", "messages": [system, {"role": "user", "content": "what is for dinner"}]},
    ]
    turns = [await runtime.gateway.start(body) for body in bodies]
    assert "Week 2026-W40 (the week of 1): Moved into the harbour flat" in turns[0].call.memory_patch
    assert "Week 2026-W40" not in turns[1].call.memory_patch
    # The patch rides on the user turn; what comes before it is the client's, as sent.
    assert [t.call.body["messages"][0] for t in turns] == [system, system]
