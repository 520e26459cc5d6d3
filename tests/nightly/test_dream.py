"""The dream with the embedded default (no model): explicit requests become candidates
with their quotes, the diary is written, and a night dreamt twice creates nothing new."""

from __future__ import annotations

from datetime import UTC, date

import httpx

from companion_memory.runtime import Runtime
from tests.conftest import NIGHTLY_STEPS, auth

DAY = date(2026, 11, 29)  # the test clock reads 2026-11-30 20:00 in Singapore: this is yesterday


async def say(client: httpx.AsyncClient, *messages: tuple[str, str, str]) -> None:
    body = {"conversation_id": "c1", "messages": [{"role": r, "content": c, "created_at": t} for r, c, t in messages]}
    assert (await client.post("/v1/ingest/messages", json=body, headers=auth())).status_code == 200


async def test_requests_become_candidates_and_the_diary_is_written(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await say(
        client,
        ("user", "Please remember that my sister's name is Lin.", "2026-11-29T02:00:00Z"),
        ("assistant", "I'll remember that your sister is Lin.", "2026-11-29T02:00:05Z"),
        ("user", "请记住：我对花生过敏。以后不要给我推荐花生酱！", "2026-11-29T03:00:00Z"),
        ("user", "Never call me Meiling, just Mei.", "2026-11-29T04:00:00Z"),
        ("user", "remember my bank password is hunter2hunter2", "2026-11-29T05:00:00Z"),
        ("user", "a message on the next local day", "2026-11-29T17:00:00Z"),
    )
    reports = await runtime.dream.night()
    assert len(reports) == 1 and reports[0]["status"] == "succeeded" and reports[0]["messages_read"] == 5
    assert reports[0]["counts"]["rejected_sensitive"] == 1
    pending = (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    contents = sorted(c["content"] for c in pending)
    assert contents == sorted(
        [
            "My sister's name is Lin",
            "我对花生过敏",
            "以后不要给我推荐花生酱",
            "Never call me Meiling, just Mei",
        ]
    )
    for candidate in pending:
        quote = candidate["evidence"][0]["quote"]
        assert quote and candidate["evidence"][0]["message_id"] in candidate["source_message_ids"]
    never = next(c for c in pending if c["content"].startswith("Never"))
    assert never["type"] == "boundary"
    diary = (await client.get("/v1/diary", params={"date": DAY.isoformat()}, headers=auth())).json()["diary"]
    assert diary["message_count"] == 5 and diary["title"] and len(diary["title"]) <= 12

    assert await runtime.dream.night() == []  # the same night, dreamt twice: nothing new to read
    again = await runtime.dream.night(DAY)  # asked for the day by name: a run that reads nothing
    assert again[0]["messages_read"] == 0 and again[0]["candidates_created"] == 0
    assert (await client.get("/v1/candidates", headers=auth())).json()["count"] == 4
    runs = await runtime.db.all("SELECT status, messages_read, candidates_created FROM dream_runs ORDER BY started_at")
    assert [(r["messages_read"], r["candidates_created"]) for r in runs] == [(5, 4), (0, 0)]


async def test_dry_run_writes_nothing_and_batches_follow_the_cursor(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    runtime.settings = runtime.settings.model_copy(update={"DREAM_MAX_MESSAGES": 2})
    runtime.__dict__.pop("dream", None)
    await say(client, *[("user", f"remember fact number {i}", f"2026-11-29T0{i}:00:00Z") for i in range(5)])
    dry = await runtime.dream.night(dry_run=True)
    assert dry[0]["counts"]["batches"] == 3 and len(dry[0]["candidates"]) == 5
    assert (await client.get("/v1/candidates", headers=auth())).json()["count"] == 0
    assert await runtime.db.all("SELECT id FROM dream_runs") == []
    real = await runtime.dream.night()
    assert real[0]["candidates_created"] == 5 and real[0]["counts"]["batches"] == 3


async def test_a_candidate_like_an_existing_memory_points_at_it(client: httpx.AsyncClient, runtime: Runtime) -> None:
    memory = (
        await client.post(
            "/v1/memories", json={"fact_key": "sister", "content": "my sister's name is Lin"}, headers=auth()
        )
    ).json()["memory"]
    await say(client, ("user", "Please remember that my sister's name is Lin.", "2026-11-29T02:00:00Z"))
    await runtime.dream.night()
    candidate = (await client.get("/v1/candidates", headers=auth())).json()["candidates"][0]
    assert candidate["target_memory_id"] == memory["id"] and candidate["kind"] == "update"
    approved = (await client.post(f"/v1/candidates/{candidate['id']}/approve", headers=auth())).json()
    assert approved["action"] == "superseded"


async def test_dream_over_rest_and_status(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await say(client, ("user", "remember that I start my new job on Monday", "2026-11-29T02:00:00Z"))
    dry = (await client.post("/v1/dream/run", json={"dry_run": True}, headers=auth())).json()
    assert dry["date"] == "2026-11-29" and dry["runs"][0]["candidates"][0]["content"] == "I start my new job on Monday"
    assert (await client.get("/v1/dream/status", headers=auth())).json() == {
        "runs": [],
        "pending_candidates": 0,
        "last_nightly": None,
    }
    real = (await client.post("/v1/dream/run", headers=auth())).json()
    assert real["runs"][0]["candidates_created"] == 1
    status = (await client.get("/v1/dream/status", headers=auth())).json()
    assert status["pending_candidates"] == 1 and status["runs"][0]["status"] == "succeeded"
    assert (await client.post("/v1/dream/run", json={"date": "yesterday"}, headers=auth())).status_code == 400
    assert (await client.post("/v1/dream/run", headers=auth("test-mcp-key"))).status_code == 403


async def test_the_nightly_job_runs_every_step_even_when_one_fails(runtime: Runtime) -> None:
    from datetime import datetime

    from companion_memory.nightly.job import next_run

    assert next_run(datetime(2026, 11, 30, 12, tzinfo=UTC), "Asia/Singapore").isoformat() == "2026-12-01T04:10:00+08:00"
    assert (
        next_run(datetime(2026, 11, 30, 19, 0, tzinfo=UTC), "Asia/Singapore").isoformat() == "2026-12-01T04:10:00+08:00"
    )
    assert (
        next_run(datetime(2026, 11, 30, 20, 10, tzinfo=UTC), "Asia/Singapore").isoformat()
        == "2026-12-02T04:10:00+08:00"
    )

    async def broken() -> None:
        raise RuntimeError("dream model unavailable")

    nightly = runtime.nightly
    nightly.steps = (("dream", broken), *nightly.steps[1:])
    report = await nightly.run()
    results = {step.name: step for step in report.steps}
    assert not report.ok and not results["dream"].ok
    assert results["dream"].error == "RuntimeError: dream model unavailable"
    assert [name for name, step in results.items() if step.ok] == list(NIGHTLY_STEPS[1:])
    assert results["github_daily"].result == {"skipped": "GITHUB_DAILY_REPO is not set"}
    recorded = await nightly.last_run()
    assert recorded is not None and recorded["ok"] is False and recorded["steps"]["dream"]["ok"] is False


async def test_missed_nights_and_late_messages_are_caught_up(client: httpx.AsyncClient, runtime: Runtime) -> None:
    # The server was off for two nights: the 27th and 28th were never dreamt.
    await say(
        client,
        ("user", "remember that I moved to Lisbon", "2026-11-27T03:00:00Z"),
        ("user", "remember that my cat is called Pixel", "2026-11-28T03:00:00Z"),
        ("user", "remember I take the 8:10 train", "2026-11-29T03:00:00Z"),
    )
    reports = await runtime.dream.night()
    assert [r["date"] for r in reports] == ["2026-11-27", "2026-11-28", "2026-11-29"]
    assert sum(r["candidates_created"] for r in reports) == 3
    # A message about the 28th arrives late (an import, the GitHub pull): the next run reads only it.
    await say(client, ("user", "remember that Pixel hates the vacuum", "2026-11-28T09:00:00Z"))
    late = await runtime.dream.night()
    assert [(r["date"], r["messages_read"], r["candidates_created"]) for r in late] == [("2026-11-28", 1, 1)]
    assert await runtime.dream.night() == []
    # Beyond MESSAGES_RETENTION_DAYS nothing is looked at (retention deletes those messages).
    await say(client, ("user", "remember an ancient thing", "2026-11-01T03:00:00Z"))
    assert await runtime.dream.night() == []


async def test_a_night_reads_at_most_dream_max_runs_batches_and_the_rest_waits(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    runtime.settings = runtime.settings.model_copy(update={"DREAM_MAX_RUNS": 3, "DREAM_MAX_MESSAGES": 1})
    runtime.__dict__.pop("dream", None)
    await say(
        client,
        *[("user", f"remember fact {i} of the 27th", f"2026-11-27T0{i}:00:00Z") for i in range(2)],
        *[("user", f"remember fact {i} of the 28th", f"2026-11-28T0{i}:00:00Z") for i in range(2)],
    )
    first = await runtime.dream.night()
    assert [(r["date"], r["counts"]["batches"], r["more_to_read"]) for r in first] == [
        ("2026-11-27", 2, False),
        ("2026-11-28", 1, True),
    ]
    second = await runtime.dream.night()
    assert [(r["date"], r["messages_read"], r["more_to_read"]) for r in second] == [("2026-11-28", 1, False)]
    assert (await client.get("/v1/candidates", headers=auth())).json()["count"] == 4


async def test_the_nightly_answer_lists_the_dreams_candidates_as_json(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    from companion_memory.application import dream
    from companion_memory.application.principal import SYSTEM

    await say(client, ("user", "remember that I start my new job on Monday", "2026-11-29T02:00:00Z"))
    night = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger(trigger="test"))
    [run] = next(step for step in night.steps if step.name == "dream").result
    [candidate] = run["candidates"]
    assert list(candidate)[:5] == ["id", "namespace", "kind", "type", "content"] and "dream_run_id" not in candidate
    assert candidate["content"] == "I start my new job on Monday" and candidate["evidence"][0]["message_id"]
