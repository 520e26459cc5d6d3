"""Long-chat folding: past the threshold the oldest turns become one summary that names
its fold, only at a user turn, the same summary every turn until the next fold (so the
Anthropic cached prefix stays byte-identical), tool outputs cut to head and tail, and the
originals read back word for word over REST and MCP, with the ids they are stored under."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx
import openai

from companion_memory.domain.chat_turn import turn_id
from companion_memory.domain.folding import TOOL_OUTPUT_HEAD_CHARS, TOOL_OUTPUT_TAIL_CHARS, trimmed
from companion_memory.runtime import Runtime
from tests.api.test_chat_gateway import rows, start
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import OWNER_KEY, auth
from tests.memory.test_plans import tool
from tests.upstreams import RecordingUpstream

SYSTEM = {"role": "system", "content": "You are Mei's companion."}
FOLD = {"CONTEXT_FOLD_THRESHOLD_TOKENS": 1000, "CONTEXT_FOLD_KEEP_TURNS": 2}


def conversation(turns: int, start: int = 0) -> list[dict[str, Any]]:
    """``turns`` user/assistant pairs of about 150 tokens each."""
    messages: list[dict[str, Any]] = []
    for n in range(start, start + turns):
        messages.append({"role": "user", "content": f"Turn {n}. Tell me about day {n} of the trip. " + "walk " * 100})
        messages.append({"role": "assistant", "content": f"Day {n} was lovely. We saw the harbour. " + "sea " * 100})
    return messages


def unmarked(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]} for m in messages
    ]


def folding(runtime: Runtime) -> Runtime:
    runtime.settings = runtime.settings.model_copy(update=FOLD)
    runtime.__dict__.pop("folding", None)
    return runtime


async def test_a_long_chat_folds_at_a_user_turn_and_keeps_the_same_fold_until_the_next(
    runtime: Runtime, client: httpx.AsyncClient
) -> None:
    folder = folding(runtime).folding
    short = [SYSTEM, *conversation(3)]
    assert (await folder.fold("default", short)).fold_id is None  # under the threshold: as it is

    chat = [SYSTEM, *conversation(8)]
    first = await folder.fold("default", chat)
    assert first.fold_id and first.folded == 12  # six turns folded, the last two kept
    assert first.messages[0] == SYSTEM and first.messages[1]["role"] == "system"
    assert f"fold_id {first.fold_id}" in first.messages[1]["content"] and "Turn 0." in first.messages[1]["content"]
    assert first.messages[2:] == chat[13:]
    assert first.messages[2]["role"] == "user"

    chat += conversation(1, start=8)
    again = await folder.fold("default", chat)
    assert again.fold_id == first.fold_id and again.messages[:3] == first.messages[:3]  # the same bytes

    chat += conversation(6, start=9)
    later = await folder.fold("default", chat)
    assert later.fold_id != first.fold_id and later.messages[-4:] == chat[-4:]

    for answer in (
        (await client.get(f"/v1/context/folds/{later.fold_id}", headers=auth())).json(),
        await tool(client, "context_expand", {"fold_id": later.fold_id}),
    ):
        assert answer["previous_id"] == first.fold_id and answer["summarizer"] == "extractive"
        assert answer["messages"] == chat[1 : answer["upto"]]  # every folded message, word for word
        assert answer["anchors"][:2] == [turn_id(chat[:2]), turn_id(chat[:2]) + ":reply"]
        assert len(answer["anchors"]) == answer["upto"] - 1

    missing = await client.get("/v1/context/folds/nope", headers=auth())
    assert missing.status_code == 404 and "fold nope" in missing.json()["error"]["message"]
    error = (await mcp_call(client, OWNER_KEY, "context_expand", {"fold_id": "nope"})).json()["result"]
    assert error["isError"] is True and "not found" in error["content"][0]["text"]


async def test_a_changed_system_prompt_is_a_new_conversation(runtime: Runtime) -> None:
    folder = folding(runtime).folding
    chat = [SYSTEM, *conversation(8)]
    first = await folder.fold("default", chat)
    other = await folder.fold("default", [{"role": "system", "content": "You are a pirate."}, *chat[1:]])
    assert other.fold_id not in (None, first.fold_id)


def test_tool_output_is_cut_to_head_and_tail() -> None:
    output = "".join(f"line {n}\n" for n in range(3000))
    cut = trimmed({"role": "tool", "tool_call_id": "c1", "content": output})
    assert cut["content"].startswith(output[:TOOL_OUTPUT_HEAD_CHARS])
    assert cut["content"].endswith(output[-TOOL_OUTPUT_TAIL_CHARS:])
    assert f"{len(output) - TOOL_OUTPUT_HEAD_CHARS - TOOL_OUTPUT_TAIL_CHARS} characters" in cut["content"]
    assert trimmed({"role": "user", "content": output}) == {"role": "user", "content": output}


async def test_the_dream_model_writes_the_summary(dreaming: Runtime, upstream: RecordingUpstream) -> None:
    upstream.reply_text = "They planned a week in Lisbon: harbour walks, the sea, a lovely time."
    folded = await folding(dreaming).folding.fold("default", [SYSTEM, *conversation(8)])
    assert folded.messages[1]["content"].endswith(upstream.reply_text)
    assert "Turn 0." in upstream.requests[-1].json["messages"][1]["content"]


def test_the_anthropic_cached_prefix_stays_the_same_between_folds(
    tmp_path: Path,
    embedder,
    upstream: RecordingUpstream,  # type: ignore[no-untyped-def]
) -> None:
    live = start(
        tmp_path,
        embedder,
        CHAT_MODEL="anthropic/claude-sonnet-4-5",
        AI_GATEWAY_BASE_URL=upstream.url,
        CONTEXT_FOLD_ENABLED=True,
        **FOLD,
    )
    try:
        sdk = openai.OpenAI(base_url=live.url + "/v1", api_key=OWNER_KEY, max_retries=0)
        history: list[Any] = [SYSTEM]
        bodies = []
        for n in range(12):
            history.append(conversation(1, start=n)[0])
            upstream.reply_text = f"Day {n} was lovely. We saw the harbour. " + "sea " * 100
            answer = sdk.chat.completions.create(model="companion", messages=history)
            history.append({"role": "assistant", "content": answer.choices[0].message.content})
            bodies.append(upstream.requests[-1].json)
        folds = [b["system"][1]["text"] if len(b["system"]) > 1 else None for b in bodies]
        assert folds[0] is None and folds[-1] is not None
        changes = [n for n, (a, b) in enumerate(itertools.pairwise(folds), start=1) if a != b]
        assert 2 <= len(changes) < 8  # it folds now and then, not every turn
        for n, (earlier, later) in enumerate(itertools.pairwise(bodies), start=1):
            if n in changes:
                continue
            # Between folds each request starts with the one before it, byte for byte (the
            # breakpoints aside, which move with the turn).
            assert later["system"] == earlier["system"]
            kept = unmarked(earlier["messages"][:-1])
            assert unmarked(later["messages"])[: len(kept)] == kept
        for body in bodies:
            assert body["messages"][0]["role"] == "user"
            assert sum("cache_control" in str(block) for block in body["system"]) <= 1
        # What is stored is what the client sent, folded or not.
        stored = httpx.get(f"{live.url}/v1/memory_boot", headers=auth()).json()["today_messages"]
        assert any(m["content"].startswith("Turn 0.") for m in stored)
    finally:
        live.stop()


def test_a_fold_keeps_no_private_span(tmp_path: Path, embedder, upstream: RecordingUpstream) -> None:  # type: ignore[no-untyped-def]
    live = start(tmp_path, embedder, CHAT_BASE_URL=upstream.url + "/v1", CONTEXT_FOLD_ENABLED=True, **FOLD)
    try:
        chat = [SYSTEM, *conversation(8)]
        chat[1] = {**chat[1], "content": "Turn 0. <private>My code is quokkaberry.</private> " + "walk " * 100}
        chat[-2] = {**chat[-2], "content": "Turn 7. <private>Keep this: zebrafinch.</private> Tell me more."}
        sdk = openai.OpenAI(base_url=live.url + "/v1", api_key=OWNER_KEY, max_retries=0)
        sdk.chat.completions.create(model="companion", messages=chat[:-1])
        sent = str(upstream.requests[-1].json["messages"])
        # The model hears the turn it answers, private span and all; the folded turns it
        # reads as their summary, which was made without the span.
        assert "fold_id" in sent and "zebrafinch" in sent and "quokkaberry" not in sent
        folds = rows(live, "SELECT summary, messages FROM context_folds")
        assert folds and "Turn 0." in str(folds)
        stored = rows(live, "SELECT content FROM messages")
        assert "quokkaberry" not in str(folds + stored) and "zebrafinch" not in str(folds + stored)
    finally:
        live.stop()
