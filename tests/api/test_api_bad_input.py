"""Bad input gets a 4xx JSON error naming the problem, never a 500, and writes nothing."""

from __future__ import annotations

import contextlib
import json
import typing
from collections.abc import Iterator

import httpx
import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import MCP_KEY, auth


async def count_memories(client: httpx.AsyncClient) -> int:
    return (await client.get("/v1/memories", params={"status": "all", "limit": 200}, headers=auth())).json()["count"]


async def test_malformed_json(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/memories", content=b'{"content": "x", ', headers={**auth(), "content-type": "application/json"}
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body, named",
    [
        ([1, 2, 3], "JSON object"),
        ({"content": 42, "fact_key": "k"}, "content"),
        ({"content": "x", "fact_key": "k", "importance": "very"}, "importance"),
        ({"content": "x", "fact_key": "k", "importance": 7}, "importance"),
        ({"content": "x", "fact_key": "k", "tags": "not-a-list"}, "tags"),
        ({"content": "x", "fact_key": "k", "namespace": "bad namespace!"}, "namespace"),
        ({"content": "x", "fact_key": "k", "namespace": "n" * 65}, "namespace"),
        ({"content": "x" * 20_001, "fact_key": "k"}, "content"),
        ({"content": "x", "fact_key": "k" * 201}, "fact_key"),
        ({"content": "x", "fact_key": "k", "type": "t" * 101}, "type"),
        ({"content": "x", "fact_key": "k", "tags": ["t" * 65]}, "tags"),
        ({"content": "x", "fact_key": "k", "evidence": [{"quote": ""}]}, "evidence"),
        ({"fact_key": "k"}, "content"),
    ],
)
async def test_wrong_types_and_oversized_fields(client: httpx.AsyncClient, body: object, named: str) -> None:
    response = await client.post("/v1/memories", json=body, headers=auth())
    assert response.status_code == 400, response.text
    assert named in response.json()["error"]["message"]
    assert await count_memories(client) == 0


async def test_body_over_one_megabyte_is_413(client: httpx.AsyncClient) -> None:
    big = {"messages": [{"role": "user", "content": "x" * 150_000}] * 8}
    response = await client.post("/v1/ingest/messages", json=big, headers=auth())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


async def test_chunked_body_over_the_limit_is_413(client: httpx.AsyncClient) -> None:
    async def chunks():  # no Content-Length: the server has to count
        for _ in range(20):
            yield b"x" * 100_000

    response = await client.post(
        "/v1/memories", content=chunks(), headers={**auth(), "content-type": "application/json"}
    )
    assert response.status_code == 413


async def test_sql_metacharacters_are_stored_literally(client: httpx.AsyncClient) -> None:
    nasty = "Robert'); DROP TABLE memories;-- \" OR 1=1 /* 百分之%_ */"
    created = await client.post(
        "/v1/memories", json={"content": nasty, "fact_key": nasty[:100], "tags": [nasty[:60]]}, headers=auth()
    )
    assert created.status_code == 201
    memory = created.json()["memory"]
    got = (await client.get(f"/v1/memories/{memory['id']}", headers=auth())).json()["memory"]
    assert got["content"] == nasty and got["fact_key"] == nasty[:100].strip()
    assert (await client.get("/v1/memories", params={"type": "note"}, headers=auth())).json()["count"] == 1
    weird_id = await client.get("/v1/memories/' OR '1'='1", headers=auth())
    assert weird_id.status_code == 404


async def test_query_parameters_are_checked(client: httpx.AsyncClient) -> None:
    for params, named in (
        ({"limit": 0}, "limit"),
        ({"limit": 10_000}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"cursor": "garbage"}, "cursor"),
        ({"type": "wibble"}, "wibble"),
        ({"status": "gone"}, "gone"),
        ({"namespace": "a b"}, "namespace"),
    ):
        response = await client.get("/v1/memories", params=params, headers=auth())
        assert response.status_code == 400, (params, response.text)
        assert named in response.json()["error"]["message"]


async def test_unknown_route_and_method(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/nothing-here", headers=auth())
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    wrong_method = await client.put("/v1/memories", headers=auth())
    assert wrong_method.status_code == 405 and "error" in wrong_method.json()


async def test_very_long_strings_in_every_ingest_field(client: httpx.AsyncClient) -> None:
    long = "长" * 5000
    for message in (
        {"role": "user", "content": "hi", "id": long},
        {"role": "user", "content": "hi", "created_at": long},
        {"role": "user", "content": "hi", "model": long},
        {"role": long, "content": "hi"},
    ):
        response = await client.post("/v1/ingest/messages", json={"messages": [message]}, headers=auth())
        assert response.status_code == 400, response.text
    response = await client.post(
        "/v1/ingest/messages",
        json={"messages": [{"role": "user", "content": "hi"}], "conversation_id": long},
        headers=auth(),
    )
    assert response.status_code == 400
    bad_time = await client.post(
        "/v1/ingest/messages",
        json={"messages": [{"role": "user", "content": "hi", "created_at": "yesterday"}]},
        headers=auth(),
    )
    assert bad_time.status_code == 400 and "created_at" in bad_time.json()["error"]["message"]


async def test_json_sent_the_way_curl_d_sends_it(client: httpx.AsyncClient) -> None:
    body = b'{"content": "likes tea", "fact_key": "drink"}'
    for content_type in ("application/x-www-form-urlencoded", None):
        headers = {**auth(), **({"content-type": content_type} if content_type else {})}
        response = await client.post("/v1/memories", content=body, headers=headers)
        assert response.status_code in (200, 201), response.text
    form = await client.post("/v1/memories", data={"content": "x", "fact_key": "k"}, headers=auth())
    assert form.status_code == 400 and "not valid JSON" in form.json()["error"]["message"]


async def test_browsers_on_other_origins_may_call_the_api_with_a_key(client: httpx.AsyncClient) -> None:
    origin = {"Origin": "https://panel.example"}
    preflight = await client.options(
        "/v1/memories",
        headers={
            **origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == "*"
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    listed = await client.get("/v1/memories", headers={**origin, **auth()})
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == "*"
    refused = await client.get("/v1/memories", headers=origin)  # still no way in without the key
    assert refused.status_code == 401


# -- times: one reader for every writer ------------------------------------------------


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/v1/memories", {"fact_key": "p", "type": "plan", "content": "a plan", "valid_to": "{time}"}, "valid_to"),
        ("/v1/memories", {"fact_key": "p", "type": "plan", "content": "a plan", "valid_to": "{day}"}, "valid_to"),
        ("/v1/moods", {"label": "happy", "felt_at": "{time}"}, "felt_at"),
        ("/v1/ingest/messages", {"messages": [{"role": "user", "content": "x", "created_at": "{time}"}]}, "created_at"),
        ("/v1/todos", {"text": "call the bank", "due": "{day}"}, "due"),
        ("/v1/dream/run", {"date": "{day}"}, "date"),
    ],
)
@pytest.mark.parametrize(
    "time, day",
    [
        ("0005-01-01T00:00:00Z", "0005-01-01"),  # a year below 1000 (once stored as "5-01-01T…")
        ("1899-12-31T23:59:59Z", "1899-12-31"),
        ("1900-01-01T07:00:00+08:00", "2026-02-30"),  # 1899 in UTC; a day the calendar lacks
        ("garbage", "soon"),
    ],
)
async def test_a_time_outside_the_form_or_range_kept_is_a_400_naming_the_field(
    client: httpx.AsyncClient, path: str, body: dict[str, object], field: str, time: str, day: str
) -> None:
    sent = json.loads(json.dumps(body).replace("{time}", time).replace("{day}", day))
    response = await client.post(path, json=sent, headers=auth())
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_time" and field in error["message"], error
    exported = (await client.get("/api/memories/export", params={"all": "true"}, headers=auth())).json()
    assert all(exported[table] == [] for table in ("memories", "moods", "messages", "todos"))


async def test_a_plan_ending_in_year_5_is_refused_for_the_mcp_key(client: httpx.AsyncClient) -> None:
    """The issue's repro: with the MCP key this was stored as "5-01-01T00:00:00.000Z", and
    plans, boot, recall and search of the namespace answered 500 from then on."""
    body = {"namespace": "r1", "fact_key": "p", "type": "plan", "content": "a plan", "valid_to": "0005-01-01T00:00:00Z"}
    response = await client.post("/v1/memories", json=body, headers=auth(MCP_KEY))
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_time"
    assert response.json()["error"]["message"].startswith("valid_to: '0005-01-01T00:00:00Z' is outside")
    plans = await client.get("/v1/plans", params={"namespace": "r1"}, headers=auth(MCP_KEY))
    assert plans.status_code == 200 and plans.json()["count"] == 0


@pytest.mark.parametrize(
    "tool, arguments, field",
    [
        ("memory_upsert", {"fact_key": "p", "type": "plan", "content": "a plan", "valid_to": "0005-01-01"}, "valid_to"),
        ("mood_log", {"label": "happy", "felt_at": "0005-01-01T00:00:00Z"}, "felt_at"),
        ("todo_add", {"text": "call the bank", "due": "0005-01-01"}, "due"),
        ("memory_ingest", {"messages": [{"role": "user", "content": "x", "created_at": "5-01-01"}]}, "created_at"),
    ],
)
async def test_mcp_refuses_the_same_times_with_the_same_code(
    client: httpx.AsyncClient, tool: str, arguments: dict[str, object], field: str
) -> None:
    answer = (await mcp_call(client, MCP_KEY, tool, arguments)).json()["result"]
    assert answer["isError"] is True
    error = answer["structuredContent"]["error"]
    assert error["code"] == "invalid_time" and field in error["message"], error


async def test_times_are_stored_in_one_form(client: httpx.AsyncClient) -> None:
    mood = await client.post(
        "/v1/moods", json={"label": "calm", "felt_at": "2026-11-30T20:00:00+08:00"}, headers=auth()
    )
    assert mood.json()["mood"]["felt_at"] == "2026-11-30T12:00:00.000Z"
    plan = await client.post(
        "/v1/memories",
        json={"fact_key": "p", "type": "plan", "content": "a plan", "valid_to": "1900-01-01T00:00:00Z"},
        headers=auth(),
    )
    assert plan.status_code == 201 and plan.json()["memory"]["valid_to"] == "1900-01-01T00:00:00.000Z"
    message = {"role": "user", "content": "x", "created_at": "9999-12-31T23:59:59.999999Z"}
    assert (await client.post("/v1/ingest/messages", json={"messages": [message]}, headers=auth())).status_code == 200
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert exported["messages"][0]["created_at"] == "9999-12-31T23:59:59.999Z"


ARBITRARY = ConfigDict(arbitrary_types_allowed=True)


def test_every_time_and_integer_an_input_takes_is_bounded() -> None:
    """Each input model's time fields (named *_at, valid_to, due, date) go through the one
    reader, and each integer has an upper bound a stored integer can hold."""
    import companion_memory.application.tasks  # noqa: F401  # the Worker's queue use case, registered on import
    from companion_memory.api.mcp.tools import TOOLS
    from companion_memory.application.use_case import USE_CASES
    from companion_memory.domain.counts import MAX_COUNT

    def fields(model: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[tuple[str, FieldInfo]]:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            yield f"{model.__name__}.{name}", info
            for part in (info.annotation, *typing.get_args(info.annotation)):
                for inner in typing.get_args(part) or (part,):
                    if isinstance(inner, type) and issubclass(inner, BaseModel):
                        yield from fields(inner, seen)

    models = [case.input for case in USE_CASES.values()] + [tool.arguments for tool in TOOLS.values()]
    seen: set[type[BaseModel]] = set()
    unbounded, unread = [], []
    for model in models:
        for name, info in fields(model, seen):
            field = name.split(".")[-1]
            adapter: TypeAdapter[object] = TypeAdapter(info.rebuild_annotation(), config=ARBITRARY)
            if field.endswith("_at") or field in ("valid_to", "due", "date"):
                for value in ("0005-01-01T00:00:00Z", "0005-01-01"):
                    with contextlib.suppress(ValidationError):
                        adapter.validate_python(value)
                        unread.append(name)
            if "int" in str(info.annotation) and "bool" not in str(info.annotation):
                with contextlib.suppress(ValidationError):
                    adapter.validate_python(MAX_COUNT + 1)
                    unbounded.append(name)
    assert (unread, unbounded) == ([], [])
