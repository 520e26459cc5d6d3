"""Her persona in the chat's stable prefix: nothing while every knob is at its baseline
(the request goes out as before), then one system message right after the client's own,
byte-identical from turn to turn until a knob changes, changed by a tune and gone after a
revert; on the Anthropic route (system blocks, the cached prefix) and the OpenAI-compatible
one alike. The guide dog never carries it."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.runtime import Runtime
from tests.conftest import auth, outbound
from tests.upstreams import RecordingUpstream

SYSTEM = "You are Mei's companion. Be warm and brief."
ROUTES = {
    "anthropic": {"CHAT_MODEL": "anthropic/claude-sonnet-4-5", "AI_GATEWAY_BASE_URL": "{url}"},
    "openai": {"CHAT_BASE_URL": "{url}/v1"},
}


@pytest.fixture(params=list(ROUTES))
def chatting(request: pytest.FixtureRequest, runtime: Runtime, upstream: RecordingUpstream) -> str:
    """The runtime's chat model answered by ``upstream`` on the route of the param."""
    update = {name: value.format(url=upstream.url) for name, value in ROUTES[request.param].items()}
    runtime.settings = runtime.settings.model_copy(update=update)
    runtime.router, runtime.http = outbound(runtime.settings)
    runtime.__dict__.pop("gateway", None)
    return str(request.param)


def persona_lines(route: str, body: dict[str, Any]) -> list[str]:
    """The system text the upstream was sent, one entry per block or message."""
    if route == "anthropic":
        return [block["text"] for block in body.get("system", [])]
    return [m["content"] for m in body["messages"] if m["role"] == "system"]


def prefix(route: str, body: dict[str, Any]) -> Any:
    """What a provider caches before the conversation: the system part, as sent."""
    if route == "anthropic":
        return [{k: v for k, v in block.items() if k != "cache_control"} for block in body.get("system", [])]
    return [m for m in body["messages"] if m["role"] == "system"]


async def turns(client: httpx.AsyncClient, upstream: RecordingUpstream, questions: list[str]) -> list[dict[str, Any]]:
    """One chat turn per question, the conversation growing; the bodies the upstream got."""
    history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    bodies = []
    for n, question in enumerate(questions):
        upstream.reply_text = f"Answer number {n}."
        history.append({"role": "user", "content": question})
        response = await client.post(
            "/v1/chat/completions", json={"model": "companion", "messages": history}, headers=auth()
        )
        assert response.status_code == 200, response.text
        history.append({"role": "assistant", "content": response.json()["choices"][0]["message"]["content"]})
        bodies.append(upstream.requests[-1].json)
    return bodies


async def tune(client: httpx.AsyncClient, knob: str, delta: float) -> None:
    body = {"knob": knob, "delta": delta, "reason": "test"}
    response = await client.post("/v1/persona/tune", json=body, headers=auth())
    assert response.status_code == 200, response.text


async def test_at_the_baselines_the_request_goes_out_as_before(
    client: httpx.AsyncClient, upstream: RecordingUpstream, chatting: str
) -> None:
    bodies = await turns(client, upstream, ["hello", "what do I drink?", "and the cat?"])
    for body in bodies:
        assert persona_lines(chatting, body) == [SYSTEM]
    for earlier, later in itertools.pairwise(bodies):
        assert prefix(chatting, later) == prefix(chatting, earlier)


async def test_a_tune_puts_the_summary_in_the_prefix_which_stays_until_a_knob_changes(
    client: httpx.AsyncClient, upstream: RecordingUpstream, runtime: Runtime, clock: FixedClock, chatting: str
) -> None:
    before = await turns(client, upstream, ["hello"])
    await tune(client, "initiative", 0.05)
    tuned = await turns(client, upstream, ["hello", "what do I drink?", "and the cat?"])
    line = (
        "Your persona (how you speak, not something that happened): tsundere: medium; playful: medium; "
        "initiative: a little high; soft: medium; snark: medium; mood swings: medium"
    )
    assert persona_lines(chatting, tuned[0]) == [SYSTEM, line]
    assert prefix(chatting, tuned[0]) != prefix(chatting, before[0])
    for earlier, later in itertools.pairwise(tuned):
        assert prefix(chatting, later) == prefix(chatting, earlier)  # byte-identical while no knob moves
    if chatting == "openai":
        # Right after the client's own system message, before the conversation.
        assert [m["role"] for m in tuned[-1]["messages"][:3]] == ["system", "system", "user"]

    clock.advance(days=1)
    await tune(client, "initiative", 0.05)
    again = await turns(client, upstream, ["hello"])
    assert "initiative: rather high" in persona_lines(chatting, again[0])[1]

    reverted = await client.post("/v1/persona/revert", json={"reason": "as she was"}, headers=auth())
    assert reverted.status_code == 200
    after = await turns(client, upstream, ["hello"])
    assert prefix(chatting, after[0]) == prefix(chatting, before[0])


async def test_the_summary_follows_persona_language(
    client: httpx.AsyncClient, upstream: RecordingUpstream, runtime: Runtime, chatting: str
) -> None:
    runtime.settings = runtime.settings.model_copy(update={"PERSONA_LANGUAGE": "zh"})
    runtime.__dict__.pop("persona", None)
    runtime.__dict__.pop("gateway", None)
    await tune(client, "snark", -0.05)
    [body] = await turns(client, upstream, ["你好"])
    assert persona_lines(chatting, body)[1] == (
        "你的人格（用什么性格说话，不是发生过的事）：傲娇 中等；爱玩 中等；主动 中等；温柔 中等；毒舌 略低；情绪起伏 中等"
    )


async def test_the_guide_dog_never_carries_it(
    client: httpx.AsyncClient, upstream: RecordingUpstream, runtime: Runtime
) -> None:
    runtime.settings = runtime.settings.model_copy(
        update={"CHAT_BASE_URL": upstream.url + "/v1", "VISION_MODEL": "seer"}
    )
    runtime.router, runtime.http = outbound(runtime.settings)
    runtime.__dict__.pop("gateway", None)
    await tune(client, "playfulness", 0.05)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "look"}]
    response = await client.post(
        "/v1/guide-dog/chat/completions", json={"model": "companion", "messages": messages}, headers=auth()
    )
    assert response.status_code == 200, response.text
    assert upstream.requests[-1].json["messages"] == messages
