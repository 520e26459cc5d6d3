"""Bad input gets a 4xx JSON error naming the problem, never a 500, and writes nothing."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import auth


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
