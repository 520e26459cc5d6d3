"""Poison input: values that cannot be read back are refused when written, rows that
were stored before that cannot break a reader, and odd input is a 400 that names it."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.application import dream
from companion_memory.application.principal import SYSTEM
from companion_memory.clock import FixedClock, iso
from companion_memory.domain.counts import MAX_COUNT
from companion_memory.domain.json_value import MAX_DEPTH, json_problem
from companion_memory.hosts import cli
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations
from companion_memory.ports import ChatUsage, Database, Statement
from companion_memory.runtime import Runtime
from companion_memory.store.stored_values import TABLES as STORED_TABLES
from companion_memory.store.stored_values import StoredColumn, StoredTable, problem_sql, row_problem
from companion_memory.store.usage import UsageStore
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import DEBUG_KEY, OWNER_KEY, auth


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
    from tests.api.test_mcp_scopes import mcp_call

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


# -- times and counts stored before they were checked -----------------------------------


def test_a_stored_time_always_has_four_year_digits() -> None:
    assert iso(datetime(5, 1, 1, tzinfo=UTC)) == "0005-01-01T00:00:00.000Z"  # %Y wrote "5-01-01T…"


async def poison_namespace(client: httpx.AsyncClient, runtime: Runtime) -> dict[str, str]:
    """Rows of namespace r1 as older versions could store them, beside sound ones: a plan
    ending "5-01-01T00:00:00.000Z" (what %Y made of year 5), a mood felt then, a person
    familiar since "garbage" and a memory seen 2^63 - 1 times. Their ids by what they are."""

    async def created(path: str, body: dict[str, object], key: str) -> str:
        response = await client.post(path, json={"namespace": "r1", **body}, headers=auth())
        assert response.status_code in (200, 201), response.text
        return str(response.json()[key]["id"])

    plan = {"type": "plan", "content": "a plan to go to the seaside", "valid_to": "2026-12-06"}
    ids = {
        "bad_plan": await created("/v1/memories", {"fact_key": "plan.bad", **plan}, "memory"),
        "plan": await created("/v1/memories", {**plan, "fact_key": "plan.good", "content": "a plan to read"}, "memory"),
        "seen": await created("/v1/memories", {"fact_key": "tea", "content": "Likes jasmine tea"}, "memory"),
        "bad_mood": await created("/v1/moods", {"whose": "companion", "label": "sad"}, "mood"),
        "mood": await created("/v1/moods", {"whose": "owner", "label": "calm"}, "mood"),
        "person": await created("/v1/people", {"name": "Ana"}, "person"),
    }
    for sql, id_ in (
        ("UPDATE memories SET valid_to = '5-01-01T00:00:00.000Z' WHERE id = ?", ids["bad_plan"]),
        ("UPDATE memories SET seen_count = 9223372036854775807 WHERE id = ?", ids["seen"]),
        ("UPDATE moods SET felt_at = '5-01-01T00:00:00.000Z' WHERE id = ?", ids["bad_mood"]),
        ("UPDATE people SET familiarity_at = 'garbage' WHERE id = ?", ids["person"]),
    ):
        assert (await runtime.db.run(sql, (id_,))).changes == 1
    return ids


async def tool_result(client: httpx.AsyncClient, name: str, arguments: dict[str, object]) -> dict[str, Any]:
    result: dict[str, Any] = (await mcp_call(client, OWNER_KEY, name, arguments)).json()["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]


async def test_a_namespace_with_unreadable_times_and_counts_still_answers(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    """Every read of r1 answered 500 (MCP: internal_error) once such a row was stored."""
    ids = await poison_namespace(client, runtime)
    r1 = {"namespace": "r1"}
    for method, path, params in [
        ("GET", "/v1/plans", r1),
        ("GET", "/v1/memory_boot", r1),
        ("GET", "/v1/moods", r1),
        ("GET", "/v1/todos", r1),
        ("GET", "/v1/candidates", r1),
        ("GET", "/v1/people", r1),
        ("GET", "/v1/memories", r1),
        ("GET", "/v1/admin/graph", r1),
        ("GET", "/v1/admin/starmap", {**r1, "format": "svg"}),
        ("GET", "/v1/admin/diary", r1),
        ("GET", "/v1/todos/stats", r1),
        ("GET", f"/v1/memories/{ids['bad_plan']}", {}),  # still there to open and edit
        ("GET", f"/v1/people/{ids['person']}", {}),
        ("POST", "/v1/memory/recall", {**r1, "query": "a plan to read, jasmine tea, Ana"}),
        ("POST", "/v1/memory/search", {**r1, "query": "plan"}),
    ]:
        kwargs = {"json": params} if method == "POST" else {"params": params}
        response = await client.request(method, path, headers=auth(), **kwargs)  # type: ignore[arg-type]
        assert response.status_code == 200, (path, response.text)

    plans = (await client.get("/v1/plans", params=r1, headers=auth())).json()["plans"]
    assert [p["id"] for p in plans] == [ids["plan"]]
    boot = (await client.get("/v1/memory_boot", params=r1, headers=auth())).json()
    assert [p["id"] for p in boot["plans"]] == [ids["plan"]]
    # "5-01-01T…" sorts after every real time: it was today's mood, and the newest.
    assert boot["moods"]["today"]["companion"] is None and boot["moods"]["today"]["owner"]["id"] == ids["mood"]
    recalled = (await client.post("/v1/memory/recall", json={**r1, "query": "a plan to read"}, headers=auth())).json()
    assert ids["plan"] in [h["id"] for h in recalled["hits"]]
    for name, arguments in [
        ("memory_boot", r1),
        ("memory_recall", {**r1, "query": "a plan to read"}),
        ("plan_list", r1),
        ("mood_recent", r1),
        ("person_list", r1),
    ]:
        await tool_result(client, name, arguments)
    assert [p["id"] for p in (await tool_result(client, "plan_list", r1))["plans"]] == [ids["plan"]]
    # The nightly job runs over them too (its people step failed on the familiarity).
    night = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger(trigger="test"))
    assert [step.name for step in night.steps if not step.ok] == []
    # Opened by its id, such a row is the owner's to correct.
    edited = await client.patch(f"/v1/memories/{ids['bad_plan']}", json={"valid_to": "2026-12-10"}, headers=auth())
    assert edited.status_code == 200 and edited.json()["memory"]["valid_to"] == "2026-12-10"
    plans = (await client.get("/v1/plans", params=r1, headers=auth())).json()["plans"]
    assert [p["id"] for p in plans] == [ids["plan"], ids["bad_plan"]]
    renamed = await client.patch(
        f"/v1/people/{ids['person']}", json={"namespace": "r1", "name": "Ana", "relation": "sister"}, headers=auth()
    )
    assert renamed.status_code == 200, renamed.text


async def test_the_health_report_finds_unreadable_values_and_the_repair_rewrites_them(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    ids = await poison_namespace(client, runtime)
    report = (await client.get("/v1/health/report", headers=auth(DEBUG_KEY))).json()
    check = next(c for c in report["checks"] if c["name"] == "unreadable_values")
    assert check["status"] == "warn" and check["value"] == 4, check
    assert check["detail"]["tables"] == {"memories": 2, "moods": 1, "people": 1}
    assert sorted((r["table"], r["id"], r["column"]) for r in check["detail"]["rows"]) == sorted(
        [
            ("memories", ids["bad_plan"], "valid_to"),
            ("memories", ids["seen"], "seen_count"),
            ("moods", ids["bad_mood"], "felt_at"),
            ("people", ids["person"], "familiarity_at"),
        ]
    )

    repaired = (await client.post("/v1/health/repair", json={"backup": False}, headers=auth())).json()
    done = {a["name"]: a["count"] for a in repaired["actions"]}
    assert done["rewrite_unreadable_values"] == 4 and done["expire_plans"] == 1
    after = next(c for c in repaired["report"]["checks"] if c["name"] == "unreadable_values")
    assert after["status"] == "ok" and after["value"] == 0
    plan = await runtime.db.first("SELECT valid_to, plan_status FROM memories WHERE id = ?", (ids["bad_plan"],))
    assert plan == {"valid_to": "1900-01-01T00:00:00.000Z", "plan_status": "expired"}  # year 5, clamped: long over
    seen = await runtime.db.first("SELECT seen_count FROM memories WHERE id = ?", (ids["seen"],))
    assert seen == {"seen_count": MAX_COUNT}
    person = await runtime.db.first("SELECT familiarity_at, created_at FROM people WHERE id = ?", (ids["person"],))
    assert person is not None and person["familiarity_at"] == person["created_at"]  # unreadable: when she was added
    mood = await runtime.db.first("SELECT felt_at FROM moods WHERE id = ?", (ids["bad_mood"],))
    assert mood == {"felt_at": "1900-01-01T00:00:00.000Z"}

    # Retention compares times as text: the mood, readable now, is as old as it says.
    assert (await runtime.retention.run(force=True))["moods"] == 1
    assert await runtime.db.first("SELECT id FROM moods WHERE id = ?", (ids["bad_mood"],)) is None
    done_plans = (await client.get("/v1/plans", params={"namespace": "r1", "status": "expired"}, headers=auth())).json()
    assert [p["id"] for p in done_plans["plans"]] == [ids["bad_plan"]]


async def test_export_leaves_out_a_row_with_an_unreadable_time_and_imports_back(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    ids = await poison_namespace(client, runtime)
    document = (await client.get("/api/memories/export", params={"namespace": "r1"}, headers=auth())).json()
    assert sorted((s["table"], s["id"]) for s in document["skipped"]) == sorted(
        [
            ("memories", ids["bad_plan"]),
            ("memories", ids["seen"]),
            ("moods", ids["bad_mood"]),
            ("people", ids["person"]),
        ]
    )
    assert next(s for s in document["skipped"] if s["id"] == ids["bad_plan"])["problem"].startswith("valid_to ")
    imported = await client.post("/api/memories/import", json=document, headers=auth())
    assert imported.status_code == 200, imported.text


@pytest.mark.parametrize(
    "table, row, field, code",
    [
        ("people", {"name": "Ana", "familiarity_at": "garbage"}, "people[0].familiarity_at", "invalid_time"),
        ("memories", {"type": "note", "content": "x", "seen_count": 2**63}, "memories[0].seen_count", "invalid_count"),
        (
            "memories",
            {"type": "plan", "content": "x", "valid_to": "5-01-01T00:00:00.000Z"},
            "memories[0].valid_to",
            "invalid_time",
        ),
        (
            "moods",
            {"whose": "owner", "label": "sad", "felt_at": "0005-01-01T00:00:00Z"},
            "moods[0].felt_at",
            "invalid_time",
        ),
        ("todos", {"text": "x", "due": "0005-01-01"}, "todos[0].due", "invalid_time"),
        ("daily_log", {"date": "2026-11-30", "message_count": -1}, "daily_log[0].message_count", "invalid_count"),
        (
            "memory_candidates",
            {"content": "x", "importance": 2**63},
            "memory_candidates[0].importance",
            "invalid_count",
        ),
        (
            "messages",
            {"role": "user", "content": "x", "client_hash": "h", "stored_at": "soon"},
            "stored_at",
            "invalid_time",
        ),
    ],
)
async def test_an_import_with_a_time_or_count_that_cannot_be_stored_is_refused_naming_it(
    client: httpx.AsyncClient, table: str, row: dict[str, object], field: str, code: str
) -> None:
    stamp = "2026-11-30T10:00:00.000Z"
    full = {"id": "r1", "namespace": "default", "created_at": stamp, "updated_at": stamp, **row}
    response = await import_(client, **{table: [full]})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == code and field in await error(response)
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert exported[table] == []


async def test_an_import_stores_its_times_in_the_one_form(client: httpx.AsyncClient) -> None:
    stamp = "2026-11-30T20:00:00+08:00"
    row = {"id": "m1", "namespace": "default", "role": "user", "content": "x", "client_hash": "h"}
    response = await import_(client, messages=[{**row, "created_at": stamp, "stored_at": "2026-11-30T12:00:00Z"}])
    assert response.status_code == 200, response.text
    exported = (await client.get("/api/memories/export", headers=auth())).json()["messages"][0]
    assert (exported["created_at"], exported["stored_at"]) == ("2026-11-30T12:00:00.000Z",) * 2


async def test_a_providers_token_count_is_kept_within_the_bound(db: Database) -> None:
    """A provider answering usage of 2^63 tokens failed the write (sqlite3 overflows; D1
    refuses the BigInt Pyodide makes of it)."""
    usage = ChatUsage(input_tokens=2**63, output_tokens=3)
    await UsageStore(db).add("default", "m", "p", usage, 12, "2026-11-30T10:00:00.000Z")
    row = await db.first("SELECT input_tokens, output_tokens FROM usage_logs")
    assert row == {"input_tokens": MAX_COUNT, "output_tokens": 3}


def test_a_dream_date_outside_the_range_kept_is_refused_by_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["dream", "--date", "0005-01-01"])
    assert stopped.value.code == 2 and "'0005-01-01' is outside the days kept" in capsys.readouterr().err


# Values on both sides of every rule: shape, range, calendar, clock, type.
STORED_VALUES: dict[str, list[object]] = {
    "time": [
        "2026-11-30T12:00:00.000Z",
        "1900-01-01T00:00:00.000Z",
        "9999-12-31T23:59:59.999Z",
        "2024-02-29T00:00:00.000Z",
        "2000-02-29T23:59:59.999Z",
        "5-01-01T00:00:00.000Z",
        "0005-01-01T00:00:00.000Z",
        "1899-12-31T23:59:59.999Z",
        "2026-02-29T00:00:00.000Z",
        "1900-02-29T00:00:00.000Z",
        "2026-04-31T00:00:00.000Z",
        "2026-13-01T00:00:00.000Z",
        "2026-00-10T00:00:00.000Z",
        "2026-01-00T00:00:00.000Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T23:60:00.000Z",
        "2026-01-01T23:59:60.000Z",
        "2026-11-30T12:00:00Z",
        "2026-11-30T12:00:00.000z",
        "2026-11-30T12:00:00.000+00:00",
        "٢٠٢٦-11-30T12:00:00.000Z",
        "2026-11-30 12:00:00.000Z",
        "garbage",
        "",
        5,
        2.5,
    ],
    "day": [
        "2026-11-30",
        "1900-01-01",
        "9999-12-31",
        "2024-02-29",
        "2026-02-29",
        "1899-12-31",
        "5-01-01",
        "0005-01-01",
        "2026-11-30T00:00:00.000Z",
        "2026-1-301",
        20261130,
    ],
    "count": [0, 1, MAX_COUNT, MAX_COUNT + 1, -1, 2**53 - 2, 1.5, "3", 2.0],
    "flag": [0, 1, 2, -1, 0.5, "1"],
}


@pytest.mark.parametrize("kind", ["time", "day", "plan_end", "count", "flag"])
async def test_the_health_report_and_the_readers_agree_on_what_is_unreadable(db: Database, kind: str) -> None:
    """problem_sql (the report, the repair) and row_problem (every listing) judge alike,
    on each engine: a row one of them skips, the other names."""
    values = STORED_VALUES["time"] + STORED_VALUES["day"] if kind == "plan_end" else STORED_VALUES[kind]
    # Declared as the real columns are: a number bound on D1 arrives as a REAL, which only
    # an INTEGER column's affinity stores as an integer.
    declared = "INTEGER" if kind in ("count", "flag") else "TEXT"
    await db.run(f"CREATE TABLE kept_values (id INTEGER PRIMARY KEY, required {declared}, optional {declared})")
    await db.batch([Statement("INSERT INTO kept_values (required, optional) VALUES (?, ?)", (v, v)) for v in values])
    await db.run("INSERT INTO kept_values (required, optional) VALUES (NULL, NULL)")
    table = StoredTable("kept_values", (StoredColumn("required", kind), StoredColumn("optional", kind, False)))
    for column in table.columns:
        alone = StoredTable(table.name, (column,))
        in_sql = {r["id"] for r in await db.all(f"SELECT id FROM kept_values WHERE {problem_sql(alone)}")}
        rows = await db.all(f"SELECT id, {column.name} FROM kept_values")
        in_python = {r["id"] for r in rows if row_problem(alone, r)}
        assert in_sql == in_python, (column, [r[column.name] for r in rows if r["id"] in in_sql ^ in_python])
        assert len(in_sql) < len(rows) - 1  # some are fine


async def test_every_time_and_integer_column_is_checked() -> None:
    """The catalogue the readers, the report and the repair use holds every such column
    of the migrations."""
    db = SqliteDatabase.open(":memory:")
    await apply_migrations(db, load_migrations(default_migrations_dir()))
    tables = [r["name"] for r in await db.all("SELECT name FROM sqlite_master WHERE type = 'table'")]
    found = set()
    for name in tables:
        if name in ("d1_migrations", "sqlite_sequence") or "_fts" in name or "_substring" in name:
            continue
        for column in await db.all(f"PRAGMA table_info({name})"):
            timeish = column["name"].endswith(("_at", "date", "_to", "due")) and column["type"] == "TEXT"
            if timeish or (column["type"] == "INTEGER" and not column["pk"]):
                found.add((name, column["name"]))
    catalogued = {(t.name, c.name) for t in STORED_TABLES for c in t.columns}
    assert found - catalogued == set()
    assert catalogued - found == set()
