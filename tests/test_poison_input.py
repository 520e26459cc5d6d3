"""Poison input: values that cannot be read back are refused when written, rows that
were stored before that cannot break a reader, and odd input is a 400 that names it."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from companion_memory.domain.json_value import MAX_DEPTH, json_problem
from companion_memory.runtime import Runtime
from tests.conftest import OWNER_KEY, auth


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


async def post_raw(client: httpx.AsyncClient, url: str, body: str) -> httpx.Response:
    return await client.post(url, content=body.encode("utf-8"), headers={**auth(), "content-type": "application/json"})


def message(metadata: object) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": "hello", "metadata": metadata}]}


async def import_(client: httpx.AsyncClient, **tables: list[dict[str, object]]) -> httpx.Response:
    """POST an export document holding ``tables`` to the import."""
    document = {"format": "companion-memory-export", "version": 1, **tables}
    return await client.post("/api/memories/import", json=document, headers=auth())


async def error(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    return response.json()["error"]["message"]


# -- refused when written ---------------------------------------------------------------


async def test_deep_message_metadata_is_refused_and_nothing_is_stored(client: httpx.AsyncClient) -> None:
    for depth in (MAX_DEPTH + 1, 300):
        text = await error(await client.post("/v1/ingest/messages", json=message(nested(depth)), headers=auth()))
        assert "deeper than" in text
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert exported["messages"] == []
    fine = await client.post("/v1/ingest/messages", json=message(nested(MAX_DEPTH - 1)), headers=auth())
    assert fine.status_code == 200 and fine.json()["stored"] == 1


@pytest.mark.parametrize(
    "raw, named",
    [
        (f'{{"value": {json.dumps(nested(256))}}}', "deeper than"),
        ('{"value": "\\ud800"}', "surrogate"),
        ('{"value": {"\\udfff": 1}}', "surrogate"),
        ('{"value": NaN}', "NaN"),
        ('{"value": [1, Infinity]}', "Infinity"),
        ('{"value": -Infinity}', "Infinity"),
    ],
)
async def test_cache_values_that_cannot_be_read_back_are_a_400(client: httpx.AsyncClient, raw: str, named: str) -> None:
    response = await client.put(
        "/v1/cache/default/k", content=raw.encode(), headers={**auth(), "content-type": "application/json"}
    )
    assert named in await error(response)
    assert (await client.get("/v1/cache/default/k", headers=auth())).status_code == 404


async def test_nan_in_message_metadata_is_a_400_not_a_silent_null(client: httpx.AsyncClient) -> None:
    raw = '{"messages": [{"role": "user", "content": "hi", "metadata": {"score": NaN}}]}'
    assert "NaN" in await error(await post_raw(client, "/v1/ingest/messages", raw))


async def test_a_lone_surrogate_anywhere_in_a_body_is_a_400(client: httpx.AsyncClient) -> None:
    raw = '{"content": "bad \\udc00 text", "fact_key": "user.bad"}'
    assert "surrogate" in await error(await post_raw(client, "/v1/memories", raw))


async def test_a_body_nested_past_any_bound_is_a_400(client: httpx.AsyncClient) -> None:
    raw = '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert "deeper than" in await error(await post_raw(client, "/v1/memories", raw))


def test_json_problem_names_each_kind_of_unreadable_value() -> None:
    assert json_problem({"a": [1, 2.5, None, True, "x"]}) is None
    assert "deeper than 64" in (json_problem(nested(65)) or "")
    assert json_problem(nested(64)) is None
    assert "surrogate" in (json_problem(["ok", "\ud800"]) or "")
    assert "not finite" in (json_problem({"x": float("nan")}) or "")
    assert "not a JSON value" in (json_problem({"x": object()}) or "")
    assert json_problem(nested(100_000)) is not None  # judged without recursion


async def test_the_json_written_by_services_is_checked_too(runtime: Runtime) -> None:
    """Writers that are not HTTP requests (MCP, the CLI's import) go through the same check."""
    from companion_memory.errors import InvalidInput
    from companion_memory.memory.ingest import IncomingMessage

    with pytest.raises(InvalidInput, match="metadata"):
        await runtime.ingestor.ingest(
            "default", [IncomingMessage(role="user", content="x", metadata={"n": float("inf")})]
        )


# -- rows stored before the check --------------------------------------------------------


async def store_poison_message(runtime: Runtime, namespace: str = "default") -> None:
    """A row as an older version could store it: metadata nested 300 deep."""
    await runtime.db.run(
        "INSERT INTO messages (id, namespace, conversation_id, role, content, client_hash, source, model, metadata, "
        "created_at, stored_at) VALUES ('poison', ?, NULL, 'user', 'x', 'h-poison', 'ingest', NULL, ?, "
        "'2026-11-30T10:00:00.000Z', '2026-11-30T10:00:00.000Z')",
        (namespace, json.dumps(nested(300))),
    )


async def test_export_skips_and_reports_a_poison_row(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await client.post("/v1/ingest/messages", json=message({"fine": True}), headers=auth())
    await store_poison_message(runtime)
    for params in ({}, {"all": "true"}):
        response = await client.get("/api/memories/export", params=params, headers=auth())
        assert response.status_code == 200
        document = response.json()
        assert [m["metadata"] for m in document["messages"]] == [{"fine": True}]
        assert [(s["table"], s["id"]) for s in document["skipped"]] == [("messages", "poison")]
        assert "deeper than" in document["skipped"][0]["problem"]
    # The export, skipped rows and all, imports back.
    imported = await client.post("/api/memories/import", json=document, headers=auth())
    assert imported.status_code == 200 and imported.json()["imported"]["messages"] == 1


async def test_a_cache_entry_stored_unreadable_is_reported_not_a_500(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await runtime.db.run(
        "INSERT INTO cache_entries (namespace, key, value, expires_at, created_at, updated_at) VALUES "
        "('default', 'old', ?, NULL, '2026-11-30T10:00:00.000Z', '2026-11-30T10:00:00.000Z')",
        (json.dumps(nested(256)),),
    )
    text = await error(await client.get("/v1/cache/default/old", headers=auth()), 409)
    assert "PUT" in text and "DELETE" in text
    assert (await client.delete("/v1/cache/default/old", headers=auth())).status_code == 200


async def test_an_import_with_unstorable_values_is_refused_whole(client: httpx.AsyncClient) -> None:
    row = {
        "id": "m1",
        "namespace": "default",
        "role": "user",
        "content": "x",
        "client_hash": "h",
        "source": "import",
        "metadata": nested(MAX_DEPTH + 1),
        "created_at": "2026-11-30T10:00:00.000Z",
        "stored_at": "2026-11-30T10:00:00.000Z",
    }
    assert "messages[0]" in await error(await import_(client, messages=[row]))


# -- smaller 500s --------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["/v1/memories", "/v1/precious", "/v1/candidates"])
@pytest.mark.parametrize("payload", [["\ud800", "x"], ["x", "\udfff"], "[" * 5000])
async def test_a_crafted_cursor_is_a_400(client: httpx.AsyncClient, route: str, payload: object) -> None:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    cursor = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
    assert "cursor" in await error(await client.get(route, params={"cursor": cursor}, headers=auth()))


@pytest.mark.parametrize("day", ["0001-01-01", "9999-12-31"])
async def test_dreaming_a_day_at_the_calendar_edge_is_a_400(client: httpx.AsyncClient, day: str) -> None:
    assert day in await error(await client.post("/v1/dream/run", json={"date": day}, headers=auth()))


# -- authentication comes first ----------------------------------------------------------


async def test_no_key_is_a_401_before_the_body_is_read(client: httpx.AsyncClient) -> None:
    for url in ("/v1/memories", "/v1/ingest/messages", "/api/memories/import"):
        response = await client.post(url, content=b"{not json", headers={"content-type": "application/json"})
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    response = await client.post("/v1/memories", content=b"{not json", headers={"Authorization": "Bearer wrong"})
    assert await error(response, 401) == "unknown API key"
    assert (await client.get("/v1/models")).status_code == 401
    assert (await client.get("/health")).status_code == 200


# -- input hygiene -----------------------------------------------------------------------


@pytest.mark.parametrize("invisible", ["\u200b", "\u200d", "\u2066", "\u202e", "\ufeff", "\u00ad", "\u200e"])
async def test_fact_keys_that_differ_only_by_invisible_characters_are_one_key(
    client: httpx.AsyncClient, invisible: str
) -> None:
    first = await client.post(
        "/v1/memories", json={"fact_key": "user.coffee", "content": "Likes flat whites"}, headers=auth()
    )
    second = await client.post(
        "/v1/memories", json={"fact_key": f"user{invisible}.coffee", "content": "Likes oat flat whites"}, headers=auth()
    )
    assert first.status_code == 201 and second.status_code == 200
    assert second.json()["memory"]["id"] == first.json()["memory"]["id"]
    assert second.json()["memory"]["fact_key"] == "user.coffee"


async def test_a_fact_key_of_invisible_characters_only_is_missing(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/memories", json={"fact_key": "\u200b\u2066", "content": "x"}, headers=auth())
    assert "fact_key is required" in await error(response)


async def test_composed_and_decomposed_fact_keys_are_one_key(client: httpx.AsyncClient) -> None:
    first = await client.post("/v1/memories", json={"fact_key": "user.caf\u00e9", "content": "Café A"}, headers=auth())
    second = await client.post(
        "/v1/memories", json={"fact_key": "user.cafe\u0301", "content": "Café B"}, headers=auth()
    )
    assert second.status_code == 200 and second.json()["memory"]["id"] == first.json()["memory"]["id"]


async def test_an_unknown_type_is_stored_as_note_and_the_answer_says_so(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/memories", json={"fact_key": "user.x", "content": "x", "type": "wish"}, headers=auth()
    )
    assert response.status_code == 201
    assert response.json()["memory"]["type"] == "note"
    assert response.json()["notes"] == ["unknown type 'wish' stored as 'note'"]


async def test_rest_and_mcp_store_an_unknown_type_alike(client: httpx.AsyncClient) -> None:
    from tests.test_mcp_scopes import mcp_call

    rest = await client.post(
        "/v1/memories", json={"fact_key": "user.a", "content": "a", "type": "wish"}, headers=auth()
    )
    tool = (
        await mcp_call(client, OWNER_KEY, "memory_upsert", {"fact_key": "user.b", "content": "b", "type": "wish"})
    ).json()
    answer = tool["result"]["structuredContent"]
    assert not tool["result"]["isError"]
    assert answer["memory"]["type"] == rest.json()["memory"]["type"] == "note"
    assert answer["notes"] == rest.json()["notes"]


# -- found by the schemathesis fuzz ------------------------------------------------------


async def test_an_imported_row_with_a_structure_in_a_plain_column_is_a_400(client: httpx.AsyncClient) -> None:
    row = {"id": "m1", "namespace": "default", "created_at": "2026-01-01T00:00:00Z", "stored_at": {}}
    assert "messages[0].stored_at" in await error(await import_(client, messages=[row]))


async def test_an_imported_row_that_leaves_out_defaulted_columns_takes_the_defaults(client: httpx.AsyncClient) -> None:
    row = {
        "id": "c1",
        "namespace": "default",
        "kind": "add",
        "type": "fact",
        "content": "Likes tea",
        "created_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z",
    }
    response = await import_(client, memory_candidates=[row])
    assert response.status_code == 200 and response.json() == {
        "imported": {**{t: 0 for t in response.json()["imported"]}, "memory_candidates": 1},
        "refused": {},
    }


async def test_reactivating_a_memory_whose_key_is_taken_is_a_409(client: httpx.AsyncClient) -> None:
    first = (await client.post("/v1/memories", json={"fact_key": "e", "content": "e1"}, headers=auth())).json()[
        "memory"
    ]
    await client.post(f"/v1/memories/{first['id']}/archive", headers=auth())
    await client.post("/v1/memories", json={"fact_key": "e", "content": "e2"}, headers=auth())
    response = await client.patch(f"/v1/memories/{first['id']}", json={"status": "active"}, headers=auth())
    assert "already belongs" in await error(response, 409)
    other = (await client.post("/v1/memories", json={"fact_key": "f", "content": "f1"}, headers=auth())).json()[
        "memory"
    ]
    await client.post(f"/v1/memories/{other['id']}/archive", headers=auth())
    response = await client.patch(
        f"/v1/memories/{other['id']}", json={"status": "active", "fact_key": "e"}, headers=auth()
    )
    assert response.status_code == 409
    assert (
        await client.patch(f"/v1/memories/{other['id']}", json={"status": "active"}, headers=auth())
    ).status_code == 200


async def test_superseding_onto_a_key_another_memory_holds_is_a_409(client: httpx.AsyncClient) -> None:
    await client.post("/v1/memories", json={"fact_key": "a", "content": "A"}, headers=auth())
    b = (await client.post("/v1/memories", json={"fact_key": "b", "content": "B"}, headers=auth())).json()["memory"]
    response = await client.post(
        f"/v1/memories/{b['id']}/supersede", json={"fact_key": "a", "content": "x"}, headers=auth()
    )
    assert response.json()["error"]["code"] == "fact_key_taken" and response.status_code == 409
    again = await client.post(
        f"/v1/memories/{b['id']}/supersede", json={"fact_key": "b", "content": "B2"}, headers=auth()
    )
    assert again.status_code == 201


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
async def test_a_message_time_utc_cannot_hold_is_a_400(client: httpx.AsyncClient, stamp: str) -> None:
    body = {"conversation_id": "c", "messages": [{"role": "user", "content": "x", "created_at": stamp}]}
    assert "created_at" in await error(await client.post("/v1/ingest/messages", json=body, headers=auth()))
