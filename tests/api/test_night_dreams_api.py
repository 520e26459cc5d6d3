"""Her night dreams over HTTP: GET /v1/night_dreams and the MCP tool night_dreams_recent
answer alike, and the diary answers carry the night's dreams."""

from __future__ import annotations

import httpx

from companion_memory.runtime import Runtime
from tests.api.test_surface_parity import tool
from tests.conftest import MCP_KEY, auth
from tests.nightly.test_dream import say
from tests.nightly.test_night_dreams import NIGHT, dreams_on, remember


async def test_rest_and_mcp_read_the_same_dreams_and_the_diary_shows_them(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await say(client, ("user", "We went to the sea today", f"{NIGHT}T03:00:00Z"))
    await remember(client, "sea", "Went to the sea with her sister", "emotion:happy")
    report = await dreams_on(runtime).nightly.run("manual")
    assert report.ok and report.steps[-1].result == {"enabled": True, "written": 1}

    rest = (await client.get("/v1/night_dreams", params={"nights": 1}, headers=auth(MCP_KEY))).json()
    assert rest == await tool(client, "night_dreams_recent", {"nights": 1})
    (dream,) = rest["night_dreams"]
    assert rest["count"] == 1 and dream["date"] == NIGHT and dream["mood"] == "happy"

    day = (await client.get("/v1/diary", params={"date": NIGHT}, headers=auth())).json()
    assert day["diary"]["date"] == NIGHT and day["night_dreams"] == [dream]
    recent = (await client.get("/v1/diary/recent", headers=auth())).json()
    assert recent["night_dreams"] == [dream] and recent == await tool(client, "diary_get", {})
    earlier = (await client.get("/v1/diary", params={"date": "2026-11-28"}, headers=auth())).status_code
    assert earlier == 404  # a night dream makes no diary day

    elsewhere = (await client.get("/v1/night_dreams", params={"namespace": "other"}, headers=auth())).json()
    assert elsewhere == {"night_dreams": [], "count": 0}


async def test_bad_queries_are_400s(client: httpx.AsyncClient) -> None:
    for params in ({"nights": 0}, {"nights": 3661}, {"limit": 501}, {"namespace": "no spaces"}):
        response = await client.get("/v1/night_dreams", params=params, headers=auth())
        assert response.status_code == 400, params
