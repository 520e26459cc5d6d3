"""Her persona knobs: read, tuned by the owner with a reason over REST and MCP, held by
each of the three brakes with a 409 that says which and by how much, reverted without a
brake, every change in the history, the summary in both languages, and the boot package
carrying it only once a knob is off its baseline."""

from __future__ import annotations

import asyncio
import dataclasses
import typing
from typing import Any

import httpx
import pytest

from companion_memory.application.persona import KnobName
from companion_memory.clock import FixedClock
from companion_memory.domain.persona import KNOBS, Knob, PersonaChange, lean, summary
from companion_memory.errors import Conflict
from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import IM_KEY, MCP_KEY, OWNER_KEY, auth
from tests.memory.test_plans import tool

# The test clock reads 2026-11-30 12:00 UTC.


async def tune(
    client: httpx.AsyncClient, knob: str, delta: float, reason: str = "希望更主动", status: int = 200
) -> Any:
    response = await client.post(
        "/v1/persona/tune", json={"knob": knob, "delta": delta, "reason": reason}, headers=auth()
    )
    assert response.status_code == status, response.text
    return response.json()


async def persona(client: httpx.AsyncClient, **query: Any) -> dict[str, Any]:
    rest: dict[str, Any] = (await client.get("/v1/persona", params=query, headers=auth())).json()
    assert await tool(client, "persona_get", query) == rest
    return rest


def values(state: dict[str, Any]) -> dict[str, float]:
    return {k["name"]: k["value"] for k in state["knobs"]}


async def test_every_knob_starts_at_its_baseline_and_the_summary_is_empty(client: httpx.AsyncClient) -> None:
    state = await persona(client)
    assert [k["name"] for k in state["knobs"]] == list(KNOBS)
    assert all(k["value"] == k["baseline"] == 0.5 and k["changed_at"] is None for k in state["knobs"])
    assert (state["tuned"], state["summary"], state["language"]) == (False, "", "en")
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["persona"] == ""


async def test_a_tune_moves_the_knob_and_is_an_event_in_its_history(
    client: httpx.AsyncClient, clock: FixedClock
) -> None:
    answer = await tune(client, "initiative", 0.05)
    [change] = answer["changes"]
    assert (change["knob"], change["kind"], change["value_before"], change["value_after"]) == (
        "initiative",
        "tune",
        0.5,
        0.55,
    )
    assert (change["reason"], change["changed_by"], change["changed_at"]) == (
        "希望更主动",
        "chatbox",
        "2026-11-30T12:00:00.000Z",
    )
    state = answer["persona"]
    assert values(state)["initiative"] == 0.55 and state["tuned"] is True
    knob = next(k for k in state["knobs"] if k["name"] == "initiative")
    assert (knob["drift"], knob["lean"], knob["next_tune_at"]) == (0.05, "a little high", "2026-12-01T12:00:00.000Z")
    assert state["summary"] == (
        "tsundere: medium; playful: medium; initiative: a little high; soft: medium; snark: medium; mood swings: medium"
    )

    clock.advance(days=1)
    await tune(client, "initiative", 0.05, "still shy")
    await tune(client, "snark", -0.03, "gentler")
    history = (await client.get("/v1/persona/history", headers=auth())).json()
    assert [(c["knob"], c["value_after"]) for c in history["changes"]] == [
        ("snark", 0.47),
        ("initiative", 0.6),
        ("initiative", 0.55),
    ]
    one = (await client.get("/v1/persona/history", params={"knob": "initiative"}, headers=auth())).json()
    assert one["count"] == 2 and {c["knob"] for c in one["changes"]} == {"initiative"}
    assert values(await persona(client))["initiative"] == 0.6


async def test_the_step_brake_holds_a_step_over_0_05(client: httpx.AsyncClient) -> None:
    refused = await tune(client, "playfulness", 0.08, status=409)
    error = refused["error"]
    assert error["code"] == "persona_brake"
    assert "the step brake held" in error["message"] and "0.03 over" in error["message"]
    assert error["details"] == {
        "knob": "playfulness",
        "value": 0.5,
        "brakes": [{"brake": "step", "limit": 0.05, "asked": 0.08, "over": 0.03}],
    }
    assert values(await persona(client))["playfulness"] == 0.5
    assert (await client.get("/v1/persona/history", headers=auth())).json()["count"] == 0


async def test_the_daily_brake_holds_a_second_tune_of_a_knob_within_24_hours(
    client: httpx.AsyncClient, clock: FixedClock
) -> None:
    await tune(client, "softness", 0.05)
    clock.advance(hours=20, minutes=30)
    refused = (await tune(client, "softness", 0.05, status=409))["error"]
    assert refused["details"]["brakes"] == [
        {
            "brake": "daily",
            "limit": "1 per 24 hours",
            "next_tune_at": "2026-12-01T12:00:00.000Z",
            "wait_seconds": 3.5 * 3600,
        }
    ]
    assert "the next may come in 3 h 30 min" in refused["message"]
    await tune(client, "snark", 0.05)  # another knob is free
    clock.advance(hours=3, minutes=30)
    assert values((await tune(client, "softness", 0.05))["persona"])["softness"] == 0.6


async def test_the_drift_brake_holds_her_within_0_15_of_the_baseline(
    client: httpx.AsyncClient, clock: FixedClock
) -> None:
    for _ in range(3):
        await tune(client, "tsundere", -0.05)
        clock.advance(days=1)
    refused = (await tune(client, "tsundere", -0.02, status=409))["error"]
    assert refused["details"]["brakes"] == [
        {"brake": "drift", "limit": 0.15, "baseline": 0.5, "would_be": 0.33, "drift": 0.17, "over": 0.02}
    ]
    # Back toward the baseline is fine.
    assert values((await tune(client, "tsundere", 0.05))["persona"])["tsundere"] == 0.4


async def test_a_tune_held_by_several_brakes_names_each(client: httpx.AsyncClient) -> None:
    await tune(client, "mood_swing", 0.05)
    refused = (await tune(client, "mood_swing", 0.2, status=409))["error"]
    assert [b["brake"] for b in refused["details"]["brakes"]] == ["step", "daily", "drift"]
    assert [b["over"] for b in refused["details"]["brakes"] if "over" in b] == [0.15, 0.1]


async def test_the_same_refusal_over_mcp(client: httpx.AsyncClient) -> None:
    result = (
        await mcp_call(client, OWNER_KEY, "persona_tune", {"knob": "snark", "delta": 0.1, "reason": "sharper"})
    ).json()["result"]
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "persona_brake" and error["details"]["brakes"][0]["over"] == 0.05


async def test_a_tune_needs_a_reason_and_a_known_knob(client: httpx.AsyncClient) -> None:
    for body in (
        {"knob": "initiative", "delta": 0.05},
        {"knob": "initiative", "delta": 0.05, "reason": "  "},
        {"knob": "charm", "delta": 0.05, "reason": "why not"},
    ):
        response = await client.post("/v1/persona/tune", json=body, headers=auth())
        assert response.status_code == 400, response.text
    still = await client.post("/v1/persona/tune", json={"knob": "snark", "delta": 0, "reason": "x"}, headers=auth())
    assert (still.status_code, still.json()["error"]["code"]) == (400, "invalid_delta")
    assert (await client.get("/v1/persona/history", headers=auth())).json()["count"] == 0


async def test_revert_is_never_braked_and_does_not_reset_the_daily_brake(
    client: httpx.AsyncClient, clock: FixedClock
) -> None:
    await tune(client, "initiative", 0.05)
    await tune(client, "playfulness", -0.05)
    clock.advance(minutes=1)
    one = await client.post("/v1/persona/revert", json={"knob": "initiative", "reason": "too pushy"}, headers=auth())
    assert one.status_code == 200, one.text
    [change] = one.json()["changes"]
    assert (change["kind"], change["value_before"], change["value_after"]) == ("revert", 0.55, 0.5)
    assert values(one.json()["persona"]) == {**dict.fromkeys(KNOBS, 0.5), "playfulness": 0.45}
    # Reverted, the knob is still tuned today as far as the daily brake is concerned.
    held = (await tune(client, "initiative", 0.05, status=409))["error"]["details"]["brakes"]
    assert [b["brake"] for b in held] == ["daily"]

    everything = await tool(client, "persona_revert", {"reason": "start over"}, OWNER_KEY)
    assert [(c["knob"], c["kind"]) for c in everything["changes"]] == [("playfulness", "revert")]
    assert everything["persona"]["tuned"] is False and everything["persona"]["summary"] == ""
    again = await tool(client, "persona_revert", {"reason": "again"}, OWNER_KEY)
    assert again["changes"] == []  # nothing off its baseline: nothing written
    kinds = [c["kind"] for c in (await client.get("/v1/persona/history", headers=auth())).json()["changes"]]
    assert kinds == ["revert", "revert", "tune", "tune"]


async def test_only_the_owner_tunes_or_reverts(client: httpx.AsyncClient) -> None:
    for key in (MCP_KEY, IM_KEY):
        body = {"knob": "initiative", "delta": 0.05, "reason": "sneaky"}
        assert (await client.post("/v1/persona/tune", json=body, headers=auth(key))).status_code == 403
        revert = await client.post("/v1/persona/revert", json={"reason": "sneaky"}, headers=auth(key))
        assert revert.status_code == 403
        for name, arguments in (("persona_tune", body), ("persona_revert", {"reason": "sneaky"})):
            result = (await mcp_call(client, key, name, arguments)).json()["result"]
            assert result["isError"] and result["structuredContent"]["error"]["code"] == "forbidden"
    # Any key may read her persona.
    assert (await client.get("/v1/persona", headers=auth(MCP_KEY))).status_code == 200
    assert (await client.get("/v1/persona/history", headers=auth(IM_KEY))).status_code == 200
    assert values(await persona(client)) == dict.fromkeys(KNOBS, 0.5)


async def test_the_summary_in_both_languages_and_in_the_boot_package(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    await tune(client, "initiative", 0.05)
    await tune(client, "snark", -0.05)
    clock.advance(days=1)
    await tune(client, "initiative", 0.05)
    clock.advance(days=1)
    await tune(client, "initiative", 0.05)
    zh = await persona(client, language="zh")
    assert zh["summary"] == "傲娇 中等；爱玩 中等；主动 很高；温柔 中等；毒舌 略低；情绪起伏 中等"
    en = await persona(client, language="en")
    assert en["summary"] == (
        "tsundere: medium; playful: medium; initiative: very high; soft: medium; snark: a little low; "
        "mood swings: medium"
    )
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert boot["persona"] == en["summary"]
    assert (await tool(client, "memory_boot", {}))["persona"] == en["summary"]

    runtime.settings = runtime.settings.model_copy(update={"PERSONA_LANGUAGE": "zh"})
    runtime.__dict__.pop("persona", None)
    runtime.__dict__.pop("boot", None)
    assert (await persona(client))["summary"] == zh["summary"]
    assert (await client.get("/v1/memory_boot", headers=auth())).json()["persona"] == zh["summary"]


@pytest.mark.parametrize(
    ("drift", "en", "zh"),
    [
        (0.0, "medium", "中等"),
        (0.01, "a little high", "略高"),
        (-0.05, "a little low", "略低"),
        (0.1, "rather high", "偏高"),
        (-0.14, "rather low", "偏低"),
        (0.15, "very high", "很高"),
        (-0.15, "very low", "很低"),
    ],
)
def test_the_words_for_a_drift(drift: float, en: str, zh: str) -> None:
    assert (lean(drift, "en"), lean(drift, "zh")) == (en, zh)


def test_the_surfaces_offer_exactly_the_knobs() -> None:
    assert typing.get_args(typing.get_args(KnobName)[0]) == KNOBS


def test_the_summary_is_empty_at_the_baselines() -> None:
    assert summary([Knob(name, 0.5, None, None) for name in KNOBS], "zh") == ""


async def test_of_two_tunes_at_the_same_moment_one_is_written(runtime: Runtime) -> None:
    persona = runtime.persona
    answers = await asyncio.gather(
        persona.tune("default", "softness", 0.05, "warmer", "chatbox"),
        persona.tune("default", "softness", 0.05, "warmer still", "chatbox"),
        return_exceptions=True,
    )
    written = [a for a in answers if isinstance(a, PersonaChange)]
    refused = [a for a in answers if isinstance(a, Conflict)]
    assert len(written) == len(refused) == 1
    # Read before the other was written, or after: either way the second is not a second tune.
    assert refused[0].code in ("persona_changed", "persona_brake")
    assert [c.value_after for c in await persona.history("default", "softness", 10)] == [0.55]
    # A change read against a knob that has changed since is not written.
    stale = dataclasses.replace(written[0], value_before=0.5, value_after=0.45)
    assert await persona.store.append(stale, after=0) is False
