"""The dream over imported history (``dream --backfill``): days years back, which the
nightly run does not reach, estimated first, dreamt oldest first within a token budget,
continued by a second run, then rolled into weeks and months."""

from __future__ import annotations

from datetime import date

from companion_memory.domain.tokens import text_tokens
from companion_memory.memory.ingest import IncomingMessage
from companion_memory.nightly.backfill import DayEstimate, within_budget
from companion_memory.runtime import Runtime
from tests.nightly.test_dream_model import answer
from tests.upstreams import RecordingUpstream

# Said in 2023, in Singapore (DREAM_TIME_ZONE, UTC+8): four local days in ISO weeks 14
# and 15 of April, and one in week 20 of May. The test clock reads 2026-11-30.
HISTORY = [
    ("user", "Please remember that my cat is called Mochi.", "2023-04-03T02:00:00Z"),
    ("assistant", "Mochi is a lovely name.", "2023-04-03T02:00:05Z"),
    ("user", "I'm visiting my sister next week", "2023-04-05T03:00:00Z"),
    # 04:00 on the 6th in Singapore: the 6th's message, though UTC still says the 5th.
    ("user", "Never call me Meiling, just Mei.", "2023-04-05T20:00:00Z"),
    ("user", "请记住：我对花生过敏。", "2023-04-12T09:00:00Z"),
    ("assistant", "好的，我记住了。", "2023-04-12T09:00:09Z"),
    ("user", "remember that I started learning the cello", "2023-05-17T01:00:00Z"),
]
OLD_DAYS = [date(2023, 4, 3), date(2023, 4, 5), date(2023, 4, 6), date(2023, 4, 12), date(2023, 5, 17)]


async def imported(runtime: Runtime, said: list[tuple[str, str, str]] = HISTORY, namespace: str = "default") -> None:
    messages = [IncomingMessage(role=role, content=content, created_at=at) for role, content, at in said]
    await runtime.ingestor.ingest(namespace, messages, conversation_id="chatgpt-1", source="import")


async def test_the_estimate_counts_every_old_day_not_dreamt_yet(runtime: Runtime) -> None:
    await imported(runtime)
    assert await runtime.dream.night() == []  # the nightly run looks at recent days only
    estimate = await runtime.backfill.estimate()
    assert [(d.namespace, d.day, d.messages, d.batches) for d in estimate.days] == [
        ("default", OLD_DAYS[0], 2, 1),
        ("default", OLD_DAYS[1], 1, 1),
        ("default", OLD_DAYS[2], 1, 1),
        ("default", OLD_DAYS[3], 2, 1),
        ("default", OLD_DAYS[4], 1, 1),
    ]
    # Each batch reads the instructions and the memories shown besides its messages.
    said = text_tokens("Please remember that my cat is called Mochi.") + text_tokens("Mochi is a lovely name.")
    assert estimate.days[0].tokens > said + 500
    assert estimate.planned == 5 and estimate.left_days == ()

    window = await runtime.backfill.estimate(since=date(2023, 4, 5), until=date(2023, 4, 30))
    assert [d.day for d in window.days] == OLD_DAYS[1:4]
    await imported(runtime, [("user", "remember I like tea", "2023-04-05T04:00:00Z")], namespace="work")
    one = await runtime.backfill.estimate(namespace="work")
    assert [(d.namespace, d.day) for d in one.days] == [("work", OLD_DAYS[1])]


def test_the_budget_stops_before_the_day_that_would_pass_it() -> None:
    days = [DayEstimate("default", date(2023, 4, n), 1, 1, tokens) for n, tokens in ((1, 100), (2, 300), (3, 50))]
    assert within_budget(days, None) == 3
    assert within_budget(days, 399) == 1  # not the third either, though it would fit: days go in order
    assert within_budget(days, 400) == 2
    assert within_budget(days, 99) == 0


async def test_a_budget_stops_after_some_days_and_a_second_run_continues(runtime: Runtime) -> None:
    await imported(runtime)
    first = await runtime.backfill.estimate()
    budget = first.days[0].tokens + first.days[1].tokens
    planned = await runtime.backfill.estimate(budget_tokens=budget)
    assert planned.planned == 2 and [d.day for d in planned.left_days] == OLD_DAYS[2:]
    reports = [await runtime.backfill.dream_day(d.namespace, d.day) for d in planned.planned_days]
    assert [(r["date"], r["status"], r["messages_read"]) for r in reports] == [
        ("2023-04-03", "succeeded", 2),
        ("2023-04-05", "succeeded", 1),
    ]
    # The plan of 2023-04-05 was over long ago: nothing for review; Mochi is.
    assert reports[0]["candidates_created"] == 1 and reports[1]["counts"]["past_plans"] == 1

    again = await runtime.backfill.estimate(budget_tokens=budget)
    assert [d.day for d in again.days] == OLD_DAYS[2:]  # the days dreamt are not read again
    for day in again.days:
        assert (await runtime.backfill.dream_day(day.namespace, day.day))["status"] == "succeeded"
    assert (await runtime.backfill.estimate()).days == ()
    pending = await runtime.db.all("SELECT content FROM memory_candidates WHERE status = 'pending' ORDER BY content")
    assert [p["content"] for p in pending] == [
        "I started learning the cello",
        "My cat is called Mochi",
        "Never call me Meiling, just Mei",
        "我对花生过敏",
    ]


async def test_a_day_is_dreamt_whole_whatever_dream_max_runs_says(runtime: Runtime) -> None:
    runtime.settings = runtime.settings.model_copy(update={"DREAM_MAX_MESSAGES": 2, "DREAM_MAX_RUNS": 1})
    for cached in ("dream", "backfill"):
        runtime.__dict__.pop(cached, None)
    await imported(runtime, [("user", f"remember fact number {i}", f"2023-04-03T0{i}:00:00Z") for i in range(5)])
    (day,) = (await runtime.backfill.estimate()).days
    assert (day.messages, day.batches) == (5, 3)
    report = await runtime.backfill.dream_day("default", day.day)
    assert report["counts"]["batches"] == 3 and report["candidates_created"] == 5 and not report["more_to_read"]


async def test_the_diary_gains_the_old_days_and_they_roll_into_weeks_and_months(runtime: Runtime) -> None:
    await imported(runtime)
    days = (await runtime.backfill.estimate()).days
    for day in days[:2]:
        await runtime.backfill.dream_day(day.namespace, day.day)
    assert await runtime.rollups.weekly() == 0  # week 14 waits for 2023-04-06, not dreamt yet
    for day in days[2:]:
        await runtime.backfill.dream_day(day.namespace, day.day)
    diary = await runtime.db.all("SELECT date, message_count FROM daily_log ORDER BY date")
    assert [(d["date"], d["message_count"]) for d in diary] == [
        ("2023-04-03", 2),
        ("2023-04-05", 1),
        ("2023-04-06", 1),
        ("2023-04-12", 2),
        ("2023-05-17", 1),
    ]
    assert await runtime.rollups.weekly() == 3
    weeks = await runtime.db.all("SELECT week, start_date FROM weekly_log ORDER BY week")
    assert [(w["week"], w["start_date"]) for w in weeks] == [
        ("2023-W14", "2023-04-03"),
        ("2023-W15", "2023-04-10"),
        ("2023-W20", "2023-05-15"),
    ]
    assert await runtime.rollups.monthly() == 1
    months = await runtime.db.all("SELECT month, summary FROM monthly_log")
    assert [m["month"] for m in months] == ["2023-04"] and months[0]["summary"].startswith("2023-W14")
    # May's lone week waits for company, as any lone week does (nightly/rollups.py).
    assert [w["week"] for w in await runtime.db.all("SELECT week FROM weekly_log WHERE rolled_up_at IS NULL")] == [
        "2023-W20"
    ]


async def test_the_estimate_counts_what_dream_model_is_sent(dreaming: Runtime, upstream: RecordingUpstream) -> None:
    await imported(dreaming)
    upstream.reply_text = answer()
    estimate = await dreaming.backfill.estimate()
    for day in estimate.days:
        assert (await dreaming.backfill.dream_day(day.namespace, day.day))["status"] == "succeeded"
    sent = [text_tokens(m["content"]) for request in upstream.requests for m in request.json["messages"]]
    assert len(upstream.requests) == 5 and sum(sent) == sum(d.tokens for d in estimate.days)
