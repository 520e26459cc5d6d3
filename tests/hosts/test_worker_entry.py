"""The Worker entry (``src/entry.py``): ``scheduled`` and ``queue`` run the same services
as the local server, over fakes of every binding (D1, Vectorize, Workers AI, Queue)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import types
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from companion_memory.adapters.cloudflare.queue import CloudflareQueue
from companion_memory.clock import FixedClock
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.memory.ingest import IncomingMessage
from tests.cloudflare_tools import ROOT, WRANGLER, compatibility_date, require_toolchain, tool_env
from tests.conftest import MCP_KEY, NIGHTLY_STEPS, OWNER_KEY
from tests.fakes.d1 import FakeJsException
from tests.fakes.queues import MAX_DELAY_SECONDS
from tests.fakes.worker_env import migrate, worker_env
from tests.fakes.workers_sdk import AsgiBridge, deliver


@pytest.fixture(params=["jsproxy", "python"])
async def env(request: pytest.FixtureRequest) -> SimpleNamespace:
    """The bindings, with results as JsProxy objects or as already-converted Python values."""
    env = worker_env(result_style=request.param, ENABLE_MEMORY_RERANKER="false")
    await migrate(env)
    return env


async def test_a_failed_vector_write_is_retried_through_the_queue(
    entry: types.ModuleType, env: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = await entry._get_runtime(env)
    assert isinstance(runtime.queue, CloudflareQueue)
    runtime.clock = clock = FixedClock(datetime.now(UTC))  # before any service is built

    async def down(*_: Any) -> None:
        raise FakeJsException("VECTOR_UPSERT_ERROR (code = 40001): service unavailable")

    monkeypatch.setattr(env.VECTORIZE, "upsert", down)
    written = await runtime.writer.upsert(
        "default", MemoryDraft(content="I like jasmine tea", fact_key="drink.tea"), Actor("test")
    )
    assert written.vector == "pending" and written.memory.id not in env.VECTORIZE.vectors
    [(body, delay)] = env.TASKS.sent
    assert body == {"task": "vector_mirror"} and 0 < delay <= 16  # when the outbox entry is due

    monkeypatch.undo()
    env.TASKS.advance(delay)
    clock.advance(seconds=delay)
    assert await deliver(entry, env) == 1
    assert written.memory.id in env.VECTORIZE.vectors  # the row's vector arrived
    assert env.TASKS.pending == [] and env.TASKS.dead_letters == []
    assert (await runtime.mirror.outbox.stats())["pending"] == 0


async def test_a_write_survives_the_index_and_the_queue_both_down(
    entry: types.ModuleType, env: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = await entry._get_runtime(env)

    async def down(*_: Any) -> None:
        raise FakeJsException("VECTOR_UPSERT_ERROR (code = 40001): service unavailable")

    async def full(*_: Any) -> None:
        raise FakeJsException("Queue send failed: Queue overloaded")  # TaskQueueError through the adapter

    monkeypatch.setattr(env.VECTORIZE, "upsert", down)
    monkeypatch.setattr(env.TASKS, "send", full)
    written = await runtime.writer.create("default", MemoryDraft(content="I like jasmine tea"), Actor("test"))
    assert written.vector == "pending" and env.TASKS.sent == []
    assert (await runtime.mirror.outbox.stats())["pending"] == 1  # the nightly pass drains it


async def test_malformed_tasks_are_dropped_and_failing_ones_retried_then_dead_lettered(
    entry: types.ModuleType, env: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = await entry._get_runtime(env)
    await env.TASKS.send({"task": "launch_rockets"})
    await env.TASKS.sendBatch([{"body": {"task": "vector_mirror"}}])

    async def broken(limit: int = 200) -> Any:
        raise RuntimeError("D1 is read-only during maintenance")

    monkeypatch.setattr(runtime.mirror, "drain", broken)
    assert await deliver(entry, env) == 2
    [retried] = env.TASKS.pending  # the unknown task is acked: retrying cannot fix it
    assert retried.body == {"task": "vector_mirror"} and retried.available_at == env.TASKS.now + 30
    for _ in range(5):  # max_retries = 5, as in wrangler.toml
        env.TASKS.advance(MAX_DELAY_SECONDS)
        assert await deliver(entry, env) == 1
    assert env.TASKS.pending == [] and [m.body for m in env.TASKS.dead_letters] == [{"task": "vector_mirror"}]


async def test_the_queue_consumer_embeds_episodes_with_workers_ai(
    entry: types.ModuleType, env: SimpleNamespace
) -> None:
    """Storing what was said queues its embedding; the consumer makes it with Workers AI and
    writes it to Vectorize beside the memories, with the episode kind filter's metadata."""
    runtime = await entry._get_runtime(env)
    said = [IncomingMessage(role="user", content="I adopted a beagle called Toby")]
    [outcome] = await runtime.ingestor.ingest("default", said, conversation_id="c1", source="chat")
    assert outcome.id not in env.VECTORIZE.vectors and env.AI.calls == []  # nothing embedded on the way in
    [(body, delay)] = env.TASKS.sent
    assert body == {"task": "vector_mirror"} and delay == 0
    assert await deliver(entry, env) == 1
    [(model, inputs)] = env.AI.calls
    assert model == runtime.embedder.model and inputs["text"] == ["i adopted a beagle called toby"]
    stored = env.VECTORIZE.vectors[outcome.id]
    assert stored["metadata"] == {
        "namespace": "default",
        "status": "active",
        "kind": "episode",
        "type": "episode",
        "role": "user",
    }
    matches = await runtime.vectors.query(stored["values"], top_k=5, filter={"kind": "memory"})
    assert matches == []  # memory queries never see it
    assert (await runtime.mirror.outbox.stats())["pending"] == 0


async def test_reindex_runs_through_the_queue(entry: types.ModuleType, env: SimpleNamespace) -> None:
    runtime = await entry._get_runtime(env)
    ids = [
        (await runtime.writer.create("default", MemoryDraft(content=f"fact number {i}"), Actor("t"))).memory.id
        for i in range(3)
    ]
    await env.VECTORIZE.deleteByIds(ids)
    assert not set(ids) & set(env.VECTORIZE.vectors)
    await runtime.queue.send({"task": "reindex", "restart": True})
    while await deliver(entry, env):
        pass
    assert set(ids) <= set(env.VECTORIZE.vectors)


async def test_scheduled_runs_the_nightly_job(entry: types.ModuleType, env: SimpleNamespace) -> None:
    runtime = await entry._get_runtime(env)
    yesterday_noon = datetime.now(UTC) - timedelta(days=1)
    await runtime.ingestor.ingest(
        "default",
        [
            IncomingMessage(
                role="user", content="remember that my sister is called Mei", created_at=yesterday_noon.isoformat()
            ),
        ],
    )
    # DREAM_MODEL's default, workers-ai/@cf/openai/gpt-oss-120b, answers through env.AI.
    env.AI.chat_replies.append(
        json.dumps(
            {
                "title": "Family",
                "summary": "Talked about Mei.",
                "add": [
                    {
                        "content": "my sister is called Mei",
                        "type": "relationship",
                        "evidence": ["my sister is called Mei"],
                    }
                ],
            }
        )
    )
    worker = entry.Default(SimpleNamespace(), env)
    await worker.scheduled(SimpleNamespace(cron="10 20 * * *", scheduledTime=0))
    last = await runtime.nightly.last_run()
    assert last is not None and last["trigger"] == "cron 10 20 * * *"
    assert list(last["steps"]) == list(NIGHTLY_STEPS)
    assert all(step["ok"] for step in last["steps"].values())
    candidates = await runtime.db.all("SELECT content FROM memory_candidates")
    assert [row["content"] for row in candidates] == ["my sister is called Mei"]
    await worker.scheduled(SimpleNamespace(cron="10 20 * * *", scheduledTime=0))  # the same night again
    assert len(await runtime.db.all("SELECT id FROM memory_candidates")) == 1


async def test_fetch_hands_requests_to_the_app_with_ctx(entry: types.ModuleType, env: SimpleNamespace) -> None:
    ctx = SimpleNamespace(waitUntil=lambda promise: None)
    worker = entry.Default(ctx, env)
    request = SimpleNamespace(method="GET", url="https://worker.example/health", headers={}, body=None)
    response = await worker.fetch(request)
    assert response.status_code == 200 and response.json()["ok"] is True
    assert AsgiBridge.calls[-1] is ctx


class FakeAssets:
    """``env.ASSETS``: the static-assets binding, serving the admin/ folder at its root."""

    def __init__(self) -> None:
        self.requested: list[str] = []

    async def fetch(self, url: str) -> httpx.Response:
        self.requested.append(url)
        return httpx.Response(200, text="<!doctype html>")


async def test_the_panel_is_served_from_the_static_assets(entry: types.ModuleType, env: SimpleNamespace) -> None:
    env.ASSETS = FakeAssets()
    worker = entry.Default(SimpleNamespace(waitUntil=lambda promise: None), env)

    def request(method: str, path: str) -> SimpleNamespace:
        return SimpleNamespace(method=method, url=f"https://worker.example{path}", headers={}, body=None)

    assert (await worker.fetch(request("GET", "/admin/js/app.js"))).status_code == 200
    assert (await worker.fetch(request("GET", "/memory-admin/"))).status_code == 200
    assert env.ASSETS.requested == ["https://worker.example/js/app.js", "https://worker.example/"]
    redirect = await worker.fetch(request("GET", "/admin"))
    assert redirect.status_code == 308 and redirect.headers["location"] == "/admin/"
    rollup = await worker.fetch(request("POST", "/admin/monthly-rollup"))  # the API, not a file
    assert rollup.status_code == 401 and len(env.ASSETS.requested) == 2


# The entry's way to the panel's files, in JS: GET /admin/<path> is env.ASSETS.fetch(/<path>).
_ASSETS_WORKER = """
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    url.pathname = url.pathname.replace(/^\\/(admin|memory-admin)\\//, "/");
    return env.ASSETS.fetch(url.toString());
  },
};
"""


def test_the_static_assets_send_the_panel_headers(tmp_path: Path) -> None:
    """Workers static assets apply ``admin/_headers`` to what ``env.ASSETS.fetch`` answers
    (the entry hands the panel's files to it as they come), and never serve the file:
    run on the pinned wrangler's local runtime."""
    require_toolchain()
    (tmp_path / "worker.js").write_text(_ASSETS_WORKER)
    (tmp_path / "wrangler.toml").write_text(
        f'name = "panel-headers"\nmain = "worker.js"\ncompatibility_date = "{compatibility_date()}"\n'
        f'[assets]\ndirectory = "{ROOT / "admin"}"\nbinding = "ASSETS"\nrun_worker_first = true\n'
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dev = subprocess.Popen(
        [str(WRANGLER), "dev", "--ip", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        env=tool_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert dev.poll() is None and time.monotonic() < deadline, "wrangler dev did not start"
            try:
                page = httpx.get(url + "/admin/authorize.html", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.5)
        for response in (page, httpx.get(url + "/memory-admin/js/app.js", timeout=5)):
            assert response.status_code == 200
            assert response.headers["content-security-policy"] == "frame-ancestors 'none'"
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["referrer-policy"] == "no-referrer"
        assert httpx.get(url + "/admin/_headers", timeout=5).status_code == 404
    finally:
        os.killpg(dev.pid, signal.SIGTERM)
        dev.wait(timeout=30)


async def test_what_was_said_is_recalled_searched_read_and_forgotten_on_the_worker(entry: types.ModuleType) -> None:
    """Through the Worker's fetch, on every binding's fake: ingested turns embedded by the
    Queue consumer are recalled as episodes by Vectorize's kind filter and by D1's word
    indexes, found by conversation_search (REST and MCP), read with conversation_get, and
    forgotten, the vectors first."""
    env = worker_env(CHATBOX_API_KEY=OWNER_KEY, MEMORY_MCP_API_KEY=MCP_KEY, ENABLE_MEMORY_RERANKER="false")
    await migrate(env)
    worker = entry.Default(SimpleNamespace(waitUntil=lambda promise: None), env)

    async def call(method: str, path: str, body: Any = None, key: str = OWNER_KEY) -> Any:
        headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
        if path == "/mcp":
            headers |= {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
        content = None if body is None else json.dumps(body).encode()
        request = SimpleNamespace(method=method, url="https://worker.example" + path, headers=headers, body=content)
        response = await worker.fetch(request)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    turns = [
        {"role": "user", "content": "I adopted a beagle called Toby"},
        {"role": "assistant", "content": "Toby is a lovely name for a beagle"},
    ]
    stored = await call("POST", "/v1/ingest/messages", {"conversation_id": "dogs", "messages": turns}, MCP_KEY)
    ids = [m["id"] for m in stored["messages"]]
    assert await deliver(entry, env) >= 1 and set(ids) <= env.VECTORIZE.vectors.keys()

    recalled = await call("POST", "/v1/memory/recall", {"query": "what breed is my dog Toby?"}, MCP_KEY)
    first = recalled["hits"][0]
    assert first["id"] in ids and first["type"] == "episode" and first["id"] in recalled["meta"]["episodes"]
    assert {"vector", "lexical"} <= set(first["channels"]), first
    found = await call("POST", "/v1/conversations/search", {"query": "beagle", "roles": ["user"]}, MCP_KEY)
    assert [t["id"] for t in found["turns"]] == ids[:1]
    tool = {"name": "conversation_search", "arguments": {"query": "beagle", "roles": ["assistant"]}}
    answer = await call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": tool}, MCP_KEY)
    assert [t["id"] for t in answer["result"]["structuredContent"]["turns"]] == ids[1:]
    window = await call("GET", f"/v1/conversations/messages/{ids[1]}?before=5", key=MCP_KEY)
    assert [t["content"] for t in window["turns"]] == [t["content"] for t in turns]

    forget = {"name": "conversation_forget", "arguments": {"conversation_id": "dogs"}}
    await call("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": forget})
    await deliver(entry, env)
    assert not set(ids) & env.VECTORIZE.vectors.keys()
    assert not await (await entry._get_runtime(env)).db.all("SELECT id FROM episodes UNION ALL SELECT id FROM messages")
