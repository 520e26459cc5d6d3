"""``companion-memory import-history FILE --url URL``: the export uploaded in parts to a
running server (here the local one, as a user starts it; a Worker answers the same
routes), the import run by the server's queue, the progress waited for, the summary printed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion_memory.adapters.local.uploads import FileUploads
from companion_memory.api.app import create_app
from companion_memory.application.history_imports import ImportStart
from companion_memory.hosts import import_history
from companion_memory.memory.history_imports import HistoryImports, ImportRequest
from companion_memory.memory.tasks import parse_task
from companion_memory.runtime import Runtime
from companion_memory.store.history_imports import DatabaseUploads
from tests.conftest import OWNER_KEY
from tests.hosts.test_local_server import Server, run_cli

CLAUDE = Path(__file__).resolve().parents[1] / "data" / "imports" / "claude" / "conversations.json"
CHATGPT = CLAUDE.parents[1] / "chatgpt" / "conversations.json"
KEY = "import-key"


def test_import_history_uploads_to_a_server_waits_and_prints_the_summary(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", cwd=tmp_path, CHATBOX_API_KEY=KEY)
    try:
        done = run_cli(tmp_path, "import-history", str(CLAUDE), "--url", server.url, COMPANION_MEMORY_KEY=KEY)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[:2] == [
            "conversations.json: claude (a JSON array whose first element has chat_messages (Claude)) into default",
            "2 conversations, 8 messages, from 2024-09-18 to 2025-04-02",
        ]
        assert "stored 8, 0 duplicates (stored before)" in lines
        assert "uploading" in done.stderr  # the progress line

        headers = {"Authorization": f"Bearer {KEY}"}
        [job] = httpx.get(server.url + "/v1/imports", headers=headers).json()["imports"]
        assert (job["status"], job["stored"], job["received"]) == ("done", 8, CLAUDE.stat().st_size)
        recalled = httpx.post(server.url + "/v1/memory/recall", json={"query": "sourdough starter"}, headers=headers)
        assert any(hit["type"] == "episode" for hit in recalled.json()["hits"])

        again = run_cli(tmp_path, "import-history", str(CLAUDE), "--url", server.url, COMPANION_MEMORY_KEY=KEY)
        assert again.returncode == 0, again.stderr
        assert "stored 0, 8 duplicates (stored before)" in again.stdout.splitlines()

        refused = run_cli(tmp_path, "import-history", str(CLAUDE), "--url", server.url, COMPANION_MEMORY_KEY="wrong")
        assert refused.returncode != 0 and refused.stdout == ""
        assert f"{server.url}/v1/imports" in refused.stderr
    finally:
        server.stop()


class InlineQueue:
    """The server's queue, run at once in this process: each task a step of the import."""

    def __init__(self) -> None:
        self.runtime: Runtime | None = None
        self.running: set[asyncio.Task[object]] = set()

    async def send(self, body: Mapping[str, Any], *, delay_seconds: int = 0) -> None:
        assert self.runtime is not None
        task = asyncio.create_task(self.runtime.tasks.run(parse_task(dict(body))))
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def send_batch(self, bodies: Sequence[Mapping[str, Any]], *, delay_seconds: int = 0) -> None:
        for body in bodies:
            await self.send(body)

    async def stats(self) -> dict[str, int] | None:
        return None


class SmallUploads(DatabaseUploads):
    max_bytes = 4096


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
async def test_a_file_larger_than_the_server_takes_goes_in_pieces(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that takes 4 KiB at most (the Worker takes 16 MiB): the file is read here and
    sent as JSONL pieces of 2 KiB, each an import; one summary; the same file again, whole
    or in pieces, stores nothing, as the messages keep their readers' ids."""
    queue = InlineQueue()
    served = dataclasses.replace(runtime, queue=queue, uploads=SmallUploads(runtime.db))
    queue.runtime = served
    monkeypatch.setenv("COMPANION_MEMORY_KEY", OWNER_KEY)
    monkeypatch.setattr(import_history, "POLL_SECONDS", 0.01)
    transport = httpx.ASGITransport(app=create_app(served))
    start = ImportStart(name="conversations.json", size=CHATGPT.stat().st_size, namespace="imported")
    assert start.size > SmallUploads.max_bytes

    job = await import_history._remote("http://test", CHATGPT, start, "UTC", transport)
    assert (job.status, job.detected, job.stored, job.duplicates) == ("done", "chatgpt", 10, 0)
    assert job.reason is not None and job.reason.endswith("pieces") and not job.reason.endswith("1 pieces")
    assert job.summary is not None and (job.summary.conversations, job.summary.skipped) == (2, 7)
    rows = await served.db.all("SELECT metadata, source FROM messages WHERE namespace = 'imported'")
    assert len(rows) == 10 and all(json.loads(r["metadata"])["title"] for r in rows)

    whole = HistoryImports(served.db, served.clock, served.ingestor, FileUploads(tmp_path), None, "UTC")
    direct = await whole.run(
        (await whole.begin(ImportRequest("imported", CHATGPT.name, start.size, path=str(CHATGPT)))).id
    )
    assert (direct.stored, direct.duplicates) == (0, 10)
    again = await import_history._remote("http://test", CHATGPT, start, "UTC", transport)
    assert (again.stored, again.duplicates) == (0, 10)
