"""Precious, glossary, message ingest, the cache, export/import: over HTTP, on both adapters."""

from __future__ import annotations

import httpx

from companion_memory.domain.search_text import query_terms
from companion_memory.runtime import Runtime
from tests.conftest import IM_KEY, MCP_KEY, auth


async def test_precious_is_append_only_and_only_the_owner_deletes(client: httpx.AsyncClient) -> None:
    words = "  你说过：“我会一直记得今天。”  \n"
    created = await client.post("/v1/precious", json={"content": words, "note": "first date"}, headers=auth(MCP_KEY))
    assert created.status_code == 201
    item = created.json()["precious"]
    assert item["content"] == words  # verbatim, whitespace and all
    listed = (await client.get("/v1/precious", headers=auth())).json()
    assert [p["id"] for p in listed["precious"]] == [item["id"]]
    assert (
        await client.patch(f"/v1/precious/{item['id']}", json={"content": "edited"}, headers=auth())
    ).status_code == 405
    assert (await client.delete(f"/v1/precious/{item['id']}", headers=auth(MCP_KEY))).status_code == 403
    assert (await client.delete(f"/v1/precious/{item['id']}", headers=auth())).status_code == 200
    assert (await client.get(f"/v1/precious/{item['id']}", headers=auth())).status_code == 404
    assert (await client.delete(f"/v1/precious/{item['id']}", headers=auth())).status_code == 404


async def test_precious_pages(client: httpx.AsyncClient, runtime: Runtime) -> None:
    for i in range(3):
        await client.post("/v1/precious", json={"content": f"words {i}"}, headers=auth())
        runtime.clock.advance(seconds=1)  # type: ignore[attr-defined]
    first = (await client.get("/v1/precious", params={"limit": 2}, headers=auth())).json()
    assert [p["content"] for p in first["precious"]] == ["words 2", "words 1"]
    rest = (
        await client.get("/v1/precious", params={"limit": 2, "cursor": first["next_cursor"]}, headers=auth())
    ).json()
    assert [p["content"] for p in rest["precious"]] == ["words 0"] and rest["next_cursor"] is None


async def test_glossary_set_edit_delete(client: httpx.AsyncClient) -> None:
    created = await client.post(
        "/v1/glossary", json={"term": "小咪", "aliases": ["mimi", "小咪"], "definition": "her cat"}, headers=auth()
    )
    assert created.status_code == 201
    entry = created.json()["entry"]
    assert entry["aliases"] == ["mimi"]
    replaced = await client.post(
        "/v1/glossary", json={"term": "小咪", "aliases": ["Mimi"], "definition": "her grey cat"}, headers=auth()
    )
    assert replaced.status_code == 200 and replaced.json()["entry"]["id"] == entry["id"]
    other = (
        await client.post("/v1/glossary", json={"term": "bbt", "definition": "bubble tea"}, headers=auth())
    ).json()["entry"]
    clash = await client.patch(f"/v1/glossary/{other['id']}", json={"term": "小咪"}, headers=auth())
    assert clash.status_code == 409 and clash.json()["error"]["code"] == "term_taken"
    edited = await client.patch(f"/v1/glossary/{other['id']}", json={"definition": "boba"}, headers=auth())
    assert edited.json()["entry"]["definition"] == "boba"
    assert (await client.patch(f"/v1/glossary/{other['id']}", json={}, headers=auth())).status_code == 400
    listed = (await client.get("/v1/glossary", headers=auth())).json()
    assert [e["term"] for e in listed["glossary"]] == ["bbt", "小咪"]
    assert (await client.delete(f"/v1/glossary/{other['id']}", headers=auth())).status_code == 200
    assert (await client.get(f"/v1/glossary/{other['id']}", headers=auth())).status_code == 404


async def test_ingest_is_idempotent(client: httpx.AsyncClient, runtime: Runtime) -> None:
    batch = {
        "conversation_id": "chat-1",
        "messages": [
            {"role": "user", "content": "我今天去爬山了", "created_at": "2026-11-30T10:00:00Z"},
            {"role": "assistant", "content": [{"type": "text", "text": "真棒！"}, {"type": "image_url"}]},
            {"role": "user", "content": "ok", "id": "client-42"},
        ],
    }
    first = await client.post("/v1/ingest/messages", json=batch, headers=auth(IM_KEY))
    assert first.status_code == 200 and first.json()["stored"] == 3
    retry = await client.post("/v1/messages/ingest", json=batch, headers=auth(IM_KEY))
    assert retry.json()["stored"] == 0 and retry.json()["duplicates"] == 3
    assert [m["id"] for m in retry.json()["messages"]] == [m["id"] for m in first.json()["messages"]]
    rows = await runtime.db.all("SELECT role, content, created_at FROM messages ORDER BY created_at")
    assert len(rows) == 3
    assert {"role": "assistant", "content": "真棒！\n[image_url]"} in [
        {k: r[k] for k in ("role", "content")} for r in rows
    ]
    # The same words said again later are a new message.
    again = {
        "conversation_id": "chat-1",
        "messages": [{"role": "user", "content": "我今天去爬山了", "created_at": "2026-12-01T10:00:00Z"}],
    }
    assert (await client.post("/v1/ingest/messages", json=again, headers=auth())).json()["stored"] == 1


async def test_cache_put_get_delete_and_expiry(client: httpx.AsyncClient, runtime: Runtime) -> None:
    url = "/v1/cache/default/last-summary"
    assert (await client.get(url, headers=auth())).status_code == 404
    put = await client.put(url, json={"value": {"text": "hi", "n": [1, 2]}, "ttl_seconds": 60}, headers=auth())
    assert put.status_code == 200 and put.json()["value"] == {"text": "hi", "n": [1, 2]}
    assert (await client.get(url, headers=auth())).json()["value"]["text"] == "hi"
    runtime.clock.advance(seconds=61)  # type: ignore[attr-defined]
    assert (await client.get(url, headers=auth())).status_code == 404
    await client.put(url, json={"value": "forever"}, headers=auth())
    assert (await client.delete(url, headers=auth())).status_code == 200
    assert (await client.delete(url, headers=auth())).status_code == 404
    assert (await client.put("/v1/cache/bad ns/k", json={"value": 1}, headers=auth())).status_code == 400
    assert (await client.put(url, json={"ttl_seconds": 5}, headers=auth())).status_code == 400


async def test_export_then_import_round_trips(client: httpx.AsyncClient, runtime: Runtime) -> None:
    old = (
        await client.post(
            "/v1/memories",
            json={
                "content": "Lives in Berlin",
                "fact_key": "city",
                "tags": ["home"],
                "evidence": [{"quote": "I live in Berlin", "message_id": "m1"}],
            },
            headers=auth(),
        )
    ).json()["memory"]
    await client.post(f"/v1/memories/{old['id']}/supersede", json={"content": "Lives in Lisbon"}, headers=auth())
    await client.post("/v1/precious", json={"content": "原话"}, headers=auth())
    await client.post("/v1/glossary", json={"term": "bbt", "aliases": ["boba"]}, headers=auth())
    await client.post("/v1/ingest/messages", json={"messages": [{"role": "user", "content": "hello"}]}, headers=auth())
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert len(exported["memories"]) == 2 and len(exported["memory_relations"]) == 1
    berlin = next(m for m in exported["memories"] if m["id"] == old["id"])
    assert (
        berlin["evidence"] == [{"quote": "I live in Berlin", "message_id": "m1"}] and berlin["status"] == "superseded"
    )

    # Wipe and import: everything comes back, and the live memory and the episode are re-indexed.
    for table in ("memories", "memory_relations", "precious", "glossary", "messages", "episodes"):
        await runtime.db.run(f"DELETE FROM {table}")
    wiped = [row["id"] for table in ("memories", "episodes") for row in exported[table]]
    await runtime.vectors.inner.delete(wiped)  # type: ignore[attr-defined]
    imported = await client.post("/api/memories/import", json=exported, headers=auth())
    assert imported.status_code == 200, imported.text
    assert imported.json()["imported"]["memories"] == 2
    await runtime.mirror.drain()
    again = (await client.get("/api/memories/export", headers=auth())).json()
    assert {k: v for k, v in again.items() if k != "exported_at"} == {
        k: v for k, v in exported.items() if k != "exported_at"
    }
    assert await runtime.vectors.count() == 2
    assert len(await runtime.writer.store.lexical_search("default", query_terms("Lisbon"))) == 1


async def test_import_refuses_what_is_not_an_export(client: httpx.AsyncClient) -> None:
    for document, problem in (
        ({"memories": []}, "format"),
        ({"format": "companion-memory-export", "version": 99}, "version"),
        ({"format": "companion-memory-export", "version": 1, "memories": "nope"}, "memories"),
        ({"format": "companion-memory-export", "version": 1, "memories": [{"id": "x"}]}, "namespace"),
        ({"format": "companion-memory-export", "version": 1, "tables": []}, "tables"),
    ):
        response = await client.post("/api/memories/import", json=document, headers=auth())
        assert response.status_code == 400, response.text
        assert problem in response.json()["error"]["message"]
    assert (await client.post("/api/memories/import", json={"format": "x"}, headers=auth(MCP_KEY))).status_code == 403


async def test_full_text_index_finds_chinese_and_english(client: httpx.AsyncClient, runtime: Runtime) -> None:
    for key, text in (("dark", "我一直很怕黑"), ("coffee", "她每天早上喝咖啡"), ("hike", "Loves hiking in the Alps")):
        await client.post("/v1/memories", json={"content": text, "fact_key": key}, headers=auth())

    async def match(query: str) -> list[str]:
        found = await runtime.writer.store.lexical_search("default", query_terms(query))
        return [m.content for m in await runtime.writer.store.get_many([id_ for id_, _ in found])]

    assert await match("怕黑") == ["我一直很怕黑"]
    assert await match("咖啡") == ["她每天早上喝咖啡"]
    assert await match("hikes") == ["Loves hiking in the Alps"]
    assert await match("黑") == ["我一直很怕黑"]
    memory = (await client.get("/v1/memories", params={"limit": 10}, headers=auth())).json()["memories"]
    dark = next(m for m in memory if m["fact_key"] == "dark")
    await client.patch(f"/v1/memories/{dark['id']}", json={"content": "她不再怕黑了"}, headers=auth())
    assert await match("一直") == []
    assert await match("怕黑") == ["她不再怕黑了"]
