"""The REST memory API through HTTP, on both storage adapters."""

from __future__ import annotations

import httpx

from tests.conftest import DEBUG_KEY, GUIDE_DOG_KEY, IM_KEY, MCP_KEY, auth


async def create(client: httpx.AsyncClient, key: str = MCP_KEY, **body: object) -> dict:
    response = await client.post("/v1/memories", json=body, headers=auth(key))
    assert response.status_code in (200, 201), response.text
    return response.json()


async def test_health_needs_no_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/health")
    assert response.status_code == 200 and response.json()["ok"] is True


async def test_post_creates_201_then_updates_200(client: httpx.AsyncClient) -> None:
    first = await client.post(
        "/v1/memories",
        json={"content": "Loves hiking", "fact_key": "hobby.outdoor", "type": "preference"},
        headers=auth(),
    )
    assert first.status_code == 201
    body = first.json()
    assert body["created"] is True and body["memory"]["type"] == "preference" and body["vector"] == "synced"
    again = await client.post(
        "/v1/memory", json={"content": "Loves hiking and climbing", "fact_key": "hobby.outdoor"}, headers=auth()
    )
    assert again.status_code == 200
    assert again.json()["created"] is False and again.json()["memory"]["id"] == body["memory"]["id"]
    assert again.json()["memory"]["seen_count"] == 2


async def test_post_without_fact_key_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/memories", json={"content": "no key"}, headers=auth())
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "missing_fact_key"


async def test_list_filters_and_paginates(client: httpx.AsyncClient) -> None:
    for i in range(5):
        await create(client, content=f"event number {i}", fact_key=f"e{i}", type="event")
    await create(client, content="likes tea", fact_key="tea", type="preference")
    events = (await client.get("/v1/memories", params={"type": "event", "limit": 2}, headers=auth())).json()
    assert events["count"] == 2 and events["next_cursor"]
    seen = [m["id"] for m in events["memories"]]
    cursor = events["next_cursor"]
    while cursor:
        page = (
            await client.get("/v1/memories", params={"type": "event", "limit": 2, "cursor": cursor}, headers=auth())
        ).json()
        seen += [m["id"] for m in page["memories"]]
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == 5
    both = (await client.get("/v1/memory", params={"type": "event,preference", "limit": 50}, headers=auth())).json()
    assert both["count"] == 6
    other_namespace = (await client.get("/v1/memories", params={"namespace": "work"}, headers=auth())).json()
    assert other_namespace["count"] == 0


async def test_get_patch_delete_by_id(client: httpx.AsyncClient) -> None:
    memory = (await create(client, content="Works at a bakery", fact_key="job"))["memory"]
    got = await client.get(f"/v1/memories/{memory['id']}", headers=auth())
    assert got.status_code == 200 and got.json()["events"][0]["event"] == "created"
    patched = await client.patch(
        f"/v1/memory/{memory['id']}", json={"content": "Works at a cafe", "importance": 0.9}, headers=auth()
    )
    assert patched.status_code == 200 and patched.json()["memory"]["content"] == "Works at a cafe"
    deleted = await client.delete(f"/v1/memories/{memory['id']}", headers=auth())
    assert deleted.status_code == 200 and deleted.json()["memory"]["status"] == "deleted"
    listed = (await client.get("/v1/memories", params={"status": "deleted"}, headers=auth())).json()
    assert [m["id"] for m in listed["memories"]] == [memory["id"]]
    hard = await client.delete(f"/v1/memories/{memory['id']}", params={"hard": "true"}, headers=auth())
    assert hard.status_code == 200
    assert (await client.get(f"/v1/memories/{memory['id']}", headers=auth())).status_code == 404


async def test_unknown_ids_are_404(client: httpx.AsyncClient) -> None:
    for method, path in (
        ("GET", "/v1/memories/nope"),
        ("PATCH", "/v1/memories/nope"),
        ("DELETE", "/v1/memories/nope"),
        ("POST", "/v1/memories/nope/archive"),
    ):
        response = await client.request(
            method, path, json={"content": "x"} if method == "PATCH" else None, headers=auth()
        )
        assert response.status_code == 404, (method, path, response.text)
        assert "nope" in response.json()["error"]["message"]


async def test_supersede_and_archive_over_rest(client: httpx.AsyncClient) -> None:
    old = (await create(client, content="Lives in Berlin", fact_key="city"))["memory"]
    response = await client.post(
        f"/v1/memories/{old['id']}/supersede", json={"content": "Lives in Lisbon"}, headers=auth()
    )
    assert response.status_code == 201
    body = response.json()
    assert body["previous"]["status"] == "superseded" and body["memory"]["fact_key"] == "city"
    assert body["old_status"] == "active"
    missing = await client.post(
        "/v1/memory/ghost/supersede", json={"content": "brand new", "fact_key": "n"}, headers=auth()
    )
    assert missing.json()["old_status"] == "missing"
    archived = await client.post(f"/v1/memories/{body['memory']['id']}/archive", headers=auth())
    assert archived.status_code == 200 and archived.json()["memory"]["status"] == "archived"
    again = await client.post(f"/v1/memories/{old['id']}/supersede", json={"content": "x"}, headers=auth())
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_active"


async def test_authored_memories_and_who_may_author(client: httpx.AsyncClient) -> None:
    refused = await client.post(
        "/v1/memories", json={"content": "x", "fact_key": "k", "authored_by": "me"}, headers=auth(MCP_KEY)
    )
    assert refused.status_code == 403
    mine = (await create(client, key="test-owner-key", content="My name is Mei", fact_key="name", authored_by="owner"))[
        "memory"
    ]
    agent = await client.post("/v1/memories", json={"content": "Name: May", "fact_key": "name"}, headers=auth(MCP_KEY))
    assert agent.status_code == 409 and agent.json()["error"]["code"] == "authored_memory"
    assert (await client.delete(f"/v1/memories/{mine['id']}", headers=auth(MCP_KEY))).status_code == 409
    assert (await client.get(f"/v1/memories/{mine['id']}", headers=auth())).json()["memory"][
        "content"
    ] == "My name is Mei"


async def test_sensitive_content_is_refused_with_a_reason(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/memories",
        json={"content": "api key: sk-ant-abcdefghijklmnopqrstuvwxyz0123", "fact_key": "k"},
        headers=auth(MCP_KEY),
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "sensitive_content" and "credential" in error["details"]["classes"]


async def test_keys_profiles_and_scopes(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/memories")
    assert missing.status_code == 401 and missing.json()["error"]["type"] == "authentication_error"
    wrong = await client.get("/v1/memories", headers=auth("not-a-key"))
    assert wrong.status_code == 401
    assert (await client.get("/v1/memories", headers={"x-api-key": MCP_KEY})).status_code == 200
    assert (await client.get("/v1/memories", headers={"Authorization": f"bearer {IM_KEY}"})).status_code == 200
    assert (await client.get("/v1/memories", headers=auth(GUIDE_DOG_KEY))).status_code == 403
    assert (await client.get("/api/memories/export", headers=auth(MCP_KEY))).status_code == 403
    assert (await client.get("/api/memories/export", headers=auth(DEBUG_KEY))).status_code == 200
    assert (await client.get("/v1/debug/vector_health", headers=auth(IM_KEY))).status_code == 403
    health = await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))
    assert health.status_code == 200 and health.json()["outbox"]["pending"] == 0
    memory = (await create(client, content="x y", fact_key="k"))["memory"]
    forbidden = await client.delete(f"/v1/memories/{memory['id']}", params={"hard": "true"}, headers=auth(MCP_KEY))
    assert forbidden.status_code == 403 and forbidden.json()["error"]["type"] == "permission_error"


async def test_an_empty_key_setting_never_matches(client: httpx.AsyncClient, runtime) -> None:  # type: ignore[no-untyped-def]
    runtime.settings = runtime.settings.model_copy(update={"IM_API_KEY": ""})
    assert (await client.get("/v1/memories", headers={"Authorization": "Bearer "})).status_code == 401
    assert (await client.get("/v1/memories", headers={"x-api-key": ""})).status_code == 401
