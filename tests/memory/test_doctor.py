"""The health report, its repairs and the scan for messages no memory cites, through REST
and MCP on both databases."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion_memory.adapters.local.backups import FileBackups
from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.application import memories
from companion_memory.application.principal import SYSTEM
from companion_memory.clock import FixedClock
from companion_memory.hosts import cli, cli_commands
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import DEBUG_KEY, MCP_KEY, OWNER_KEY, all_keys_settings, auth
from tests.fakes.embedder import HashEmbedder

CHECKS = [
    "layers",
    "types",
    "long_term_share",
    "instant_share",
    "anchor_coverage",
    "duplicates",
    "stale",
    "expired_plans",
    "contradictions",
    "vector_index",
    "backlog",
    "nightly",
    "unreadable_values",
    "database",
    "size",
]


async def tool(client: httpx.AsyncClient, name: str, arguments: dict[str, Any], key: str = OWNER_KEY) -> Any:
    result = (await mcp_call(client, key, name, arguments)).json()["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]


async def health(client: httpx.AsyncClient) -> dict[str, Any]:
    """The report over REST, checked against the MCP tool's."""
    response = await client.get("/v1/health/report", headers=auth(DEBUG_KEY))
    assert response.status_code == 200, response.text
    report: dict[str, Any] = response.json()
    assert await tool(client, "memory_health", {}, DEBUG_KEY) == report
    return report


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in report["checks"]}


async def write(client: httpx.AsyncClient, fact_key: str, content: str, **fields: Any) -> dict[str, Any]:
    response = await client.post(
        "/v1/memories", json={"fact_key": fact_key, "content": content, **fields}, headers=auth()
    )
    assert response.status_code == 201, response.text
    memory: dict[str, Any] = response.json()["memory"]
    return memory


async def test_a_fresh_store_is_healthy(client: httpx.AsyncClient, runtime: Runtime) -> None:
    report = await health(client)
    assert [c["name"] for c in report["checks"]] == CHECKS
    assert report["status"] == "ok" and report["ok"] is True, report
    checks = by_name(report)
    on_d1 = type(runtime.db).__name__ == "D1Database"
    assert checks["database"]["detail"]["check"] == ("quick_check" if on_d1 else "integrity_check")
    assert checks["size"]["value"] and checks["size"]["value"] > 0
    assert checks["nightly"]["value"] is None and "never run" in checks["nightly"]["summary"]


async def test_damage_is_reported_then_repaired(client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock) -> None:
    kept = await write(client, "tea", "Likes jasmine tea")
    await write(client, "tea.again", "likes jasmine tea ")  # the same words under another key
    lost = await write(client, "cat", "Her cat is called Mochi")
    gone = await write(client, "car", "Drives a red car")
    plan = await write(client, "sea", "周末去看海", type="plan", valid_days=0)
    stored = await runtime.vectors.get([gone["id"]])
    assert (await client.post(f"/v1/memories/{gone['id']}/archive", headers=auth())).status_code == 200
    await runtime.vectors.inner.upsert(stored)  # type: ignore[attr-defined]  # a vector left behind
    await runtime.vectors.inner.delete([lost["id"]])  # type: ignore[attr-defined]  # a vector lost
    clock.advance(days=2)

    report = await health(client)
    checks = by_name(report)
    assert report["status"] == "fail" and report["ok"] is False
    vectors = checks["vector_index"]
    assert vectors["status"] == "fail" and vectors["value"] == 2
    assert (vectors["detail"]["missing"], vectors["detail"]["orphaned"]) == (1, 1)
    assert checks["expired_plans"]["status"] == "warn" and checks["expired_plans"]["detail"]["ids"] == [plan["id"]]
    assert checks["duplicates"]["status"] == "warn" and checks["duplicates"]["detail"]["extra"] == 1
    assert kept["id"] in checks["duplicates"]["detail"]["groups"][0]
    assert checks["nightly"]["status"] == "warn"  # two days of data and no night yet
    assert checks["layers"]["value"] == 4 and checks["types"]["detail"] == {"note": 3, "plan": 1}

    assert (await client.post("/v1/health/repair", headers=auth(DEBUG_KEY))).status_code == 403
    response = await client.post("/v1/health/repair", headers=auth())
    assert response.status_code == 200, response.text
    repaired = response.json()
    assert repaired["backup"]["path"] is None and "Time Travel" in repaired["backup"]["note"]
    done = {a["name"]: a["count"] for a in repaired["actions"]}
    assert done == {
        "rewrite_unreadable_values": 0,
        "expire_plans": 1,
        "delete_orphaned_vectors": 1,
        "requeue_missing_vectors": 1,
        "rebuild_full_text": 2,
    }
    after = by_name(repaired["report"])
    assert after["vector_index"]["status"] == "ok" and after["expired_plans"]["status"] == "ok"
    assert after["duplicates"]["status"] == "warn"  # the owner's call, not the repair's
    assert await runtime.vectors.get([gone["id"]]) == [] and [v.id for v in await runtime.vectors.get([lost["id"]])]
    search = await client.post("/v1/memory/search", json={"query": "Mochi", "min_score": 0}, headers=auth())
    assert [h["id"] for h in search.json()["hits"]] == [lost["id"]]  # the rebuilt word index still finds it


async def test_a_repair_keeps_a_backup_first(client: httpx.AsyncClient, runtime: Runtime, tmp_path: Path) -> None:
    runtime.backups = FileBackups(tmp_path / "backups")
    await write(client, "tea", "Likes jasmine tea")
    paths = []
    for _ in range(2):  # the same second twice: a second file, never over the first
        answer = (await client.post("/v1/health/repair", json={"backup": True}, headers=auth())).json()
        paths.append(Path(answer["backup"]["path"]))
    assert paths[0] != paths[1] and all(p.parent == tmp_path / "backups" for p in paths)
    document = json.loads(paths[1].read_text(encoding="utf-8"))
    assert document["format"] == "companion-memory-export" and document["memories"][0]["content"] == "Likes jasmine tea"
    assert paths[0].stat().st_mode & 0o777 == 0o600
    skipped = (await client.post("/v1/health/repair", json={"backup": False}, headers=auth())).json()
    assert skipped["backup"] == {"path": None, "note": "not asked for"}


async def test_messages_no_memory_cites_are_listed_for_review(client: httpx.AsyncClient) -> None:
    said = "2026-11-28T10:00:00Z"
    messages = [
        {"role": "user", "content": f"message {i}", "id": f"m{i}", "created_at": f"2026-11-28T10:0{i}:00Z"}
        for i in range(5)
    ]
    messages += [
        {"role": "assistant", "content": "a reply", "id": "r1", "created_at": said},
        {"role": "user", "content": "said just now", "id": "new", "created_at": "2026-11-30T11:00:00Z"},
    ]
    ingested = await client.post("/v1/ingest/messages", json={"messages": messages}, headers=auth())
    assert ingested.status_code == 200, ingested.text
    ids = [m["id"] for m in ingested.json()["messages"]]  # the stored ids, in the order sent
    await write(client, "m0", "From message 0", source_message_ids=[ids[0]])
    await write(client, "m1", "From message 1", evidence=[{"quote": "message 1", "message_id": ids[1]}])
    await write(client, "plain", "No evidence at all", evidence=[{"quote": "no id"}])

    first = (await client.get("/v1/health/unanchored", params={"limit": 2}, headers=auth(DEBUG_KEY))).json()
    assert [m["content"] for m in first["messages"]] == ["message 4", "message 3"] and first["next_cursor"]
    assert first["messages"][0]["id"] == ids[4]
    second = (
        await client.get(
            "/v1/health/unanchored", params={"limit": 2, "cursor": first["next_cursor"]}, headers=auth(DEBUG_KEY)
        )
    ).json()
    assert [m["content"] for m in second["messages"]] == ["message 2"] and second["next_cursor"] is None
    assert await tool(client, "memory_unanchored", {"limit": 2}, DEBUG_KEY) == first
    assert (await client.get("/v1/health/unanchored", headers=auth(MCP_KEY))).status_code == 403
    bad = await client.get("/v1/health/unanchored", params={"cursor": "nope"}, headers=auth(DEBUG_KEY))
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_cursor"


# -- the command line ------------------------------------------------------------------


EMBEDDER = HashEmbedder(dimensions=384, model="test-words")


@pytest.fixture
def cli_clock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FixedClock:
    """``companion-memory`` in this process, on a data dir of its own, with the word-hashing
    embedder and this clock (the bundled model would take seconds to load)."""
    clock = FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))

    async def local(settings: Settings, data_dir: Path) -> Runtime:
        return await build_local_runtime(settings, data_dir, embedder=EMBEDDER, clock=clock)

    monkeypatch.setattr(cli_commands, "_runtime", local)
    monkeypatch.setenv("CHATBOX_API_KEY", OWNER_KEY)
    monkeypatch.chdir(tmp_path)
    return clock


def doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = cli.main(["doctor", "--data-dir", str(tmp_path / "data"), *args])
    return code, capsys.readouterr().out


def test_the_doctor_on_a_fresh_install(
    cli_clock: FixedClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = doctor(tmp_path, capsys)
    assert code == 0 and out.splitlines()[-1] == "ok: 0 failed, 0 to look at, of 15 checks", out
    code, out = doctor(tmp_path, capsys, "--json")
    assert code == 0 and json.loads(out)["status"] == "ok"


async def damage(data_dir: Path, clock: FixedClock) -> None:
    """A duplicate, a plan whose day is today, and a vector lost from the index."""
    runtime = await build_local_runtime(all_keys_settings(), data_dir, embedder=EMBEDDER, clock=clock)
    for key, content, extra in [
        ("tea", "Likes jasmine tea", {}),
        ("tea.again", "likes jasmine tea", {}),
        ("cat", "Her cat is called Mochi", {}),
        ("sea", "周末去看海", {"type": "plan", "valid_days": 0}),
    ]:
        await memories.upsert_memory(runtime, SYSTEM, memories.MemoryUpsert(fact_key=key, content=content, **extra))
    cat = await memories.list_memories(runtime, SYSTEM, memories.MemoryQuery(limit=10))
    await runtime.vectors.delete([m.id for m in cat.memories if m.content.endswith("Mochi")])


def test_the_doctor_finds_damage_and_repairs_it(
    cli_clock: FixedClock, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(damage(tmp_path / "data", cli_clock))
    cli_clock.advance(days=2)  # the plan's day is over
    code, out = doctor(tmp_path, capsys)
    lines = {line.split()[1]: line for line in out.splitlines()[:-1]}
    assert code == 1, out
    assert lines["vector_index"].startswith("FAIL") and "1 live memories and episodes missing" in lines["vector_index"]
    assert lines["expired_plans"].startswith("WARN") and lines["duplicates"].startswith("WARN")

    code, out = doctor(tmp_path, capsys, "--repair")
    assert code == 0, out
    backup = next(line for line in out.splitlines() if line.startswith("backup: "))
    path = Path(backup.removeprefix("backup: "))
    assert path.parent == tmp_path / "data" / "backups" and "Mochi" in path.read_text(encoding="utf-8")
    assert (
        "1 plans past their end marked expired" in out
        and "1 memories and episodes missing from the index queued" in out
    )
    after = out.split("afterwards:")[1]
    assert "FAIL" not in after and "WARN  duplicates" in after
    code, out = doctor(tmp_path, capsys)
    assert code == 0 and "OK    vector_index" in out
