"""``<private>…</private>`` is never stored, whichever REST write it comes through: todos,
the glossary, people and their proposals, moods, precious notes, shares, an import. A value
the cut leaves without words is refused with empty_content, as a memory is. Checked on
every row of every table (the word indexes' vocabularies too), on SQLite, the fake D1 and
the real D1 engine."""

from __future__ import annotations

from typing import Any

import httpx

from companion_memory.runtime import Runtime
from tests.conftest import auth

SECRET = "quokkaberry"


def hidden(text: str) -> str:
    return text.replace("SECRET", f"<private>{SECRET} Tuesday</private>")


async def everything_stored(runtime: Runtime) -> str:
    """Every row of every table the migrations made, as one lower-cased text."""
    tables = await runtime.db.all(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'"
    )
    dumped = [str(await runtime.db.all(f'SELECT * FROM "{t["name"]}"')) for t in tables]
    return "\n".join(dumped).lower()


async def post(client: httpx.AsyncClient, path: str, body: dict[str, Any], status: int = 201) -> Any:
    answer = await client.post(path, json=body, headers=auth())
    assert answer.status_code == status, answer.text
    return answer.json()


async def refused(client: httpx.AsyncClient, path: str, body: dict[str, Any], method: str = "POST") -> None:
    answer = await client.request(method, path, json=body, headers=auth())
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "empty_content", answer.text


async def test_no_write_stores_a_private_span(client: httpx.AsyncClient, runtime: Runtime) -> None:
    todo = await post(client, "/v1/todos", {"text": hidden("buy SECRET milk"), "note": hidden("for SECRET")})
    assert (todo["todo"]["text"], todo["todo"]["note"]) == ("buy milk", "for")
    entry = await post(
        client,
        "/v1/glossary",
        {"term": hidden("tea SECRET"), "aliases": [hidden("chai SECRET")], "definition": hidden("a SECRET drink")},
    )
    assert (entry["entry"]["term"], entry["entry"]["aliases"], entry["entry"]["definition"]) == (
        "tea",
        ["chai"],
        "a drink",
    )
    edited = await client.patch(
        f"/v1/glossary/{entry['entry']['id']}", json={"definition": hidden("hot SECRET")}, headers=auth()
    )
    assert edited.json()["entry"]["definition"] == "hot"

    anna = await post(
        client,
        "/v1/people",
        {"name": hidden("Anna SECRET"), "aliases": [hidden("my sister SECRET")], "relation": hidden("sister SECRET")},
    )
    assert (anna["person"]["name"], anna["person"]["aliases"], anna["person"]["relation"]) == (
        "Anna",
        ["my sister"],
        "sister",
    )
    changed = await client.patch(
        f"/v1/people/{anna['person']['id']}", json={"name": "Anna", "notes": hidden("ill SECRET")}, headers=auth()
    )
    assert changed.json()["person"]["notes"] == "ill"
    lin = await post(client, "/v1/people", {"name": "Lin"})
    await post(
        client,
        "/v1/person_proposals",
        {"person_id": anna["person"]["id"], "other_id": lin["person"]["id"], "reason": hidden("same SECRET")},
    )
    mood = await post(client, "/v1/moods", {"label": "happy", "reason": hidden("the SECRET news")})
    assert mood["mood"]["reason"] == "the news"
    pinned = await post(client, "/v1/precious", {"content": "you matter", "note": hidden("said SECRET")})
    assert pinned["precious"]["note"] == "said"

    memory = await post(client, "/v1/memories", {"fact_key": "tea", "content": "Likes tea", "namespace": "work"})
    share = await post(
        client,
        "/v1/shares",
        {"memory_id": memory["memory"]["id"], "target_namespace": "default", "note": hidden("worth SECRET")},
    )
    await post(client, f"/v1/shares/{share['id']}/approve", {"reason": hidden("yes SECRET")}, 200)

    assert SECRET not in await everything_stored(runtime)


async def test_a_value_left_without_words_is_refused(client: httpx.AsyncClient, runtime: Runtime) -> None:
    nothing = "<private>quokkaberry</private>"
    await refused(client, "/v1/todos", {"text": nothing})
    await refused(client, "/v1/glossary", {"term": nothing})
    await refused(client, "/v1/glossary", {"term": "tea", "aliases": ["chai", f"  {nothing} "]})
    await refused(client, "/v1/people", {"name": nothing})
    await refused(client, "/v1/precious", {"content": nothing})
    anna = await post(client, "/v1/people", {"name": "Anna"})
    await refused(client, f"/v1/people/{anna['person']['id']}", {"name": nothing}, method="PATCH")
    # An optional text may be left empty: the rest is stored.
    todo = await post(client, "/v1/todos", {"text": "call Anna", "note": nothing})
    assert todo["todo"]["note"] == ""
    assert SECRET not in await everything_stored(runtime)


def document(**tables: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "companion-memory-export", "version": 1, "namespace": None, **tables}


async def test_an_import_stores_no_private_span(client: httpx.AsyncClient, runtime: Runtime) -> None:
    at = "2026-11-29T10:00:00.000Z"
    memory = {
        "id": "m1",
        "namespace": "default",
        "type": "preference",
        "content": hidden("Likes SECRET tea"),
        "evidence": [{"quote": hidden("I like SECRET tea"), "message_id": "x1"}],
        "created_at": at,
        "updated_at": at,
    }
    message = {"id": "x1", "namespace": "default", "role": "user", "content": hidden("I like SECRET tea")}
    rows = document(
        memories=[memory],
        messages=[{**message, "created_at": at, "stored_at": at}],
        episodes=[
            {
                **message,
                "source": "ingest",
                "search_text": "",
                "sensitive": [],
                "layer": "instant",
                "created_at": at,
                "stored_at": at,
            }
        ],
        todos=[{"id": "t1", "namespace": "default", "text": hidden("buy SECRET"), "created_at": at, "updated_at": at}],
        daily_log=[
            {
                "id": "d1",
                "namespace": "default",
                "date": "2026-11-29",
                "title": hidden("A SECRET day"),
                "summary": hidden("We spoke of SECRET."),
                "created_at": at,
                "updated_at": at,
            }
        ],
    )
    answer = await client.post("/api/memories/import", json=rows, headers=auth())
    assert answer.status_code == 200, answer.text
    assert answer.json()["imported"]["memories"] == 1 and answer.json()["imported"]["daily_log"] == 1
    diary = await client.get("/v1/diary", params={"date": "2026-11-29"}, headers=auth())
    assert diary.json()["diary"]["title"] == "A day"
    await runtime.mirror.drain()
    assert SECRET not in await everything_stored(runtime)

    emptied = document(memories=[{**memory, "id": "m2", "content": "<private>quokkaberry</private>"}])
    await refused(client, "/api/memories/import", emptied)
