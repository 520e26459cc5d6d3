"""A history import on the Worker, through its fetch and queue handlers: the export is
uploaded in parts (each a row of D1), and the Queue runs the job step by step until it is
done. On the fake D1 and on the real engine (Miniflare's workerd), with every other
binding faked as in test_worker_entry."""

from __future__ import annotations

import json
import types
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from bench.history_files import write_jsonl

from companion_memory.memory.history_imports import PART_BYTES
from companion_memory.store.history_imports import DatabaseUploads
from tests.conftest import _MIGRATED, OWNER_KEY
from tests.fakes.d1_real import MiniflareD1, RealD1Database
from tests.fakes.worker_env import migrate, worker_env
from tests.fakes.workers_sdk import deliver

IMPORTS = Path(__file__).resolve().parents[1] / "data" / "imports"


@pytest.fixture(params=["d1", "d1-real"])
async def env(request: pytest.FixtureRequest) -> SimpleNamespace:
    env = worker_env(CHATBOX_API_KEY=OWNER_KEY, ENABLE_MEMORY_RERANKER="false")
    if request.param == "d1-real":
        bridge: MiniflareD1 = request.getfixturevalue("d1_bridge")
        bridge.fresh(_MIGRATED)
        env.DB = RealD1Database(bridge)
    else:
        await migrate(env)
    return env


class Owner:
    """The owner's calls to the Worker's fetch handler."""

    def __init__(self, entry: types.ModuleType, env: SimpleNamespace) -> None:
        self.worker = entry.Default(SimpleNamespace(waitUntil=lambda promise: None), env)

    async def call(self, method: str, path: str, *, body: Any = None, data: bytes | None = None) -> Any:
        headers = {"authorization": f"Bearer {OWNER_KEY}"}
        if data is None:
            headers["content-type"] = "application/json"
            data = None if body is None else json.dumps(body).encode()
        else:
            headers["content-type"] = "application/octet-stream"
        request = SimpleNamespace(method=method, url="https://worker.example" + path, headers=headers, body=data)
        return await self.worker.fetch(request)

    async def upload(self, name: str, content: bytes) -> dict[str, Any]:
        """POST the import, then PUT its parts as the CLI does; answers the last job."""
        started = await self.call("POST", "/v1/imports", body={"name": name, "size": len(content)})
        assert started.status_code == 201, started.text
        job = started.json()
        while job["status"] == "uploading":
            start = job["received"]
            part = await self.call("PUT", f"/v1/imports/{job['id']}/parts/{start}", data=content[start:][:PART_BYTES])
            assert part.status_code == 200, part.text
            job = part.json()
        return job

    async def job(self, id_: str) -> dict[str, Any]:
        answer = await self.call("GET", f"/v1/imports/{id_}")
        assert answer.status_code == 200, answer.text
        return answer.json()


async def run_queue(entry: types.ModuleType, env: SimpleNamespace) -> None:
    """Every delivery the queue has, until none is left: the import's steps, then the
    embeddings of what it stored."""
    while await deliver(entry, env):
        pass


async def test_an_export_uploaded_to_the_worker_is_imported_by_the_queue(
    entry: types.ModuleType, env: SimpleNamespace
) -> None:
    expected = json.loads((IMPORTS / "claude" / "expected.json").read_text(encoding="utf-8"))
    content = (IMPORTS / "claude" / "conversations.json").read_bytes()
    owner = Owner(entry, env)

    job = await owner.upload("conversations.json", content)
    assert (job["status"], job["received"], job["part_bytes"]) == ("queued", len(content), PART_BYTES)
    assert await env.DB.prepare("SELECT count(*) AS n FROM history_import_parts").first("n") == 1
    await run_queue(entry, env)

    job = await owner.job(job["id"])
    assert (job["status"], job["detected"], job["error"]) == ("done", "claude", None)
    said = expected["messages"]
    assert (job["total"], job["stored"], job["duplicates"]) == (len(said), len(said), 0)
    assert job["summary"]["conversations"] == len(expected["conversations"])
    assert job["embedding_left"] == 0  # the queue embedded the episodes too
    runtime = await entry._get_runtime(env)
    rows = await runtime.db.all("SELECT conversation_id, role, created_at FROM messages ORDER BY created_at")
    # Each message said when the export says, not when it was stored.
    assert [(r["conversation_id"], r["role"], r["created_at"][:19]) for r in rows] == [
        (m["conversation_id"], m["role"], m["created_at"][:19]) for m in sorted(said, key=lambda m: m["created_at"])
    ]
    episodes = await runtime.db.all("SELECT id FROM episodes")
    assert len(episodes) == len(said) and {e["id"] for e in episodes} <= env.VECTORIZE.vectors.keys()
    assert await env.DB.prepare("SELECT count(*) AS n FROM history_import_parts").first("n") == 0  # gone once done

    again = await owner.upload("conversations.json", content)
    await run_queue(entry, env)
    again = await owner.job(again["id"])
    assert (again["status"], again["stored"], again["duplicates"]) == ("done", 0, len(said))
    assert len(await runtime.db.all("SELECT id FROM messages")) == len(said)


async def test_an_export_larger_than_a_part_arrives_in_parts(
    entry: types.ModuleType, env: SimpleNamespace, tmp_path: Path
) -> None:
    path = tmp_path / "history.jsonl"
    write_jsonl(path, 3_000)
    content = path.read_bytes()
    assert PART_BYTES < len(content) < 2 * PART_BYTES
    owner = Owner(entry, env)

    job = await owner.upload(path.name, content)
    parts = await env.DB.prepare("SELECT start, length(data) AS n FROM history_import_parts ORDER BY start").all()
    assert [(p["start"], p["n"]) for p in parts.to_py()["results"]] == [
        (0, PART_BYTES),
        (PART_BYTES, len(content) - PART_BYTES),
    ]
    await run_queue(entry, env)
    job = await owner.job(job["id"])
    assert (job["status"], job["detected"], job["total"], job["stored"]) == ("done", "jsonl", 3_000, 3_000)
    runtime = await entry._get_runtime(env)
    stored = await runtime.db.first("SELECT count(*) AS n FROM messages WHERE source = 'import:jsonl'")
    assert stored == {"n": 3_000}


async def test_an_upload_larger_than_the_worker_reads_back_is_refused_before_any_part(
    entry: types.ModuleType, env: SimpleNamespace
) -> None:
    owner = Owner(entry, env)
    answer = await owner.call(
        "POST", "/v1/imports", body={"name": "conversations.json", "size": DatabaseUploads.max_bytes + 1}
    )
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "payload_too_large"
    assert str(DatabaseUploads.max_bytes) in error["message"] and "conversations.json" in error["message"]
    assert (await owner.call("GET", "/v1/imports")).json() == {"imports": []}
