"""conversation_search (MCP) and POST /v1/conversations/search: what was said, in Letta's
shape, the same on both surfaces."""

from __future__ import annotations

from typing import Any

import httpx

from companion_memory.runtime import Runtime
from tests.api.test_surface_parity import refusal, rest_refusal, tool
from tests.conftest import auth
from tests.episodes import said


async def search(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/v1/conversations/search", json=body, headers=auth())
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def seed(runtime: Runtime) -> dict[str, str]:
    turns = {
        "early": ("user", "c1", "2026-11-02T03:00:00.000Z", "We watched the lanterns at Gardens by the Bay"),
        "reply": ("assistant", "c1", "2026-11-02T03:01:00.000Z", "The lanterns at the Bay must have been lovely"),
        # 17:30 UTC on the 9th is the 10th in DREAM_TIME_ZONE (Asia/Singapore).
        "late": ("user", "c2", "2026-11-09T17:30:00.000Z", "More lanterns tonight, at the river"),
        "other": ("user", "c2", "2026-11-09T17:31:00.000Z", "The noodles there were too salty"),
    }
    return {
        name: (await said(runtime, text, role=role, conversation_id=c, at=at)).id
        for name, (role, c, at, text) in turns.items()
    }


async def test_turns_match_by_words_and_meaning_and_say_when(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await seed(runtime)
    answer = await search(client, query="lanterns")
    assert {t["id"] for t in answer["turns"]} == {ids["early"], ids["reply"], ids["late"]}
    late = next(t for t in answer["turns"] if t["id"] == ids["late"])
    assert late == {
        "id": ids["late"],
        "namespace": "default",
        "conversation_id": "c2",
        "role": "user",
        "speaker": None,
        "source": "ingest",
        "content": "More lanterns tonight, at the river",
        "created_at": "2026-11-09T17:30:00.000Z",
        "day": "2026-11-10",
    }
    assert [t["id"] for t in (await search(client, query="lanterns", limit=1))["turns"]] == [answer["turns"][0]["id"]]


async def test_roles_dates_and_a_conversation_narrow_it(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await seed(runtime)

    async def found(**filters: Any) -> set[str]:
        return {t["id"] for t in (await search(client, query="lanterns", **filters))["turns"]}

    assert await found(roles=["assistant"]) == {ids["reply"]}
    assert await found(roles=["user"]) == {ids["early"], ids["late"]}
    assert await found(conversation_id="c1") == {ids["early"], ids["reply"]}
    # A day is a whole day in DREAM_TIME_ZONE; a time is exact.
    assert await found(start_date="2026-11-10") == {ids["late"]}
    assert await found(end_date="2026-11-09") == {ids["early"], ids["reply"]}
    assert await found(start_date="2026-11-02T03:00:30Z", end_date="2026-11-09T17:30:00Z") == {ids["reply"]}


async def test_both_surfaces_answer_alike_and_refuse_alike(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await seed(runtime)
    body = {"query": "lanterns", "roles": ["user"], "start_date": "2026-11-01"}
    assert await tool(client, "conversation_search", body) == await search(client, **body)
    # A time that is none is invalid_time on both; any other mistake each surface's own code.
    for bad, codes in (
        ({"query": "x", "start_date": "yesterday"}, ("invalid_time", "invalid_time")),
        ({"query": "x", "end_date": "2026-02-30"}, ("invalid_time", "invalid_time")),
        ({"query": ""}, ("invalid_request", "invalid_arguments")),
        ({"query": "x", "roles": ["narrator"]}, ("invalid_request", "invalid_arguments")),
        ({"query": "x", "limit": 0}, ("invalid_request", "invalid_arguments")),
    ):
        rest = await client.post("/v1/conversations/search", json=bad, headers=auth())
        assert (rest_refusal(rest)[1], await refusal(client, "conversation_search", bad)) == codes
        assert rest.status_code == 400


async def test_nothing_is_counted_as_recalled(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await seed(runtime)
    await search(client, query="lanterns")
    hits = (await client.post("/v1/memory/search", json={"query": "lanterns", "k": 5}, headers=auth())).json()["hits"]
    assert {h["id"] for h in hits} >= {ids["early"]} and all(h["recall_count"] == 0 for h in hits)


async def test_a_namespace_sees_its_own_turns(client: httpx.AsyncClient, runtime: Runtime) -> None:
    work = await said(runtime, "lanterns in the work channel", namespace="work")
    mine = await said(runtime, "lanterns at home")
    assert [t["id"] for t in (await search(client, query="lanterns"))["turns"]] == [mine.id]
    assert [t["id"] for t in (await search(client, query="lanterns", namespace="work"))["turns"]] == [work.id]
