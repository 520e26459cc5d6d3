"""The admin panel's read views: /v1/admin/graph (star map) and /v1/admin/diary."""

from __future__ import annotations

import httpx

from companion_memory.runtime import Runtime
from tests.conftest import GUIDE_DOG_KEY, MCP_KEY, auth


async def remember(client: httpx.AsyncClient, fact_key: str, content: str, **fields: object) -> str:
    answer = await client.post(
        "/v1/memories", json={"fact_key": fact_key, "content": content, **fields}, headers=auth()
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["memory"]["id"]


async def test_graph_has_live_memories_and_the_edges_between_them(client: httpx.AsyncClient) -> None:
    tea = await remember(client, "drink.tea", "Drinks green tea every morning", type="preference", importance=0.9)
    cat = await remember(client, "pet.cat", "Has a cat called Miso", type="fact", importance=0.4)
    gone = await remember(client, "old.job", "Worked at a bakery", type="event")
    other = await remember(client, "x", "elsewhere", namespace="other")
    assert (
        await client.post(
            f"/v1/memories/{tea}/relations",
            json={"target_id": cat, "relation": "same_thread", "weight": 0.5},
            headers=auth(),
        )
    ).status_code == 201
    assert (
        await client.post(
            f"/v1/memories/{cat}/relations", json={"target_id": gone, "relation": "supports"}, headers=auth()
        )
    ).status_code == 201
    assert (await client.post(f"/v1/memories/{gone}/archive", headers=auth())).status_code == 200
    # A new version: its predecessor leaves the map, and so does the 'supersedes' edge.
    newer = (
        await client.post(
            f"/v1/memories/{cat}/supersede",
            json={"content": "Has two cats, Miso and Tofu", "type": "fact"},
            headers=auth(),
        )
    ).json()["memory"]["id"]

    body = (await client.get("/v1/admin/graph", headers=auth())).json()
    nodes = {n["id"]: n for n in body["nodes"]}
    assert set(nodes) == {tea, newer}
    assert nodes[tea]["type"] == "preference" and nodes[tea]["content"] == "Drinks green tea every morning"
    assert nodes[tea]["pinned"] is False and isinstance(nodes[tea]["tags"], list)
    assert body["nodes"][0]["id"] == tea  # most important first
    assert body["truncated"] is False
    assert other not in nodes

    assert (
        await client.post(
            f"/v1/memories/{tea}/relations",
            json={"target_id": newer, "relation": "supports", "weight": 0.7},
            headers=auth(),
        )
    ).status_code == 201
    body = (await client.get("/v1/admin/graph", headers=auth())).json()
    assert [(e["source_id"], e["target_id"], e["relation"], e["weight"]) for e in body["edges"]] == [
        (tea, newer, "supports", 0.7)
    ]

    limited = (await client.get("/v1/admin/graph", params={"limit": 1}, headers=auth())).json()
    assert [n["id"] for n in limited["nodes"]] == [tea] and limited["truncated"] is True and limited["edges"] == []
    typed = (await client.get("/v1/admin/graph", params={"type": "fact"}, headers=auth())).json()
    assert [n["id"] for n in typed["nodes"]] == [newer]
    elsewhere = (await client.get("/v1/admin/graph", params={"namespace": "other"}, headers=auth())).json()
    assert [n["id"] for n in elsewhere["nodes"]] == [other]


async def test_graph_rejects_bad_input_and_needs_read_scope(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/admin/graph")).status_code == 401
    assert (await client.get("/v1/admin/graph", headers=auth(GUIDE_DOG_KEY))).status_code == 403
    assert (await client.get("/v1/admin/graph", headers=auth(MCP_KEY))).status_code == 200
    bad_type = await client.get("/v1/admin/graph", params={"type": "nonsense"}, headers=auth())
    assert bad_type.status_code == 400 and bad_type.json()["error"]["code"] == "invalid_type"
    assert (await client.get("/v1/admin/graph", params={"limit": 0}, headers=auth())).status_code == 400
    assert (await client.get("/v1/admin/graph", params={"namespace": "bad space"}, headers=auth())).status_code == 400


async def _logs(runtime: Runtime) -> None:
    for day, title in [("2026-11-28", "Sat"), ("2026-11-29", "Sun"), ("2026-11-30", "Mon")]:
        await runtime.db.run(
            "INSERT INTO daily_log (id, namespace, date, title, summary, message_count, created_at, updated_at) "
            "VALUES (?, 'default', ?, ?, 'summary', 2, 'x', 'x')",
            (f"d-{day}", day, title),
        )
    await runtime.db.run(
        "INSERT INTO daily_log (id, namespace, date, title, summary, message_count, created_at, updated_at) "
        "VALUES ('d-other', 'other', '2026-11-30', 'Elsewhere', '', 1, 'x', 'x')"
    )
    for week, start, end in [("2026-W46", "2026-11-09", "2026-11-15"), ("2026-W47", "2026-11-16", "2026-11-22")]:
        await runtime.db.run(
            "INSERT INTO weekly_log (id, namespace, week, start_date, end_date, title, summary, created_at, updated_at) "
            "VALUES (?, 'default', ?, ?, ?, 'Week', 'a week', 'x', 'x')",
            (f"w-{week}", week, start, end),
        )
    await runtime.db.run(
        "INSERT INTO monthly_log (id, namespace, month, title, summary, created_at, updated_at) "
        "VALUES ('m1', 'default', '2026-10', 'October', 'a month', 'x', 'x')"
    )


async def test_diary_by_day_week_and_month_pages_back(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await _logs(runtime)
    days = (await client.get("/v1/admin/diary", params={"limit": 2}, headers=auth())).json()
    assert days["period"] == "day" and [e["date"] for e in days["entries"]] == ["2026-11-30", "2026-11-29"]
    assert days["entries"][0]["title"] == "Mon" and days["entries"][0]["message_count"] == 2
    assert days["next_before"] == "2026-11-29"
    rest = (
        await client.get("/v1/admin/diary", params={"limit": 2, "before": days["next_before"]}, headers=auth())
    ).json()
    assert [e["date"] for e in rest["entries"]] == ["2026-11-28"] and rest["next_before"] is None

    weeks = (await client.get("/v1/admin/diary", params={"period": "week"}, headers=auth())).json()
    assert [(e["week"], e["start_date"], e["end_date"]) for e in weeks["entries"]] == [
        ("2026-W47", "2026-11-16", "2026-11-22"),
        ("2026-W46", "2026-11-09", "2026-11-15"),
    ]
    months = (await client.get("/v1/admin/diary", params={"period": "month"}, headers=auth())).json()
    assert [(e["month"], e["title"]) for e in months["entries"]] == [("2026-10", "October")]
    other = (await client.get("/v1/admin/diary", params={"namespace": "other"}, headers=auth())).json()
    assert [e["title"] for e in other["entries"]] == ["Elsewhere"]


async def test_diary_rejects_bad_input_and_needs_a_key(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/admin/diary")).status_code == 401
    assert (await client.get("/v1/admin/diary", params={"period": "year"}, headers=auth())).status_code == 400
    assert (await client.get("/v1/admin/diary", params={"limit": 101}, headers=auth())).status_code == 400
    assert (await client.get("/v1/admin/diary", params={"before": "x" * 11}, headers=auth())).status_code == 400
    empty = (await client.get("/v1/admin/diary", params={"period": "month"}, headers=auth())).json()
    assert empty == {"period": "month", "entries": [], "count": 0, "next_before": None}
