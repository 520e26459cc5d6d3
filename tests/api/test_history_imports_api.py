"""/v1/imports over HTTP: a file uploaded in parts with the owner key, imported, its
progress and summary read back; every wrong call a 4xx in our error shape."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.runtime import Runtime
from tests.conftest import IM_KEY, auth
from tests.history.fixtures import DATA, expected

pytestmark = pytest.mark.parametrize("db", ["sqlite"], indirect=True)


async def upload(client: httpx.AsyncClient, data: bytes, name: str, **fields: Any) -> dict[str, Any]:
    started = await client.post("/v1/imports", json={"name": name, "size": len(data), **fields}, headers=auth())
    assert started.status_code == 201, started.text
    job = started.json()
    while job["status"] == "uploading":
        start = job["received"]
        answer = await client.put(
            f"/v1/imports/{job['id']}/parts/{start}",
            content=data[start : start + job["part_bytes"]],
            headers={**auth(), "Content-Type": "application/octet-stream"},
        )
        assert answer.status_code == 200, answer.text
        job = answer.json()
    return job


async def finished(client: httpx.AsyncClient, runtime: Runtime, job: dict[str, Any]) -> dict[str, Any]:
    """What the queue does in the server: every step of the job (the test runtime has no queue)."""
    await runtime.history_imports.run(job["id"])
    answer = await client.get(f"/v1/imports/{job['id']}", headers=auth())
    assert answer.status_code == 200
    return answer.json()


async def test_an_upload_is_imported_and_reported(client: httpx.AsyncClient, runtime: Runtime) -> None:
    data = (DATA / "chatgpt/conversations.json").read_bytes()
    job = await upload(client, data, "conversations.json", namespace="imported")
    assert (job["status"], job["received"], job["size"]) == ("queued", len(data), len(data))
    done = await finished(client, runtime, job)
    wanted = expected("chatgpt/expected.json")
    assert (done["status"], done["detected"], done["stored"], done["duplicates"]) == ("done", "chatgpt", 10, 0)
    summary = done["summary"]
    assert (summary["conversations"], summary["messages"], summary["skipped"]) == (2, 10, 7)
    assert [summary["first"], summary["last"]] == wanted["summary"]["date_range"]
    assert summary["skipped_by_reason"] == {"system": 2, "tool": 2, "reasoning": 2, "off_branch": 1}
    assert done["embedding_left"] == 10  # the test runtime embeds only when told to drain
    listed = (await client.get("/v1/imports", headers=auth())).json()["imports"]
    assert [j["id"] for j in listed] == [job["id"]]

    again = await finished(client, runtime, await upload(client, data, "conversations.json", namespace="imported"))
    assert (again["stored"], again["duplicates"]) == (0, 10)


async def test_a_broken_upload_fails_with_where(client: httpx.AsyncClient, runtime: Runtime) -> None:
    data = (DATA / "claude/conversations.json").read_bytes()
    done = await finished(client, runtime, await upload(client, data[:-40], "conversations.json"))
    assert done["status"] == "failed" and done["error"].startswith("conversations.json")
    assert done["stored"] == 0 and await runtime.db.all("SELECT id FROM messages") == []


async def test_wrong_calls_are_4xx_in_our_shape(client: httpx.AsyncClient) -> None:
    body = {"name": "conversations.json", "size": 100}
    assert (await client.post("/v1/imports", json=body)).status_code == 401
    assert (await client.post("/v1/imports", json=body, headers=auth(IM_KEY))).status_code == 403
    bad_day = await client.post("/v1/imports", json={**body, "since": "2025-13-01"}, headers=auth())
    assert bad_day.status_code == 400 and "since" in bad_day.json()["error"]["message"]
    bad_format = await client.post("/v1/imports", json={**body, "format": "whatsapp"}, headers=auth())
    assert bad_format.status_code == 400
    empty = await client.post("/v1/imports", json={**body, "size": 0}, headers=auth())
    assert empty.status_code == 400
    assert (await client.get("/v1/imports/nope", headers=auth())).status_code == 404

    job = (await client.post("/v1/imports", json=body, headers=auth())).json()
    parts = f"/v1/imports/{job['id']}/parts"
    octets = {**auth(), "Content-Type": "application/octet-stream"}
    ahead = await client.put(f"{parts}/50", content=b"x" * 10, headers=octets)
    assert ahead.status_code == 409 and ahead.json()["error"]["details"] == {"received": 0}
    past = await client.put(f"{parts}/0", content=b"x" * 101, headers=octets)
    assert past.status_code == 400
    huge = await client.put(f"{parts}/0", content=b"x" * (job["part_bytes"] + 1), headers=octets)
    assert huge.status_code == 413
    assert (await client.put(f"{parts}/0", content=b"x" * 10, headers=auth(IM_KEY))).status_code == 403
