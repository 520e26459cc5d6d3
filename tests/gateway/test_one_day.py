"""One rule for "which day is it": the server's DREAM_TIME_ZONE, on every surface. At 18:21
UTC on 2 December it is already 3 December in Singapore (the reference's default), and the
boot package, the <memories> block (a chat turn's, the boot package's and the Claude Code
hook's), a plan for "today" and the star map's file all say 3 December. Locally, DREAM_TIME_ZONE defaults to
the machine's own zone; the Worker keeps the reference's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion_memory.adapters.cloudflare.runtime import settings_from_env
from companion_memory.adapters.local.machine_zone import machine_time_zone
from companion_memory.clock import FixedClock
from companion_memory.hosts.cli import load_settings
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.claude_code import load_hook
from tests.conftest import auth
from tests.memory.test_plans import tool, write_plan

EVENING_UTC = datetime(2026, 12, 2, 18, 21, tzinfo=UTC)
SINGAPORE_DAY = "2026-12-03"


async def test_every_surface_says_the_same_day(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(runtime.clock, FixedClock)
    runtime.clock.advance(seconds=(EVENING_UTC - runtime.clock.now()).total_seconds())
    assert runtime.settings.DREAM_TIME_ZONE == "Asia/Singapore"
    body: dict[str, Any] = {"fact_key": "user.name", "content": "Her name is Mei", "type": "identity"}
    written = (await client.post("/v1/memories", json=body, headers=auth())).json()["memory"]
    assert written["updated_at"].startswith("2026-12-02T18:21")  # stored in UTC
    plan = await write_plan(client, "plan.today", "Call the dentist", valid_days=0)
    assert plan["valid_to"] == SINGAPORE_DAY

    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["date"] == SINGAPORE_DAY and boot["time_zone"] == "Asia/Singapore"
    assert f"- [identity, {SINGAPORE_DAY}] Her name is Mei" in boot["context"]["text"]
    assert f"[plan, {SINGAPORE_DAY}, until {SINGAPORE_DAY}] Call the dentist" in boot["context"]["text"]

    ask = {"query": "what is her name?", "min_score": 0}
    for answer in (
        (await client.post("/v1/memory/recall", json={**ask, "include_prompt": True}, headers=auth())).json(),
        await tool(client, "memory_recall", ask),
    ):
        assert f"[identity, {SINGAPORE_DAY}] Her name is Mei" in answer["prompt"]
        assert "2026-12-02" not in answer["prompt"]
        assert [hit["day"] for hit in answer["hits"]] == [SINGAPORE_DAY]

    # The Claude Code hook writes its own block from the hits: it dates them as the server does.
    hook = load_hook()
    monkeypatch.setattr(hook, "call", lambda *_: answer)
    assert f"1. [identity, {SINGAPORE_DAY}] Her name is Mei" in hook.recall_context("what is her name?")

    drawn = (await client.get("/v1/admin/starmap", params={"format": "mermaid"}, headers=auth())).json()
    assert drawn["filename"] == f"starmap-default-{SINGAPORE_DAY}.mmd"


def test_the_local_server_cuts_days_in_the_machines_zone_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.delenv("DREAM_TIME_ZONE", raising=False)
    monkeypatch.setenv("TZ", "America/New_York")
    assert load_settings().DREAM_TIME_ZONE == "America/New_York"
    monkeypatch.setenv("DREAM_TIME_ZONE", "Europe/Paris")
    assert load_settings().DREAM_TIME_ZONE == "Europe/Paris"
    (tmp_path / ".env").write_text("DREAM_TIME_ZONE=Asia/Tokyo\n")
    monkeypatch.delenv("DREAM_TIME_ZONE")
    assert load_settings().DREAM_TIME_ZONE == "Asia/Tokyo"
    monkeypatch.delenv("DREAM_TIME_ZONE")  # load_dotenv put it in the environment
    # The Worker has no machine of its own: the reference's default, as the one Settings model says.
    assert settings_from_env({}).DREAM_TIME_ZONE == Settings().DREAM_TIME_ZONE == "Asia/Singapore"


def test_the_machines_zone_is_read_from_tz_then_etc(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    assert machine_time_zone({"TZ": ":Europe/Berlin"}, etc) == "Europe/Berlin"
    assert machine_time_zone({"TZ": "UTC0"}, etc) is None  # a POSIX rule, not a zone name
    assert machine_time_zone({}, etc) is None  # nothing says: the reference's default stands
    (etc / "timezone").write_text("Asia/Kolkata\n")
    assert machine_time_zone({}, etc) == "Asia/Kolkata"
    (etc / "localtime").symlink_to("/usr/share/zoneinfo/America/Sao_Paulo")
    assert machine_time_zone({}, etc) == "America/Sao_Paulo"
    assert machine_time_zone({"TZ": "Nowhere/Atlantis"}, etc) is None
