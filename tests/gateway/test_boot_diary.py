"""The boot package and the diary, with the day cut in DREAM_TIME_ZONE."""

from __future__ import annotations

import httpx

from companion_memory.domain.diary import DiaryDay, MonthSummary, WeekSummary
from companion_memory.gateway.ladder import impressions_ladder
from companion_memory.runtime import Runtime
from tests.conftest import auth

# The test clock reads 2026-11-30 12:00 UTC = 20:00 in Singapore.


async def add_daily(runtime: Runtime, day: str, title: str, summary: str, namespace: str = "default") -> None:
    await runtime.db.run(
        "INSERT INTO daily_log (id, namespace, date, title, summary, message_count, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, 3, '2026-11-30T00:00:00.000Z', '2026-11-30T00:00:00.000Z')",
        (f"d-{namespace}-{day}", namespace, day, title, summary),
    )


async def test_diary_by_date_and_recent(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await add_daily(runtime, "2026-11-29", "爬山", "和朋友去爬了山，很累但开心")
    await add_daily(runtime, "2026-11-30", "Quiet day", "Read a book")
    await add_daily(runtime, "2026-11-20", "Old", "older entry")
    one = await client.get("/v1/diary", params={"date": "2026-11-29"}, headers=auth())
    assert one.status_code == 200 and one.json()["diary"]["title"] == "爬山"
    missing = await client.get("/v1/diary", params={"date": "2026-11-01"}, headers=auth())
    assert missing.status_code == 404 and "2026-11-01" in missing.json()["error"]["message"]
    bad = await client.get("/v1/diary", params={"date": "yesterday"}, headers=auth())
    assert bad.status_code == 400
    assert (await client.get("/v1/diary", headers=auth())).status_code == 400
    recent = (await client.get("/v1/diary/recent", headers=auth())).json()
    assert [d["date"] for d in recent["diaries"]] == ["2026-11-30", "2026-11-29"]
    assert (await client.get("/v1/diary/recent", params={"namespace": "other"}, headers=auth())).json()["count"] == 0


async def test_boot_package(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await add_daily(runtime, "2026-11-29", "爬山", "和朋友去爬了山")
    await runtime.db.run(
        "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, updated_at) "
        "VALUES ('w1', 'default', '2026-W47', '2026-11-16', '2026-11-22', 'Busy week', 'Exams and a trip', 'x', 'x')"
    )
    await client.post(
        "/v1/memories", json={"fact_key": "a", "type": "preference", "content": "likes tea"}, headers=auth()
    )
    await client.post("/v1/memories", json={"fact_key": "b", "type": "fact", "content": "has a cat"}, headers=auth())
    await client.post("/v1/precious", json={"content": "原话一句"}, headers=auth())
    await client.post("/v1/glossary", json={"term": "bbt", "definition": "bubble tea"}, headers=auth())
    await client.post(
        "/v1/ingest/messages",
        json={
            "messages": [
                {"role": "user", "content": "today, Singapore evening", "created_at": "2026-11-30T11:00:00Z"},
                {"role": "user", "content": "yesterday in Singapore", "created_at": "2026-11-29T15:00:00Z"},
                {"role": "assistant", "content": "just after local midnight", "created_at": "2026-11-29T16:30:00Z"},
            ]
        },
        headers=auth(),
    )
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["date"] == "2026-11-30" and boot["time_zone"] == "Asia/Singapore"
    assert boot["impressions"]["text"].splitlines() == [
        "[Impressions]",
        "Yesterday (2026-11-29): 爬山 — 和朋友去爬了山",
        "Week 2026-W47: Busy week — Exams and a trip",
    ]
    assert [m["content"] for m in boot["today_messages"]] == ["just after local midnight", "today, Singapore evening"]
    assert boot["counts"] == {"fact": 1, "preference": 1}
    assert [p["content"] for p in boot["precious"]] == ["原话一句"]
    assert [g["term"] for g in boot["glossary"]] == ["bbt"]


def test_ladder_trims_the_month_first_then_the_week() -> None:
    at = "2026-11-30T00:00:00.000Z"
    daily = DiaryDay(
        id="d1",
        namespace="default",
        date="2026-11-29",
        title="Day",
        summary="d" * 80,
        message_count=1,
        created_at=at,
        updated_at=at,
    )
    weekly = WeekSummary(
        week="2026-W47", start_date="2026-11-16", end_date="2026-11-22", title="Week", summary="w" * 80
    )
    monthly = MonthSummary(month="2026-10", title="Month", summary="m" * 80)
    full = impressions_ladder(daily, weekly, monthly, 10_000)
    assert len(full.splitlines()) == 4
    trimmed = impressions_ladder(daily, weekly, monthly, 300)
    assert len(trimmed) <= 300
    lines = trimmed.splitlines()
    assert lines[1].endswith("d" * 80) and lines[2].endswith("w" * 80) and lines[3].endswith("…")
    tight = impressions_ladder(daily, weekly, monthly, 200)
    assert len(tight) <= 200 and "Month" not in tight and tight.splitlines()[1].endswith("d" * 80)
    assert impressions_ladder(None, None, None, 1000) == ""


async def test_a_long_diary_entry_leaves_room_for_the_week_and_the_month(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await add_daily(runtime, "2026-11-29", "A very long day", "走了很远的路。" * 300)  # 2,100 characters
    await runtime.db.run(
        "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, updated_at) "
        "VALUES ('w1', 'default', '2026-W47', '2026-11-16', '2026-11-22', 'Busy week', ?, 'x', 'x')",
        ("Exams and a trip. " * 40,),
    )
    await runtime.db.run(
        "INSERT INTO monthly_log (id, namespace, month, title, summary, created_at, updated_at) "
        "VALUES ('m1', 'default', '2026-10', 'October', 'Moved flats', 'x', 'x')"
    )
    text = (await client.get("/v1/memory_boot", headers=auth())).json()["impressions"]["text"]
    lines = text.splitlines()
    assert len(text) <= 1000 and len(lines) == 4, text
    assert lines[1].startswith("Yesterday (2026-11-29): A very long day — 走了很远的路") and lines[1].endswith("…")
    assert lines[2].startswith("Week 2026-W47: Busy week — Exams and a trip.") and lines[2].endswith("…")
    assert lines[3] == "Month 2026-10: October — Moved flats"
    assert all(len(line.split(": ", 1)[1]) <= 100 for line in lines[1:])
