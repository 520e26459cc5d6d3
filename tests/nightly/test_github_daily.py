"""The GitHub daily source: day files pulled through the contents API (played by respx),
parsed into messages, ingested once, and dreamt."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import respx

from companion_memory.history.day_file import parse_daily
from companion_memory.runtime import Runtime

API = "https://api.github.com/repos/me/vault/contents/archive/daily"
DAY_FILE = """# 2026-11-29

## turns
- 09:05 [turn] u: remember that I switched to oat milk ⇢ a: Noted, oat milk from now on.
- 21:40 [turn] u: the build broke again ⇢ a: Let's look at the failing test.
- not a turn line

## checkpoint 18:30
### writer 摘要
Refactored the memory store; tests green.
### 未收尾
- document the queue
## checkpoint
### other
nothing to keep here
"""


@pytest.fixture
def pulling(runtime: Runtime) -> Runtime:
    runtime.settings = runtime.settings.model_copy(
        update={
            "GITHUB_DAILY_REPO": "me/vault",
            "GITHUB_DAILY_TOKEN": "github_pat_test",
            "DREAM_TIME_ZONE": "Asia/Singapore",
        }
    )
    runtime.clock._now = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)  # type: ignore[attr-defined]  # 05:00 SGT on the 30th
    runtime.__dict__.pop("github_daily", None)
    return runtime


def test_turn_lines_and_checkpoint_summaries_are_parsed() -> None:
    entries = parse_daily(DAY_FILE)
    assert [(e.role, e.at, e.kind) for e in entries] == [
        ("user", "09:05", "turn"),
        ("assistant", "09:05", "turn"),
        ("user", "21:40", "turn"),
        ("assistant", "21:40", "turn"),
        ("user", "18:30", "checkpoint"),
    ]
    assert entries[0].content == "remember that I switched to oat milk"
    assert entries[1].content == "Noted, oat milk from now on."
    assert entries[4].content == "Refactored the memory store; tests green.\n\n未收尾:\n- document the queue"


@respx.mock
async def test_yesterdays_file_is_ingested_once_and_dreamt(pulling: Runtime) -> None:
    route = respx.get(f"{API}/2026-11-29.md").respond(200, text=DAY_FILE)
    respx.get(url__regex=rf"{API}/2026-11-2[3-8]\.md").respond(404, json={"message": "Not Found"})
    report = await pulling.github_daily.pull()
    assert report["errors"] == [] and report["messages"] == 5
    assert report["days"]["2026-11-29"] == {"entries": 5, "new_messages": 5}
    assert report["days"]["2026-11-28"] == {"missing": "archive/daily/2026-11-28.md"}
    sent = route.calls.last.request
    assert sent.headers["authorization"] == "Bearer github_pat_test"
    assert sent.headers["accept"] == "application/vnd.github.raw+json"

    rows = await pulling.db.all("SELECT role, content, created_at, source, namespace FROM messages ORDER BY created_at")
    assert rows[0]["created_at"] == "2026-11-29T01:05:00.000Z"  # 09:05 in Singapore
    assert {r["source"] for r in rows} == {"github-daily"} and {r["namespace"] for r in rows} == {"default"}

    again = await pulling.github_daily.pull()  # the same night twice: the pulled day is not fetched again
    assert route.call_count == 1 and "2026-11-29" not in again["days"] and again["messages"] == 0
    assert len(await pulling.db.all("SELECT id FROM messages")) == 5

    dreamt = await pulling.dream.night()
    assert [r["date"] for r in dreamt] == ["2026-11-29"]
    candidates = await pulling.db.all("SELECT content FROM memory_candidates")
    assert [c["content"] for c in candidates] == ["I switched to oat milk"]


@respx.mock
async def test_a_refused_token_is_recorded_not_raised_and_retried_next_night(pulling: Runtime) -> None:
    refused = respx.get(url__startswith=API).respond(401, json={"message": "Bad credentials"})
    report = await pulling.github_daily.pull()
    assert refused.call_count == 1  # the same token would fail for every day
    assert report["errors"] == [
        "GitHub answered 401: bad GITHUB_DAILY_TOKEN, or it may not read this repository's contents"
    ]
    steps = {step.name: step.ok for step in (await pulling.nightly.run()).steps}
    assert steps["github_daily"] is False and steps["weekly_rollup"] is True

    refused.side_effect = lambda request: (  # a new token next night
        httpx.Response(200, text=DAY_FILE) if request.url.path.endswith("/2026-11-29.md") else httpx.Response(404)
    )
    assert (await pulling.github_daily.pull())["messages"] == 5


@respx.mock
async def test_network_failures_and_rate_limits_are_errors_for_that_day(pulling: Runtime) -> None:
    respx.get(f"{API}/2026-11-29.md").mock(side_effect=httpx.ConnectTimeout("timed out"))
    respx.get(f"{API}/2026-11-28.md").respond(403, headers={"x-ratelimit-remaining": "0"})
    respx.get(url__startswith=API).respond(404)
    report = await pulling.github_daily.pull()
    assert report["errors"] == [
        "2026-11-28: GitHub answered 403: rate limit reached",
        "2026-11-29: GitHub did not answer: ConnectTimeout: timed out",
    ]
    assert await pulling.db.all("SELECT id FROM messages") == []


async def test_without_a_repo_the_pull_is_skipped(runtime: Runtime) -> None:
    assert await runtime.github_daily.pull() == {"skipped": "GITHUB_DAILY_REPO is not set"}
    runtime.settings = runtime.settings.model_copy(update={"GITHUB_DAILY_REPO": "me/vault"})
    runtime.__dict__.pop("github_daily", None)
    assert (await runtime.github_daily.pull())["errors"] == ["GITHUB_DAILY_TOKEN is not set"]
