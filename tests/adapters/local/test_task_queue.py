"""The local server's durable task queue and the tasks it carries."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.adapters.local.task_queue import MAX_ATTEMPTS, LocalTaskQueue
from companion_memory.clock import FixedClock
from companion_memory.hosts.local_server import catch_up_mirror, work_queue
from companion_memory.memory import vector_passes
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.memory.ingest import IncomingMessage
from companion_memory.memory.vector_passes import PassStep
from companion_memory.ports import QueueMessage, VectorIndexError, VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.conftest import FlakyIndex
from tests.fakes.embedder import HashEmbedder

START = datetime(2026, 11, 30, 12, tzinfo=UTC)


class Recorder:
    def __init__(self, verdict: str = "ack", delay: int = 0, raise_: bool = False) -> None:
        self.verdict, self.delay, self.raise_ = verdict, delay, raise_
        self.seen: list[tuple[Any, int]] = []

    async def __call__(self, messages: Sequence[QueueMessage]) -> None:
        for message in messages:
            self.seen.append((message.body, message.attempts))
            if self.raise_:
                raise RuntimeError("consumer crashed")
            message.ack() if self.verdict == "ack" else message.retry(self.delay)


@pytest.fixture
async def queue(tmp_path: Path) -> LocalTaskQueue:
    queue = LocalTaskQueue(SqliteDatabase.open(tmp_path / "q.sqlite3"), FixedClock(START))
    await queue.prepare()
    return queue


async def test_tasks_wait_for_their_delay_and_survive_a_restart(tmp_path: Path) -> None:
    clock = FixedClock(START)
    first = LocalTaskQueue(SqliteDatabase.open(tmp_path / "q.sqlite3"), clock)
    await first.prepare()
    await first.send({"task": "vector_mirror"}, delay_seconds=60)
    await first.send_batch([{"task": "retention", "force": True}, {"task": "reindex"}])
    again = LocalTaskQueue(SqliteDatabase.open(tmp_path / "q.sqlite3"), clock)  # a new process
    await again.prepare()
    seen = Recorder()
    assert await again.deliver(seen) == 2
    assert [body for body, _ in seen.seen] == [{"task": "retention", "force": True}, {"task": "reindex"}]
    assert await again.deliver(seen) == 0  # acked ones are gone; the delayed one is not due
    clock.advance(seconds=60)
    assert await again.deliver(seen) == 1 and seen.seen[-1] == ({"task": "vector_mirror"}, 1)
    assert await again.stats() == {"queued": 0, "dead": 0}


async def test_the_same_waiting_task_is_kept_once_and_brought_forward(queue: LocalTaskQueue) -> None:
    await queue.send({"task": "vector_mirror"}, delay_seconds=600)
    await queue.send({"task": "vector_mirror"}, delay_seconds=15)
    await queue.send({"task": "vector_mirror"}, delay_seconds=900)
    assert await queue.stats() == {"queued": 1, "dead": 0}
    queue.clock.advance(seconds=15)  # type: ignore[attr-defined]
    assert await queue.deliver(Recorder()) == 1


async def test_retry_backs_off_and_a_task_that_keeps_failing_is_set_aside(queue: LocalTaskQueue) -> None:
    await queue.send({"task": "vector_mirror"})
    failing = Recorder(verdict="retry", delay=30)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert await queue.deliver(failing) == 1
        assert failing.seen[-1][1] == attempt
        assert await queue.deliver(failing) == 0  # not before its delay
        queue.clock.advance(seconds=30)  # type: ignore[attr-defined]
    assert await queue.stats() == {"queued": 0, "dead": 1}
    assert await queue.deliver(failing) == 0


async def test_a_crashing_consumer_gets_its_messages_again(queue: LocalTaskQueue) -> None:
    await queue.send({"task": "retention"})
    assert await queue.deliver(Recorder(raise_=True)) == 1
    queue.clock.advance(seconds=30)  # type: ignore[attr-defined]
    seen = Recorder()
    assert await queue.deliver(seen) == 1 and seen.seen == [({"task": "retention"}, 2)]
    row = await queue.db.first("SELECT COUNT(*) AS n FROM local_tasks")
    assert row == {"n": 0}


async def test_the_local_server_retries_a_failed_vector_write_through_the_queue(tmp_path: Path) -> None:
    clock = FixedClock(START)
    runtime = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=clock)
    flaky = FlakyIndex(runtime.vectors)  # type: ignore[arg-type]
    runtime.vectors = flaky
    flaky.down = True
    written = await runtime.writer.upsert(
        "default", MemoryDraft(content="Walks the dog at 7", fact_key="dog.walk"), Actor("t")
    )
    assert written.vector == "pending"
    assert isinstance(runtime.queue, LocalTaskQueue) and await runtime.queue.stats() == {"queued": 1, "dead": 0}
    flaky.down = False
    clock.advance(seconds=16)
    assert await runtime.queue.deliver(runtime.tasks.handle) == 1
    assert [r.id for r in await flaky.get([written.memory.id])] == [written.memory.id]
    assert await runtime.queue.stats() == {"queued": 0, "dead": 0}


async def test_at_start_the_server_queues_what_the_index_lacks(tmp_path: Path) -> None:
    import asyncio

    runtime = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=FixedClock(START))
    ids = [
        (await runtime.writer.create("default", MemoryDraft(content=f"fact {i}"), Actor("t"))).memory.id
        for i in range(3)
    ]
    await runtime.vectors.delete(ids)  # an index lost or emptied while the server was down
    worker = asyncio.create_task(work_queue(runtime, runtime.queue, poll=0.01))  # type: ignore[arg-type]
    try:
        for _ in range(200):
            if len(await runtime.vectors.get(ids)) == 3:
                break
            await asyncio.sleep(0.01)
    finally:
        worker.cancel()
    assert len(await runtime.vectors.get(ids)) == 3


async def test_retention_backlog_continues_in_a_new_task(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    from companion_memory.memory import retention, tasks

    sent: list[dict[str, Any]] = []

    class Queue:
        async def send(self, body: dict[str, Any], *, delay_seconds: int = 0) -> None:
            sent.append(body)

        async def send_batch(self, bodies: Sequence[dict[str, Any]], *, delay_seconds: int = 0) -> None:
            sent.extend(bodies)

    monkeypatch.setattr(retention, "PER_RUN", 2)
    monkeypatch.setattr(tasks, "PER_RUN", 2)
    runtime.queue = Queue()
    for i in range(3):
        await runtime.writer.create("default", MemoryDraft(content=f"old fact {i}"), Actor("t"))
    runtime.clock.advance(days=181)  # type: ignore[attr-defined]
    first = await runtime.tasks.run(tasks.RetentionTask())
    assert first["memories_expired"] == 2 and sent == [{"task": "retention", "force": True}]
    second = await runtime.tasks.run(tasks.parse_task(sent[0]))
    assert second["skipped"] is False and second["memories_expired"] == 1
    assert sent == [{"task": "retention", "force": True}]  # no backlog left: no third task


async def test_an_import_fills_the_index_through_the_queue(tmp_path: Path) -> None:
    source = await build_local_runtime(Settings(), tmp_path / "a", embedder=HashEmbedder(), clock=FixedClock(START))
    for i in range(3):
        await source.writer.create("default", MemoryDraft(content=f"imported fact {i}"), Actor("t"))
    document = await source.snapshots.export("default")

    target = await build_local_runtime(Settings(), tmp_path / "b", embedder=HashEmbedder(), clock=FixedClock(START))
    assert (await target.snapshots.import_(document))["imported"]["memories"] == 3
    assert await target.vectors.count() == 0 and isinstance(target.queue, LocalTaskQueue)
    assert await target.queue.deliver(target.tasks.handle) == 1  # the vector_mirror task the import queued
    assert await target.vectors.count() == 3


async def test_a_reindex_finishes_in_the_background_after_its_first_step(tmp_path: Path) -> None:
    runtime = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=FixedClock(START))
    for i in range(250):
        await runtime.writer.create("default", MemoryDraft(content=f"fact number {i}"), Actor("t"))
    assert isinstance(runtime.queue, LocalTaskQueue)
    while await runtime.queue.deliver(runtime.tasks.handle):  # what the writes queued
        pass
    assert await runtime.mirror.rebuild(restart=True) == 250  # the one step a client asked for
    await runtime.mirror.drain(100)  # then it went away
    while await runtime.queue.deliver(runtime.tasks.handle):
        pass
    assert await runtime.vectors.count() == 250 and (await runtime.mirror.outbox.stats())["pending"] == 0
    assert await runtime.mirror.passes.current() is None


async def fails(*_: object, **__: object) -> None:
    raise VectorIndexError("vector index unavailable")


async def test_a_reindex_goes_a_page_at_a_time_and_on_after_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_passes, "PASS_PAGE", 2)
    clock = FixedClock(START)
    runtime = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=clock)
    for i in range(5):
        await runtime.writer.create("default", MemoryDraft(content=f"fact number {i}"), Actor("t"))
    said = [IncomingMessage(role="user", content=f"I said thing {i}") for i in range(3)]
    episodes = [o.id for o in await runtime.ingestor.ingest("default", said)]
    assert isinstance(runtime.queue, LocalTaskQueue)
    while await runtime.queue.deliver(runtime.tasks.handle):
        pass
    assert await runtime.vectors.count() == 8

    assert await runtime.mirror.start_reindex() == 8  # begun; nothing done yet
    assert await runtime.mirror.passes.step(pages=1) == PassStep(queued=2, running=True)
    assert await runtime.vectors.count() == 6 and await runtime.mirror.passes.remaining() == 6
    # The owner forgets an episode the pass has not reached while the index is down: the
    # pass leaves the purge waiting in the outbox as it is.
    with monkeypatch.context() as down:
        down.setattr(runtime.vectors, "delete", fails)
        assert await runtime.episode_forgetter.forget("default", ids=[episodes[0]]) == 1
    runtime.vectors.close()  # type: ignore[attr-defined]
    runtime.db.close()  # type: ignore[attr-defined]

    restarted = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=clock)
    await catch_up_mirror(restarted)  # the pass goes on from its place
    clock.advance(minutes=1)
    assert isinstance(restarted.queue, LocalTaskQueue)
    while await restarted.queue.deliver(restarted.tasks.handle):
        pass
    assert await restarted.mirror.passes.current() is None
    assert await restarted.vectors.count() == 7 and (await restarted.mirror.outbox.stats())["pending"] == 0
    assert await restarted.db.all("SELECT id FROM episodes WHERE id = ?", (episodes[0],)) == []


async def test_a_start_looks_up_no_row_and_writes_every_vector_owed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FixedClock(START)
    runtime = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=clock)
    ids = [
        (await runtime.writer.create("default", MemoryDraft(content=f"fact {i}"), Actor("t"))).memory.id
        for i in range(3)
    ]
    # A vector owed when the server stopped (the index failed, or the process died between
    # the row's batch and the index write): the outbox has it, written in the row's batch.
    with monkeypatch.context() as down:
        down.setattr(runtime.vectors, "upsert", fails)
        owed = (await runtime.writer.create("default", MemoryDraft(content="a fact owed"), Actor("t"))).memory.id
    runtime.vectors.close()  # type: ignore[attr-defined]
    runtime.db.close()  # type: ignore[attr-defined]

    restarted = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(), clock=clock)
    looked_up: list[str] = []
    get = restarted.vectors.get

    async def counted(wanted: Sequence[str]) -> list[VectorRecord]:
        looked_up.extend(wanted)
        return await get(wanted)

    monkeypatch.setattr(restarted.vectors, "get", counted)
    await catch_up_mirror(restarted)
    assert looked_up == [] and await restarted.mirror.passes.current() is None
    clock.advance(minutes=1)
    assert isinstance(restarted.queue, LocalTaskQueue)
    while await restarted.queue.deliver(restarted.tasks.handle):
        pass
    assert {r.id for r in await get([*ids, owed])} == {*ids, owed}


@pytest.mark.parametrize(
    "body, reason",
    [
        ("vector_mirror", "not an object"),
        ({"task": "launch_rockets"}, "unknown task"),
        ({}, "unknown task"),
        ({"task": "retention", "force": "yes"}, "force must be true or false"),
    ],
)
def test_a_body_that_is_not_a_task_says_why(body: object, reason: str) -> None:
    from companion_memory.memory import tasks

    with pytest.raises(ValueError, match=reason):
        tasks.parse_task(body)


def test_task_bodies_read_back_as_tasks() -> None:
    from companion_memory.memory import tasks

    assert tasks.parse_task({"task": "vector_mirror"}) == tasks.MirrorTask()
    assert tasks.parse_task({"task": "reindex", "restart": True, "newer": 1}) == tasks.ReindexTask(restart=True)
    assert tasks.parse_task({"task": "retention", "force": True}) == tasks.RetentionTask(force=True)
    assert tasks.parse_task({"task": "vector_pass"}) == tasks.PassTask()
