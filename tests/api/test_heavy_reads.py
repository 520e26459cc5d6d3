"""Heavy reads (the star map, the export, the health report) take turns and give way to
the rest as they go, and the export is sent a page at a time: every row once, as one
JSON document, never whole in memory."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from companion_memory import pacing
from companion_memory.api.paced_json import paced_json
from companion_memory.memory import snapshot
from companion_memory.pacing import SLICE, HeavyReads
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.conftest import OWNER_KEY, auth
from tests.fakes.embedder import HashEmbedder
from tests.live_server import LiveServer


async def write(client: httpx.AsyncClient, namespace: str, count: int) -> set[str]:
    ids = set()
    for n in range(count):
        body = {"namespace": namespace, "fact_key": f"k{n}", "content": f"{namespace} memory number {n}"}
        answer = await client.post("/v1/memories", json=body, headers=auth())
        assert answer.status_code == 201, answer.text
        ids.add(answer.json()["memory"]["id"])
    return ids


async def test_the_export_is_sent_a_page_at_a_time_with_every_row_once(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "EXPORT_PAGE", 2)
    mine, theirs = await write(client, "default", 5), await write(client, "other", 3)
    await client.post("/v1/glossary", json={"term": "bbt", "definition": "bubble tea"}, headers=auth())
    answer = await client.get("/api/memories/export", headers=auth())
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    document = answer.json()
    assert sorted(m["id"] for m in document["memories"]) == sorted(mine)  # each once, and only this namespace
    assert [g["term"] for g in document["glossary"]] == ["bbt"]
    whole = await runtime.snapshots.export("default")  # what MCP, the command line and a repair's backup get
    assert {k: v for k, v in document.items() if k not in ("exported_at", "skipped")} == {
        k: v for k, v in whole.items() if k != "exported_at"
    }
    assert document["skipped"] == []
    everything = (await client.get("/api/memories/export", params={"all": "true"}, headers=auth())).json()
    assert sorted(m["id"] for m in everything["memories"]) == sorted(mine | theirs)


def test_the_export_goes_out_as_it_is_read(
    tmp_path: Path, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "EXPORT_PAGE", 2)
    server = LiveServer(Settings(CHATBOX_API_KEY=OWNER_KEY), tmp_path / "data", embedder)
    try:
        with httpx.Client(base_url=server.url, headers=auth()) as http:
            for n in range(5):
                http.post("/v1/memories", json={"fact_key": f"k{n}", "content": f"memory {n}"}).raise_for_status()
            with http.stream("GET", "/api/memories/export") as answer:
                assert answer.headers.get("transfer-encoding") == "chunked"  # no length: not made whole first
                assert "content-length" not in answer.headers
                document = json.loads(answer.read())
        assert len(document["memories"]) == 5
    finally:
        server.stop()


async def test_an_export_of_nothing_is_still_a_document(client: httpx.AsyncClient) -> None:
    document = (await client.get("/api/memories/export", params={"namespace": "empty"}, headers=auth())).json()
    assert document["format"] == snapshot.FORMAT and document["namespace"] == "empty"
    assert document["memories"] == [] and document["messages"] == [] and document["skipped"] == []


async def test_heavy_reads_take_turns() -> None:
    heavy = HeavyReads()
    events: list[str] = []

    async def read(name: str, release: asyncio.Event | None) -> None:
        async with heavy.turn():
            events.append(f"{name} starts")
            if release:
                await release.wait()
            events.append(f"{name} ends")

    release = asyncio.Event()
    first = asyncio.create_task(read("first", release))
    second = asyncio.create_task(read("second", None))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert events == ["first starts"]  # the second waits for its turn while the first is held up
    release.set()
    await asyncio.gather(first, second)
    assert events == ["first starts", "first ends", "second starts", "second ends"]


async def test_a_heavy_read_lets_others_run_between_its_slices() -> None:
    heavy = HeavyReads()
    seen_at: list[int] = []
    position = 0

    async def other() -> None:
        seen_at.append(position)

    task = asyncio.create_task(other())
    async for position in heavy.paced(range(3 * SLICE)):  # noqa: B007 - other() reads it
        pass
    await task
    assert seen_at == [SLICE - 1]  # once the first slice is done, not after the whole read


async def test_a_heavy_read_pauses_only_while_other_work_is_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    sleep = asyncio.sleep

    async def noting(delay: float) -> None:
        pauses.append(delay)
        await sleep(delay)

    monkeypatch.setattr(pacing.asyncio, "sleep", noting)
    heavy = HeavyReads()
    async for _ in heavy.paced(range(3 * SLICE)):
        pass
    assert pauses == [0, 0, 0]  # alone: a pass through the loop after each slice, no pause
    pauses.clear()
    with heavy.foreground():
        async for _ in heavy.paced(range(3 * SLICE)):
            pass
    assert len(pauses) == 3 and all(pause > 0 for pause in pauses)


class Item(BaseModel):
    name: str
    weight: float


class Bundle(BaseModel):
    items: list[Item]
    tags: list[str]
    note: str | None
    count: int


async def test_a_paced_answer_is_the_json_fastapi_would_write() -> None:
    model = Bundle(
        items=[Item(name=f"star {n} «{n}»", weight=n / 3) for n in range(2 * SLICE + 7)],
        tags=["a", "b"],
        note=None,
        count=3,
    )
    answer = await paced_json(model, HeavyReads())
    assert answer.media_type == "application/json"
    assert answer.body == model.model_dump_json().encode()


def test_the_heavy_use_cases_are_the_heavy_reads() -> None:
    from companion_memory.application.use_case import USE_CASES

    heavy = {name for name, case in USE_CASES.items() if case.heavy}
    assert heavy == {"admin.graph", "admin.starmap", "export.namespace", "health.report", "health.repair"}
