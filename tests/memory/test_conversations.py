"""What was said, as the owner reads and forgets it: the turns around a message
(conversation_get and GET /v1/conversations/messages/{id}), a day's conversations
(GET /v1/conversations?day=), and forgetting a turn, a conversation or a span of time
(REST and conversation_forget, the owner key only).

The turns are sent through /v1/ingest/messages with the times they were said, as a client
sends them, on SQLite, the D1 fake and real D1: the day's window queries run on each engine."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import IM_KEY, MCP_KEY, OWNER_KEY, auth


@dataclass(frozen=True)
class Turn:
    label: str
    at: str
    content: str
    conversation: str | None = "trip"
    role: str = "user"
    source: str = "ingest"
    namespace: str = "default"


class Said(dict[str, str]):
    """Each turn's label → the id it was stored under; ``labels`` reads ids back."""

    def labels(self, turns: Iterable[dict[str, Any]]) -> list[str]:
        back = {stored: label for label, stored in self.items()}
        return [back.get(t["id"], t["id"]) for t in turns]


async def said(client: httpx.AsyncClient, turns: Iterable[Turn]) -> Said:
    """Each conversation's turns (and each source's, without one) in one request."""
    groups: dict[tuple[str, str | None, str], list[Turn]] = {}
    for turn in turns:
        groups.setdefault((turn.namespace, turn.conversation, turn.source), []).append(turn)
    ids = Said()
    for (namespace, conversation, source), group in groups.items():
        body: dict[str, Any] = {
            "namespace": namespace,
            "source": source,
            "messages": [{"role": t.role, "content": t.content, "created_at": t.at} for t in group],
        }
        if conversation is not None:
            body["conversation_id"] = conversation
        stored = await client.post("/v1/ingest/messages", json=body, headers=auth())
        assert stored.status_code == 200, stored.text
        ids.update(zip([t.label for t in group], [m["id"] for m in stored.json()["messages"]], strict=True))
    return ids


# Singapore (DREAM_TIME_ZONE): 2026-11-29 runs from 2026-11-28T16:00Z to 2026-11-29T16:00Z.
TRIP = [
    Turn("t1", "2026-11-29T01:00:00.000Z", "\n  We land in Kyoto at noon.\nThen the train."),
    Turn("t2", "2026-11-29T01:00:05.000Z", "Shall I book the ryokan?", role="assistant"),
    Turn("t3", "2026-11-29T01:01:00.000Z", "Yes, the one by the river."),
    Turn("t4", "2026-11-29T01:02:00.000Z", "Booked for two nights.", role="assistant"),
    Turn("t5", "2026-11-29T01:03:00.000Z", "Thank you!"),
]
CHAT = [
    Turn("c1", "2026-11-29T10:00:00.000Z", "早上好", conversation=None, source="chat"),
    Turn(
        "c2", "2026-11-29T10:00:03.000Z", "早上好！今天想做什么？", conversation=None, source="chat", role="assistant"
    ),
    # Another source without a conversation is a stream of its own.
    Turn("s1", "2026-11-29T10:00:01.000Z", "cron says hi", conversation=None, source="script"),
]


async def tool(client: httpx.AsyncClient, name: str, arguments: dict[str, Any], key: str = OWNER_KEY) -> Any:
    return (await mcp_call(client, key, name, arguments)).json()["result"]


async def window(client: httpx.AsyncClient, message_id: str, key: str = OWNER_KEY, **reach: int) -> dict[str, Any]:
    response = await client.get(f"/v1/conversations/messages/{message_id}", params=reach, headers=auth(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def test_the_turns_around_a_message_in_the_order_they_were_said(client: httpx.AsyncClient) -> None:
    ids = await said(client, TRIP + CHAT)
    answer = await window(client, ids["t3"], before=1, after=1)
    assert ids.labels(answer["turns"]) == ["t2", "t3", "t4"]
    assert answer["message_id"] == ids["t3"] and answer["conversation_id"] == "trip"
    assert answer["turns"][0] == {
        "id": ids["t2"],
        "namespace": "default",
        "conversation_id": "trip",
        "role": "assistant",
        "speaker": None,
        "source": "ingest",
        "content": "Shall I book the ryokan?",
        "created_at": "2026-11-29T01:00:05.000Z",
        "day": "2026-11-29",
    }
    mcp = await tool(client, "conversation_get", {"message_id": ids["t3"], "before": 1, "after": 1}, MCP_KEY)
    assert mcp["isError"] is False and mcp["structuredContent"] == answer
    everything = await window(client, ids["t1"], after=50)
    assert ids.labels(everything["turns"]) == ["t1", "t2", "t3", "t4", "t5"]
    # The chat's turns, stored without a conversation, read as one chat; a script's apart.
    chat = await window(client, ids["c1"], IM_KEY)
    assert ids.labels(chat["turns"]) == ["c1", "c2"] and chat["conversation_id"] is None
    assert ids.labels((await window(client, ids["s1"]))["turns"]) == ["s1"]


async def test_turns_sent_without_a_time_read_back_in_the_order_sent(client: httpx.AsyncClient) -> None:
    words = [f"turn {n} of the story" for n in range(12)]
    messages = [{"role": ("user", "assistant")[n % 2], "content": w} for n, w in enumerate(words)]
    stored = await client.post(
        "/v1/ingest/messages", json={"conversation_id": "undated", "messages": messages}, headers=auth()
    )
    assert stored.status_code == 200, stored.text
    first = stored.json()["messages"][0]["id"]
    assert [t["content"] for t in (await window(client, first, after=50))["turns"]] == words


async def test_a_turn_reads_back_as_stored_for_recall(client: httpx.AsyncClient) -> None:
    """What conversation_get shows is the episode: a secret masked, a private span never kept."""
    ids = await said(
        client,
        [
            Turn("w", "2026-11-29T02:00:00.000Z", "the wifi password: hunter22! <private>and my diary</private>"),
            Turn("p", "2026-11-29T02:00:01.000Z", "<private>all of it</private>"),
        ],
    )
    for key in (OWNER_KEY, MCP_KEY):
        shown = await window(client, ids["w"], key, after=5)
        assert [t["content"] for t in shown["turns"]] == ["the wifi password: [credential]"]
    # Nothing of the private message was kept to read back; its empty row is forgotten all the same.
    gone = await client.get(f"/v1/conversations/messages/{ids['p']}", headers=auth())
    assert gone.status_code == 404
    forgotten = await client.delete(f"/v1/conversations/messages/{ids['p']}", headers=auth())
    assert forgotten.json() == {"namespace": "default", "forgotten": 1}
    assert (await client.delete(f"/v1/conversations/messages/{ids['p']}", headers=auth())).status_code == 404


async def test_a_missing_message_and_a_window_out_of_bounds_are_refused_alike(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/conversations/messages/nope", headers=auth())
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "not_found")
    result = await tool(client, "conversation_get", {"message_id": "nope"})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "not_found"
    wide = await client.get("/v1/conversations/messages/t1", params={"before": 51}, headers=auth())
    assert wide.status_code == 400 and "before" in wide.json()["error"]["message"]
    result = await tool(client, "conversation_get", {"message_id": "t1", "after": 51})
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "invalid_arguments"


async def day(client: httpx.AsyncClient, date: str | None = None, **params: Any) -> dict[str, Any]:
    response = await client.get(
        "/v1/conversations", params={**({"day": date} if date else {}), **params}, headers=auth()
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def test_a_day_lists_its_conversations_with_their_first_line_and_counts(client: httpx.AsyncClient) -> None:
    late = Turn("t6", "2026-11-29T16:30:00.000Z", "Still awake in Kyoto")  # 00:30 on the 30th in Singapore
    older = Turn("o1", "2026-11-20T03:00:00.000Z", "An older day", conversation="before")
    elsewhere = Turn("e1", "2026-11-29T05:00:00.000Z", "Another namespace", namespace="bot")
    ids = await said(client, [*TRIP, *CHAT, late, older, elsewhere])
    answer = await day(client, "2026-11-29")
    assert answer["day"] == "2026-11-29"
    assert (answer["since"], answer["until"]) == ("2026-11-28T16:00:00.000Z", "2026-11-29T16:00:00.000Z")
    assert (answer["count"], answer["messages"]) == (3, 8)
    assert (answer["previous_day"], answer["next_day"]) == ("2026-11-20", "2026-11-30")
    assert [
        (
            c["conversation_id"],
            c["source"],
            ids.labels([{"id": c["first_message_id"]}])[0],
            c["first_line"],
            c["messages"],
        )
        for c in answer["conversations"]
    ] == [
        ("trip", "ingest", "t1", "We land in Kyoto at noon.", 5),
        (None, "chat", "c1", "早上好", 2),
        (None, "script", "s1", "cron says hi", 1),
    ]
    trip = answer["conversations"][0]
    assert (trip["first_at"], trip["last_at"], trip["first_role"]) == (TRIP[0].at, TRIP[-1].at, "user")
    first_only = await day(client, "2026-11-29", limit=1)
    assert len(first_only["conversations"]) == 1 and (first_only["count"], first_only["messages"]) == (3, 8)
    # Today (the clock's 2026-11-30, 20:00 in Singapore) by default.
    today = await day(client)
    assert today["day"] == "2026-11-30" and [c["first_message_id"] for c in today["conversations"]] == [ids["t6"]]
    assert (today["previous_day"], today["next_day"]) == ("2026-11-29", None)
    empty = await day(client, "2026-11-25")
    assert (empty["conversations"], empty["count"], empty["messages"]) == ([], 0, 0)
    assert (empty["previous_day"], empty["next_day"]) == ("2026-11-20", "2026-11-29")
    assert (await day(client, "2026-11-29", namespace="bot"))["messages"] == 1


@pytest.mark.parametrize("date", ["2026-02-30", "yesterday", "0005-01-01"])
async def test_a_day_that_is_no_day_is_a_400(client: httpx.AsyncClient, date: str) -> None:
    response = await client.get("/v1/conversations", params={"day": date}, headers=auth())
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_time", response.text


async def test_a_first_line_is_cut_to_a_line(client: httpx.AsyncClient) -> None:
    await said(client, [Turn("l1", "2026-11-29T01:00:00.000Z", "word " * 100)])
    line = (await day(client, "2026-11-29"))["conversations"][0]["first_line"]
    assert len(line) == 200 and line.endswith("…") and line.startswith("word word")


# ------------------------------------------------------------------------ forgetting


async def remaining(runtime: Runtime) -> list[str]:
    return sorted(r["id"] for r in await runtime.db.all("SELECT id FROM episodes"))


async def messages(runtime: Runtime) -> list[str]:
    return sorted(r["id"] for r in await runtime.db.all("SELECT id FROM messages"))


def stored(ids: Said, *labels: str) -> list[str]:
    return sorted(ids[label] for label in labels)


async def test_the_owner_forgets_a_turn_its_vector_first(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await said(client, TRIP)
    await runtime.mirror.drain()
    assert len(await runtime.vectors.get(list(ids.values()))) == 5
    forgotten = await client.delete(f"/v1/conversations/messages/{ids['t2']}", headers=auth())
    assert forgotten.status_code == 200 and forgotten.json() == {"namespace": "default", "forgotten": 1}
    assert await remaining(runtime) == await messages(runtime) == stored(ids, "t1", "t3", "t4", "t5")
    assert sorted(r.id for r in await runtime.vectors.get(list(ids.values()))) == stored(ids, "t1", "t3", "t4", "t5")
    assert ids.labels((await window(client, ids["t3"], before=1))["turns"])[:2] == ["t1", "t3"]
    again = await client.delete(f"/v1/conversations/messages/{ids['t2']}", headers=auth())
    assert (again.status_code, again.json()["error"]["code"]) == (404, "not_found")
    result = await tool(client, "conversation_forget", {"message_id": ids["t4"]})
    assert result["isError"] is False and result["structuredContent"] == {"namespace": "default", "forgotten": 1}
    assert await remaining(runtime) == stored(ids, "t1", "t3", "t5")


async def test_a_turn_forgotten_while_the_index_is_down_is_out_of_sight_at_once(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """The words go at once; the vector, then the row, when the index is back."""
    ids = await said(client, TRIP)
    await runtime.mirror.drain()
    runtime.vectors.down = True  # type: ignore[attr-defined]
    forgotten = await client.delete(f"/v1/conversations/messages/{ids['t3']}", headers=auth())
    assert forgotten.json()["forgotten"] == 1
    assert ids.labels((await window(client, ids["t2"], before=5))["turns"]) == ["t1", "t2", "t4", "t5"]
    assert (await client.get(f"/v1/conversations/messages/{ids['t3']}", headers=auth())).status_code == 404
    listed = (await day(client, "2026-11-29"))["conversations"]
    assert [c["messages"] for c in listed] == [4]
    runtime.vectors.down = False  # type: ignore[attr-defined]
    runtime.clock.advance(minutes=1)  # type: ignore[attr-defined]
    await runtime.mirror.drain()
    assert await runtime.vectors.get([ids["t3"]]) == [] and ids["t3"] not in await remaining(runtime)


async def test_a_conversation_and_a_span_of_time_are_forgotten(client: httpx.AsyncClient, runtime: Runtime) -> None:
    other = Turn("x1", "2026-11-29T01:00:30.000Z", "Another thread", conversation="other")
    ids = await said(client, [*TRIP, *CHAT, other])
    gone = await client.delete("/v1/conversations/trip", headers=auth())
    assert gone.json() == {"namespace": "default", "forgotten": 5}
    assert await remaining(runtime) == stored(ids, "c1", "c2", "s1", "x1")
    unknown = await client.delete("/v1/conversations/trip", headers=auth())
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not_found")
    # The day's own bounds, as the day's listing gives them.
    bounds = await day(client, "2026-11-29")
    span = {"since": bounds["since"], "until": bounds["until"], "conversation_id": "other"}
    assert (await client.post("/v1/conversations/forget", json=span, headers=auth())).json()["forgotten"] == 1
    assert await remaining(runtime) == stored(ids, "c1", "c2", "s1")
    result = await tool(client, "conversation_forget", {"since": bounds["since"], "until": bounds["until"]})
    assert result["structuredContent"] == {"namespace": "default", "forgotten": 3}
    assert await remaining(runtime) == await messages(runtime) == []
    again = {"since": bounds["since"], "until": bounds["until"]}
    nothing = await client.post("/v1/conversations/forget", json=again, headers=auth())
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
    ids = await said(client, TRIP)
    rest = await client.post("/v1/conversations/forget", json=body, headers=auth())
    assert (rest.status_code, rest.json()["error"]["code"]) == (400, "invalid_forget"), rest.text
    result = await tool(client, "conversation_forget", body)
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "invalid_forget"
    assert await remaining(runtime) == sorted(ids.values())


@pytest.mark.parametrize("key", [MCP_KEY, IM_KEY])
async def test_only_the_owner_key_forgets(client: httpx.AsyncClient, runtime: Runtime, key: str) -> None:
    ids = await said(client, TRIP)
    for method, path, body in [
        ("DELETE", f"/v1/conversations/messages/{ids['t1']}", None),
        ("DELETE", "/v1/conversations/trip", None),
        ("POST", "/v1/conversations/forget", {"conversation_id": "trip"}),
    ]:
        refused = await client.request(method, path, json=body, headers=auth(key))
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden"), path
    result = await tool(client, "conversation_forget", {"conversation_id": "trip"}, key)
    assert result["isError"] and result["structuredContent"]["error"]["code"] == "forbidden"
    assert await remaining(runtime) == sorted(ids.values())
