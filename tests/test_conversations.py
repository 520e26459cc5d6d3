"""What was said, as the owner reads and forgets it: the turns around a message
(conversation_get and GET /v1/conversations/messages/{id}), a day's conversations
(GET /v1/conversations?day=), and forgetting a turn, a conversation or a span of time
(REST and conversation_forget, the owner key only).

Episodes are written as the write side stores them (EpisodeStore.insert_if_new), on
SQLite, the D1 fake and real D1: the day's window queries run on each engine."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import httpx
import pytest

from companion_memory.domain.episode import Episode
from companion_memory.ports import VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.store.episodes import EpisodeStore
from tests.conftest import IM_KEY, MCP_KEY, OWNER_KEY, auth
from tests.test_mcp_scopes import mcp_call


def turn(
    id: str,
    at: str,
    content: str,
    *,
    conversation: str | None = "trip",
    role: str = "user",
    source: str = "ingest",
    namespace: str = "default",
) -> Episode:
    return Episode(
        id=id,
        namespace=namespace,
        conversation_id=conversation,
        role=role,
        source=source,
        content=content,
        created_at=at,
        stored_at=at,
    )


async def said(runtime: Runtime, episodes: Iterable[Episode]) -> None:
    await runtime.db.batch([EpisodeStore.insert_if_new(e) for e in episodes])


# Singapore (DREAM_TIME_ZONE): 2026-11-29 runs from 2026-11-28T16:00Z to 2026-11-29T16:00Z.
TRIP = [
    turn("t1", "2026-11-29T01:00:00.000Z", "\n  We land in Kyoto at noon.\nThen the train."),
    turn("t2", "2026-11-29T01:00:05.000Z", "Shall I book the ryokan?", role="assistant"),
    turn("t3", "2026-11-29T01:01:00.000Z", "Yes, the one by the river."),
    turn("t4", "2026-11-29T01:02:00.000Z", "Booked for two nights.", role="assistant"),
    turn("t5", "2026-11-29T01:03:00.000Z", "Thank you!"),
]
CHAT = [
    turn("c1", "2026-11-29T10:00:00.000Z", "早上好", conversation=None, source="chat"),
    turn(
        "c2", "2026-11-29T10:00:03.000Z", "早上好！今天想做什么？", conversation=None, source="chat", role="assistant"
    ),
    # Another source without a conversation is a stream of its own.
    turn("s1", "2026-11-29T10:00:01.000Z", "cron says hi", conversation=None, source="script"),
]


async def tool(client: httpx.AsyncClient, name: str, arguments: dict[str, Any], key: str = OWNER_KEY) -> Any:
    return (await mcp_call(client, key, name, arguments)).json()["result"]


async def test_the_turns_around_a_message_in_the_order_they_were_said(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await said(runtime, TRIP + CHAT)
    rest = await client.get("/v1/conversations/messages/t3", params={"before": 1, "after": 1}, headers=auth())
    assert rest.status_code == 200, rest.text
    answer = rest.json()
    assert [t["id"] for t in answer["turns"]] == ["t2", "t3", "t4"]
    assert answer["message_id"] == "t3" and answer["conversation_id"] == "trip"
    assert answer["turns"][0] == {
        "id": "t2",
        "namespace": "default",
        "conversation_id": "trip",
        "role": "assistant",
        "source": "ingest",
        "content": "Shall I book the ryokan?",
        "created_at": "2026-11-29T01:00:05.000Z",
        "day": "2026-11-29",
    }
    mcp = await tool(client, "conversation_get", {"message_id": "t3", "before": 1, "after": 1}, MCP_KEY)
    assert mcp["isError"] is False and mcp["structuredContent"] == answer
    everything = (await client.get("/v1/conversations/messages/t1", params={"after": 50}, headers=auth())).json()
    assert [t["id"] for t in everything["turns"]] == ["t1", "t2", "t3", "t4", "t5"]
    # The chat's turns, stored without a conversation, read as one chat; a script's apart.
    chat = (await client.get("/v1/conversations/messages/c1", headers=auth(IM_KEY))).json()
    assert [t["id"] for t in chat["turns"]] == ["c1", "c2"] and chat["conversation_id"] is None
    alone = (await client.get("/v1/conversations/messages/s1", headers=auth())).json()
    assert [t["id"] for t in alone["turns"]] == ["s1"]


async def test_a_missing_message_and_a_window_out_of_bounds_are_refused_alike(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/conversations/messages/nope", headers=auth())
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    result = await tool(client, "conversation_get", {"message_id": "nope"})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "not_found"
    wide = await client.get("/v1/conversations/messages/t1", params={"before": 51}, headers=auth())
    assert wide.status_code == 400 and "before" in wide.json()["error"]["message"]
    result = await tool(client, "conversation_get", {"message_id": "t1", "after": 51})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "invalid_arguments"


async def test_a_day_lists_its_conversations_with_their_first_line_and_counts(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    late = turn("t6", "2026-11-29T16:30:00.000Z", "Still awake in Kyoto")  # 00:30 on the 30th in Singapore
    older = turn("o1", "2026-11-20T03:00:00.000Z", "An older day", conversation="before")
    elsewhere = turn("e1", "2026-11-29T05:00:00.000Z", "Another namespace", namespace="bot")
    await said(runtime, [*TRIP, *CHAT, late, older, elsewhere])
    answer = (await client.get("/v1/conversations", params={"day": "2026-11-29"}, headers=auth())).json()
    assert answer["day"] == "2026-11-29"
    assert (answer["since"], answer["until"]) == ("2026-11-28T16:00:00.000Z", "2026-11-29T16:00:00.000Z")
    assert (answer["count"], answer["messages"]) == (3, 8)
    assert (answer["previous_day"], answer["next_day"]) == ("2026-11-20", "2026-11-30")
    assert [
        (c["conversation_id"], c["source"], c["first_message_id"], c["first_line"], c["messages"])
        for c in answer["conversations"]
    ] == [
        ("trip", "ingest", "t1", "We land in Kyoto at noon.", 5),
        (None, "chat", "c1", "早上好", 2),
        (None, "script", "s1", "cron says hi", 1),
    ]
    trip = answer["conversations"][0]
    assert (trip["first_at"], trip["last_at"], trip["first_role"]) == (TRIP[0].created_at, TRIP[-1].created_at, "user")
    first_only = (
        await client.get("/v1/conversations", params={"day": "2026-11-29", "limit": 1}, headers=auth())
    ).json()
    assert len(first_only["conversations"]) == 1 and (first_only["count"], first_only["messages"]) == (3, 8)
    # Today (the clock's 2026-11-30, 20:00 in Singapore) by default.
    today = (await client.get("/v1/conversations", headers=auth())).json()
    assert today["day"] == "2026-11-30" and [c["first_message_id"] for c in today["conversations"]] == ["t6"]
    assert (today["previous_day"], today["next_day"]) == ("2026-11-29", None)
    empty = (await client.get("/v1/conversations", params={"day": "2026-11-25"}, headers=auth())).json()
    assert (empty["conversations"], empty["count"], empty["messages"]) == ([], 0, 0)
    assert (empty["previous_day"], empty["next_day"]) == ("2026-11-20", "2026-11-29")


@pytest.mark.parametrize("day", ["2026-02-30", "yesterday", "0005-01-01"])
async def test_a_day_that_is_no_day_is_a_400(client: httpx.AsyncClient, day: str) -> None:
    response = await client.get("/v1/conversations", params={"day": day}, headers=auth())
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_time", response.text


def long_line() -> str:
    return "word " * 100


async def test_a_first_line_is_cut_to_a_line(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await said(runtime, [turn("l1", "2026-11-29T01:00:00.000Z", long_line())])
    answer = (await client.get("/v1/conversations", params={"day": "2026-11-29"}, headers=auth())).json()
    line = answer["conversations"][0]["first_line"]
    assert len(line) == 200 and line.endswith("…") and line.startswith("word word")


# ------------------------------------------------------------------------ forgetting


async def export(client: httpx.AsyncClient) -> list[str]:
    exported = (await client.get("/api/memories/export", params={"all": "true"}, headers=auth())).json()
    return sorted(m["id"] for m in exported["messages"])


async def remaining(runtime: Runtime) -> list[str]:
    return sorted(r["id"] for r in await runtime.db.all("SELECT id FROM episodes"))


async def test_the_owner_forgets_a_turn_its_vector_first(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await said(runtime, TRIP)
    await runtime.vectors.upsert([VectorRecord(e.id, unit_vector(runtime), {"kind": "episode"}) for e in TRIP])
    forgotten = await client.delete("/v1/conversations/messages/t2", headers=auth())
    assert forgotten.status_code == 200 and forgotten.json() == {"namespace": "default", "forgotten": 1}
    assert await remaining(runtime) == ["t1", "t3", "t4", "t5"]
    assert sorted(r.id for r in await runtime.vectors.get([e.id for e in TRIP])) == ["t1", "t3", "t4", "t5"]
    around = (await client.get("/v1/conversations/messages/t3", params={"before": 1}, headers=auth())).json()
    assert [t["id"] for t in around["turns"]][:2] == ["t1", "t3"]
    again = await client.delete("/v1/conversations/messages/t2", headers=auth())
    assert (again.status_code, again.json()["error"]["code"]) == (404, "not_found")
    result = await tool(client, "conversation_forget", {"message_id": "t4"})
    assert result["isError"] is False and result["structuredContent"] == {"namespace": "default", "forgotten": 1}
    assert await remaining(runtime) == ["t1", "t3", "t5"]


def unit_vector(runtime: Runtime) -> list[float]:
    return [1.0] + [0.0] * (runtime.vectors.dimensions - 1)


async def test_a_conversation_and_a_span_of_time_are_forgotten(client: httpx.AsyncClient, runtime: Runtime) -> None:
    other = turn("x1", "2026-11-29T01:00:30.000Z", "Another thread", conversation="other")
    await said(runtime, [*TRIP, *CHAT, other])
    gone = await client.delete("/v1/conversations/trip", headers=auth())
    assert gone.json() == {"namespace": "default", "forgotten": 5}
    assert await remaining(runtime) == ["c1", "c2", "s1", "x1"]
    unknown = await client.delete("/v1/conversations/trip", headers=auth())
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
    # The day's own bounds, as the day's listing gives them.
    day = (await client.get("/v1/conversations", params={"day": "2026-11-29"}, headers=auth())).json()
    span = {"since": day["since"], "until": day["until"], "conversation_id": "other"}
    assert (await client.post("/v1/conversations/forget", json=span, headers=auth())).json()["forgotten"] == 1
    assert await remaining(runtime) == ["c1", "c2", "s1"]
    result = await tool(client, "conversation_forget", {"since": day["since"], "until": day["until"]})
    assert result["structuredContent"] == {"namespace": "default", "forgotten": 3}
    assert await remaining(runtime) == [] and await export(client) == []
    nothing = await client.post(
        "/v1/conversations/forget", json={"since": day["since"], "until": day["until"]}, headers=auth()
    )
    assert nothing.status_code == 200 and nothing.json()["forgotten"] == 0


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"since": "2026-11-29T00:00:00Z"},
        {"until": "2026-11-29T00:00:00Z", "conversation_id": "trip"},
        {"since": "2026-11-29T00:00:00Z", "until": "2026-11-28T00:00:00Z"},
        {"since": "2026-11-29T08:00:00+08:00", "until": "2026-11-29T00:00:00Z"},
        {"message_id": "t1", "conversation_id": "trip"},
    ],
)
async def test_what_to_forget_is_said_one_way_on_both_surfaces(
    client: httpx.AsyncClient, runtime: Runtime, body: dict[str, Any]
) -> None:
    await said(runtime, TRIP)
    rest = await client.post("/v1/conversations/forget", json=body, headers=auth())
    assert (rest.status_code, rest.json()["error"]["code"]) == (400, "invalid_forget"), rest.text
    result = await tool(client, "conversation_forget", body)
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "invalid_forget"
    assert await remaining(runtime) == ["t1", "t2", "t3", "t4", "t5"]


@pytest.mark.parametrize("key", [MCP_KEY, IM_KEY])
async def test_only_the_owner_key_forgets(client: httpx.AsyncClient, runtime: Runtime, key: str) -> None:
    await said(runtime, TRIP)
    for method, path, body in [
        ("DELETE", "/v1/conversations/messages/t1", None),
        ("DELETE", "/v1/conversations/trip", None),
        ("POST", "/v1/conversations/forget", {"conversation_id": "trip"}),
    ]:
        refused = await client.request(method, path, json=body, headers=auth(key))
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden"), path
    result = await tool(client, "conversation_forget", {"conversation_id": "trip"}, key)
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "forbidden"
    assert await remaining(runtime) == ["t1", "t2", "t3", "t4", "t5"]


async def test_a_turn_being_forgotten_is_out_of_sight_at_once(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """Forgetting empties a turn's words before its vector and its row go (the vector may
    have to wait for the index): from then on it is not read back."""
    await said(runtime, TRIP)
    await runtime.db.run("UPDATE episodes SET content = '', search_text = '' WHERE id IN ('t1', 't3')")
    window = (await client.get("/v1/conversations/messages/t2", params={"before": 5}, headers=auth())).json()
    assert [t["id"] for t in window["turns"]] == ["t2", "t4", "t5"]
    gone = await client.get("/v1/conversations/messages/t3", headers=auth())
    assert gone.status_code == 404
    day = (await client.get("/v1/conversations", params={"day": "2026-11-29"}, headers=auth())).json()
    assert [(c["first_message_id"], c["messages"]) for c in day["conversations"]] == [("t2", 3)]
