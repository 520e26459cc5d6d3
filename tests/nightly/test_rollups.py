"""Weekly and monthly rollups with the clock moved, and idempotent re-runs."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from companion_memory.runtime import Runtime
from tests.gateway.test_boot_diary import add_daily


async def test_days_roll_into_weeks_and_weeks_into_months(runtime: Runtime) -> None:
    # Diary days from Monday 2026-09-28 (ISO week 2026-W40) through 2026-10-25 (W43).
    start = date(2026, 9, 28)
    for offset in range(0, 28, 2):
        day = start + timedelta(days=offset)
        await add_daily(runtime, day.isoformat(), f"Day {offset}", f"things on {day.isoformat()}")
    clock = runtime.clock
    clock._now = datetime(2026, 10, 30, 12, tzinfo=UTC)  # type: ignore[attr-defined]  # Friday of W44
    assert await runtime.rollups.weekly() == 3  # W40–W42 ended more than 7 days ago; W43 has not
    assert await runtime.rollups.weekly() == 0  # nothing new on a re-run
    weeks = await runtime.db.all("SELECT week, start_date, end_date, summary FROM weekly_log ORDER BY week")
    assert [w["week"] for w in weeks] == ["2026-W40", "2026-W41", "2026-W42"]
    assert weeks[0]["start_date"] == "2026-09-28" and "2026-09-28: Day 0" in weeks[0]["summary"]
    assert len(weeks[0]["summary"]) <= 300
    assert len(await runtime.db.all("SELECT id FROM daily_log")) == 14  # days are kept

    assert await runtime.rollups.monthly() == 0  # no week is 35 days old yet
    clock._now = datetime(2026, 12, 10, 12, tzinfo=UTC)  # type: ignore[attr-defined]
    assert await runtime.rollups.weekly() == 1  # W43 now
    assert await runtime.rollups.monthly() == 1
    months = await runtime.db.all("SELECT month, summary FROM monthly_log")
    # W40's Thursday is 2026-10-01, so all four weeks belong to October.
    assert [m["month"] for m in months] == ["2026-10"] and "2026-W40" in months[0]["summary"]
    assert await runtime.db.all("SELECT week FROM weekly_log WHERE rolled_up_at IS NULL") == []
    assert await runtime.rollups.monthly() == 0 and await runtime.rollups.weekly() == 0


async def test_a_lone_week_waits_and_a_late_one_joins_its_month(runtime: Runtime) -> None:
    await add_daily(runtime, "2026-08-03", "Lone", "one day in W32")
    runtime.clock._now = datetime(2026, 10, 20, 12, tzinfo=UTC)  # type: ignore[attr-defined]
    assert await runtime.rollups.weekly() == 1
    assert await runtime.rollups.monthly() == 0  # a lone week is kept, not rolled
    assert len(await runtime.db.all("SELECT week FROM weekly_log WHERE rolled_up_at IS NULL")) == 1
    await runtime.db.run(
        "INSERT INTO monthly_log (id, namespace, month, title, summary, created_at, updated_at) "
        "VALUES ('m', 'default', '2026-08', 'Month 2026-08', 'earlier weeks', 'x', 'x')"
    )
    assert await runtime.rollups.monthly() == 1
    summary = (await runtime.db.first("SELECT summary FROM monthly_log WHERE month = '2026-08'"))["summary"]
    assert "earlier weeks" in summary and "2026-W32" in summary


async def test_monthly_rollup_over_rest_is_owner_only(client, runtime: Runtime) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import MCP_KEY, auth

    assert (await client.post("/admin/monthly-rollup", headers=auth(MCP_KEY))).status_code == 403
    response = await client.post("/admin/monthly-rollup", headers=auth())
    assert response.status_code == 200 and response.json() == {"monthly_written": 0}
