"""What a stored message is (issue 28, item 11): a retry is stored once, the same words said
again later are kept. Over HTTP, on SQLite, the fake D1 and the real D1 engine."""

from __future__ import annotations

from typing import Any

import httpx

from companion_memory.runtime import Runtime
from tests.conftest import IM_KEY, auth
from tests.upstreams import RecordingUpstream


async def ingest(client: httpx.AsyncClient, messages: list[dict[str, Any]], conversation: str = "c1") -> Any:
    answer = await client.post(
        "/v1/ingest/messages", json={"conversation_id": conversation, "messages": messages}, headers=auth(IM_KEY)
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


async def contents(runtime: Runtime) -> list[str]:
    rows = await runtime.db.all("SELECT content FROM messages ORDER BY stored_at, created_at, rowid")
    return [r["content"] for r in rows]


async def test_a_retried_batch_is_stored_once_and_the_same_words_later_are_kept(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    batch = [
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "Shall I book it?"},
        {"role": "user", "content": "ok"},  # said twice in one batch: two messages
    ]
    first = await ingest(client, batch)
    assert (first["stored"], first["duplicates"]) == (3, 0)
    runtime.clock.advance(minutes=2)  # type: ignore[attr-defined]
    retry = await ingest(client, batch)
    assert (retry["stored"], retry["duplicates"]) == (0, 3)
    assert [m["id"] for m in retry["messages"]] == [m["id"] for m in first["messages"]]

    runtime.clock.advance(hours=1)  # type: ignore[attr-defined]
    later = await ingest(client, [{"role": "user", "content": "ok"}])
    assert later["stored"] == 1 and later["messages"][0]["id"] not in {m["id"] for m in first["messages"]}
    runtime.clock.advance(minutes=1)  # type: ignore[attr-defined]
    retried_later = await ingest(client, [{"role": "user", "content": "ok"}])
    assert retried_later["messages"][0] == {"id": later["messages"][0]["id"], "duplicate": True}
    assert await contents(runtime) == ["ok", "Shall I book it?", "ok", "ok"]
    # Another conversation's "ok" is its own, retry window or not.
    assert (await ingest(client, [{"role": "user", "content": "ok"}], conversation="c2"))["stored"] == 1


async def test_a_message_with_an_id_or_a_time_is_the_same_message_for_good(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Clients that resend what they sent before (the Claude Code hook after a --resume, a
    script replaying its history with timestamps) store nothing twice, however late."""
    history = [
        {"role": "user", "content": "ok", "id": "turn-1"},
        {"role": "user", "content": "ok", "created_at": "2026-11-30T11:00:00Z"},
    ]
    assert (await ingest(client, history))["stored"] == 2
    runtime.clock.advance(days=2)  # type: ignore[attr-defined]
    again = await ingest(client, [*history, {"role": "user", "content": "ok", "created_at": "2026-12-02T11:00:00Z"}])
    assert (again["stored"], again["duplicates"]) == (1, 2)
    assert await contents(runtime) == ["ok", "ok", "ok"]


async def test_the_gateway_keeps_a_new_chat_opened_with_the_same_words(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    """Chatbox's turn is known by the conversation as sent: a retry is stored once, the
    same first words in tomorrow's new chat are a new turn."""
    turn = {"model": "companion", "messages": [{"role": "user", "content": "good morning"}]}
    for reply in ("Good morning!", "Morning to you too!"):  # the retry answered otherwise: its first answer stays
        upstream.reply_text = reply
        assert (await client.post("/v1/chat/completions", json=turn, headers=auth())).status_code == 200
    assert await contents(dreaming) == ["good morning", "Good morning!"]
    dreaming.clock.advance(days=1)  # type: ignore[attr-defined]
    upstream.reply_text = "Morning! Slept well?"
    assert (await client.post("/v1/chat/completions", json=turn, headers=auth())).status_code == 200
    assert await contents(dreaming) == ["good morning", "Good morning!", "good morning", "Morning! Slept well?"]
