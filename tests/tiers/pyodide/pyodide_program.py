"""Runs inside Pyodide (tools/cloudflare/pyodide-run.mjs), on Miniflare's real D1 and Queue
bindings (``cf_env``), unchanged project code: the Cloudflare adapters (``ffi``, ``d1``,
``queue``), the migrator, the write path and the recall path end to end, and the task queue's
consumer on what Miniflare's Queues deliver (batch size, retries with their delay, the dead
letter). Vectorize and Workers AI are the only fakes (``MemoryIndex`` below; ``HashEmbedder``).
Each check prints ``ok <name>``; the first failure raises, and the runner exits 1 with the
traceback.

``tests/tiers/pyodide/test_pyodide_tier.py`` runs it and hands over the settings' MemoryConfig as JSON
(``cf_env.CONFIG``): pydantic (the settings model) has no Pyodide build here; and the queue
consumer's settings (``cf_env.QUEUE_CONSUMER``), which Miniflare was started with."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any


def ok(name: str) -> None:
    print(f"ok {name}", flush=True)


class MemoryIndex:
    """Vectorize, faked: cosine over what was upserted, filtered as the port's filter says."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.records: dict[str, Any] = {}

    async def upsert(self, records: Sequence[Any]) -> None:
        for record in records:
            self.records[record.id] = record

    async def query(self, vector: Sequence[float], *, top_k: int, filter: Mapping[str, Any] | None = None) -> list[Any]:
        from companion_memory import vector_filter
        from companion_memory.ports import VectorMatch

        conditions = vector_filter.parse(filter or {})

        def cosine(values: Sequence[float]) -> float:
            dot = sum(a * b for a, b in zip(vector, values, strict=True))
            norm = math.sqrt(sum(a * a for a in vector)) * math.sqrt(sum(b * b for b in values))
            return dot / norm if norm else 0.0

        found = [
            VectorMatch(r.id, cosine(r.values), dict(r.metadata))
            for r in self.records.values()
            if vector_filter.passes(conditions, r.metadata)
        ]
        return sorted(found, key=lambda m: -m.score)[:top_k]

    async def get(self, ids: Sequence[str]) -> list[Any]:
        return [self.records[i] for i in ids if i in self.records]

    async def delete(self, ids: Sequence[str]) -> None:
        for i in ids:
            self.records.pop(i, None)

    async def count(self) -> int:
        return len(self.records)


async def check_runtime() -> None:
    import pyodide
    from pyodide.ffi import jsnull
    from pyodide.webloop import WebLoop

    from companion_memory.adapters.cloudflare import ffi

    assert pyodide.__version__.startswith("0.28."), pyodide.__version__
    assert sys.version_info[:2] == (3, 13), sys.version
    assert ffi.IN_PYODIDE and ffi.JS_NULL is jsnull
    # The project's async code runs on Pyodide's event loop: JS promises, no threads.
    assert isinstance(asyncio.get_running_loop(), WebLoop)
    # A deadline around a whole outbound exchange (adapters/remote/http_client.py) fires here too.
    started = time.monotonic()
    try:
        async with asyncio.timeout(0.05):
            await asyncio.sleep(5)
        raise AssertionError("asyncio.timeout did not fire on the WebLoop")
    except TimeoutError:
        assert time.monotonic() - started < 2
    ok(f"pyodide {pyodide.__version__} python {sys.version.split()[0]}")


async def check_d1(db: Any, binding: Any) -> None:
    from companion_memory.ports import ConstraintError, DatabaseError, Statement

    await db.run("CREATE TABLE kv (k TEXT PRIMARY KEY, v, b BLOB, n INTEGER)")
    # None goes as JS null (jsnull): a raw None is JS undefined, which D1 refuses.
    await db.run("INSERT INTO kv (k, v) VALUES (?, ?)", ("null", None))
    assert await db.first("SELECT v FROM kv WHERE k = 'null'") == {"v": None}
    try:
        await binding.prepare("SELECT ?").bind(None).all()
        raise AssertionError("D1 took undefined")
    except Exception as error:  # noqa: BLE001 - a JsException, whose class lives in pyodide.ffi
        assert "D1_TYPE_ERROR: Type 'undefined' not supported" in str(error), str(error)
    ok("jsnull binds as SQL NULL; a raw None (undefined) is D1_TYPE_ERROR")

    blob = bytes(range(256))
    await db.run("INSERT INTO kv (k, b) VALUES (?, ?)", ("blob", blob))
    row = await db.first("SELECT b, typeof(b) AS t, length(b) AS n FROM kv WHERE k = 'blob'")
    assert row == {"b": blob, "t": "blob", "n": 256}, row
    ok("BLOBs round-trip as bytes")

    largest = 2**53 - 2  # the largest int Pyodide 0.28 sends as a Number (tests/fakes/d1.py)
    await db.run("INSERT INTO kv (k, n) VALUES (?, ?)", ("largest", largest))
    assert (await db.first("SELECT n FROM kv WHERE k = 'largest'"))["n"] == largest
    for big in (2**53 - 1, 2**63 - 1):
        try:
            await db.run("INSERT INTO kv (k, n) VALUES (?, ?)", ("big", big))
            raise AssertionError("a BigInt was bound")
        except DatabaseError as error:
            assert f"D1_TYPE_ERROR: Type 'bigint' not supported for value '{big}'" in str(error), str(error)
    assert (await db.first("SELECT 9007199254740991 AS n"))["n"] == 2**53 - 1  # a safe Number comes back an int
    beyond = (await db.first("SELECT 9007199254740993 AS n"))["n"]
    assert beyond == 9007199254740992.0 and isinstance(beyond, float), beyond
    ok("integers: 2^53-2 exact; from 2^53-1 on a bind is a BigInt D1 refuses; beyond 2^53 a result is a float")

    try:
        await db.run("INSERT INTO kv (k) VALUES ('null')")
        raise AssertionError("duplicate key taken")
    except ConstraintError as error:
        assert "SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)" in str(error), str(error)
    try:
        await db.all("SELECT nope FROM kv")
        raise AssertionError("bad column taken")
    except DatabaseError as error:
        assert not isinstance(error, ConstraintError)
        assert "no such column: nope" in str(error), str(error)
    try:
        await db.batch([Statement("INSERT INTO kv (k) VALUES ('x')"), Statement("INSERT INTO kv (k) VALUES ('x')")])
        raise AssertionError("batch took a duplicate")
    except ConstraintError:
        pass
    assert await db.first("SELECT k FROM kv WHERE k = 'x'") is None
    ok("errors: ConstraintError and DatabaseError from D1's messages; a failed batch rolls back")

    # A few at once: each is a fetch through Miniflare's proxy of the binding, which under a
    # busy machine fails ("fetch failed") when many are opened at once; workerd has no such
    # proxy in between.
    results = await asyncio.gather(*(db.first("SELECT ? AS i", (i,)) for i in range(4)))
    assert [r["i"] for r in results] == list(range(4))
    check = await db.storage_check()
    assert check.problems == () and check.size_bytes and check.size_bytes > 0
    ok("concurrent queries on the event loop; storage_check")


async def check_migrations(db: Any) -> None:
    from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations

    migrations = load_migrations(default_migrations_dir())
    applied = await apply_migrations(db, migrations)
    assert applied == [m.name for m in migrations], applied
    assert await apply_migrations(db, migrations) == []
    rows = await db.all("SELECT name FROM d1_migrations ORDER BY id")
    assert [r["name"] for r in rows] == applied
    ok(f"migrator applied {len(applied)} migrations on D1")


async def wait_for(condition: Callable[[], bool], what: str, seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class QueueConsumer:
    """The Worker's queue consumer as ``entry.Default.queue`` runs it, short of the
    application layer (pydantic): ``batch_messages`` over the batch Miniflare delivered, then
    ``TaskRunner.handle``, which acks or retries each message with its backoff. It records
    every delivery; the dead-letter queue's messages are only recorded (and so acked)."""

    def __init__(self, runner: Any, dead_letter_queue: str) -> None:
        self.runner = runner
        self.dead_letter_queue = dead_letter_queue
        self.deliveries: list[tuple[str, list[tuple[Any, int]], float]] = []

    def seen(self, body: Any, queue: str = "companion-memory") -> list[tuple[int, float]]:
        """(attempts, when) of each delivery of ``body`` on ``queue``."""
        return [(n, at) for q, batch, at in self.deliveries if q == queue for b, n in batch if b == body]

    async def __call__(self, batch: Any) -> None:
        from companion_memory.adapters.cloudflare.queue import batch_messages

        messages = batch_messages(batch)
        self.deliveries.append((str(batch.queue), [(m.body, m.attempts) for m in messages], time.monotonic()))
        if batch.queue == self.dead_letter_queue:
            return
        if any(m.body == ACK_THEN_THROW and m.attempts == 1 for m in messages):
            for message in messages:
                message.ack()
            raise RuntimeError("the handler failed after acking its messages")
        await self.runner.handle(messages)


ACK_THEN_THROW = {"probe": "ack then throw"}


async def check_queue(db: Any, binding: Any, settings: dict[str, Any]) -> tuple[Awaitable[None], QueueConsumer]:
    """Queues on Miniflare: the producer adapter sends, Miniflare's broker delivers to our
    consumer, which settles each message. Returns the check of retries, delays and the dead
    letter, which takes seconds of real time: the caller awaits it after other checks; and
    the consumer, for the checks of what else the queue runs."""
    import cf_env
    from pyodide.ffi import create_proxy

    from companion_memory.adapters.cloudflare.queue import CloudflareQueue
    from companion_memory.clock import FixedClock
    from companion_memory.memory import tasks
    from companion_memory.memory.history_imports import HistoryImports
    from companion_memory.memory.ingest import MessageIngestor
    from companion_memory.memory.retention import Retention
    from companion_memory.memory.vector_mirror import VectorMirror
    from companion_memory.store.history_imports import DatabaseUploads
    from tests.fakes.embedder import HashEmbedder

    options = json.loads(cf_env.QUEUE_CONSUMER)
    batch_size, max_retries = options["maxBatchSize"], options["maxRetries"]
    queue = CloudflareQueue(binding)
    clock = FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    mirror = VectorMirror(db, MemoryIndex(384), HashEmbedder(dimensions=384, model="test-words"), clock, queue)
    imports = HistoryImports(db, clock, MessageIngestor(db, clock, mirror), DatabaseUploads(db), queue, "UTC")
    runner = tasks.TaskRunner(mirror, Retention(db, mirror, clock, memory_config(settings)), imports, queue)
    consumer = QueueConsumer(runner, options["deadLetterQueue"])
    cf_env.on_queue(create_proxy(consumer))

    everything = [{"task": "vector_mirror", "n": n, "none": None} for n in range(batch_size + 2)]
    await queue.send(everything[0])
    await queue.send_batch(everything[1:])
    await wait_for(lambda: all(consumer.seen(body) for body in everything), "the sent messages")
    sizes = [len(batch) for _, batch, _ in consumer.deliveries]
    assert max(sizes) == batch_size and sum(sizes) == len(everything), sizes
    assert all([n for n, _ in consumer.seen(body)] == [1] for body in everything)
    ok(f"queue: send and send_batch reach our consumer as JSON (null kept), in batches of at most {batch_size}")

    # Queues redelivers none of a batch's explicitly acked messages when the handler throws
    # afterwards; Miniflare redelivers them all (its documented exception here).
    await queue.send(ACK_THEN_THROW)
    await wait_for(lambda: len(consumer.seen(ACK_THEN_THROW)) == 2, "the acked message's redelivery")
    assert [n for n, _ in consumer.seen(ACK_THEN_THROW)] == [1, 2]
    ok("queue (Miniflare only): a message acked before the handler threw is delivered again")

    # Delays are real seconds on Miniflare: the backoff (30 s, 60 s, ...) is cut to 1 s.
    tasks.RETRY_BASE_SECONDS = tasks.RETRY_MAX_SECONDS = 1
    drain = mirror.drain

    async def broken(limit: int = 200) -> Any:
        raise RuntimeError("D1 is read-only during maintenance")

    mirror.drain = broken  # type: ignore[method-assign]
    failing = {"task": "vector_mirror", "n": "fails"}
    await queue.send(failing)

    async def retried_then_dead_lettered() -> None:
        await wait_for(lambda: consumer.seen(failing, options["deadLetterQueue"]), "the dead letter")
        mirror.drain = drain  # type: ignore[method-assign]
        attempts = consumer.seen(failing)
        assert [n for n, _ in attempts] == list(range(1, max_retries + 2)), attempts
        gaps = [later - earlier for (_, earlier), (_, later) in itertools.pairwise(attempts)]
        assert all(gap >= 0.95 for gap in gaps), gaps  # retry({delaySeconds: 1}) held each back
        ok(f"queue: a failing task is retried with its delay, {max_retries} times, then dead-lettered")

    return retried_then_dead_lettered(), consumer


def memory_config(settings: dict[str, Any]) -> Any:
    from companion_memory.memory.config import MemoryConfig

    return MemoryConfig(**{**settings, "memory_sensitive_allow": frozenset(settings["memory_sensitive_allow"])})


async def check_write_and_recall(db: Any, settings: dict[str, Any]) -> None:
    from companion_memory.clock import FixedClock
    from companion_memory.memory.drafts import Actor, MemoryDraft
    from companion_memory.memory.memories import MemoryWriter
    from companion_memory.memory.recall.pipeline import Recall
    from companion_memory.memory.vector_mirror import VectorMirror
    from tests.fakes.embedder import HashEmbedder

    config = memory_config(settings)
    clock = FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    embedder = HashEmbedder(dimensions=384, model="test-words")
    index = MemoryIndex(384)
    mirror = VectorMirror(db, index, embedder, clock)
    writer = MemoryWriter(db, mirror, clock, config)
    owner = Actor("owner", owner=True)
    drafts = [
        MemoryDraft(content="She drinks oolong tea every morning", type="preference", fact_key="morning drink"),
        MemoryDraft(content="Her cat is called Miso", type="fact", fact_key="cat name"),
        MemoryDraft(content="Locker code ZQW4471K", type="fact", fact_key="locker code", tags=["code"]),
    ]
    written = await asyncio.gather(*(writer.upsert("default", draft, owner) for draft in drafts))
    assert all(r.created and r.vector == "synced" for r in written), written
    assert await index.count() == 3
    again = await writer.upsert("default", MemoryDraft(content="Her cat is called Miso", fact_key="cat name"), owner)
    assert not again.created and again.memory.id == written[1].memory.id
    ok("write path: upserts stored on D1 and mirrored to the index")

    recall = Recall(db, mirror, clock, config)
    result = await recall.run("what tea does she drink in the morning?", k=3, rerank=False, account=True)
    assert result.hits and result.hits[0].memory.id == written[0].memory.id, result
    assert "vector" in result.hits[0].channels and "lexical" in result.hits[0].channels, result.hits[0].channels
    assert (await recall.run("qw447", vector=False)).hits[0].memory.id == written[2].memory.id
    ok("recall path: vector, full-text and substring channels on D1")


async def check_episodes(db: Any, settings: dict[str, Any]) -> None:
    from companion_memory.clock import FixedClock
    from companion_memory.memory.conversation_search import ConversationSearch
    from companion_memory.memory.episode_forget import EpisodeForgetter
    from companion_memory.memory.ingest import IncomingMessage, MessageIngestor
    from companion_memory.memory.recall.pipeline import Recall
    from companion_memory.memory.vector_mirror import VectorMirror
    from companion_memory.store.episode_search import EpisodeScope
    from companion_memory.store.episodes import EpisodeStore
    from tests.fakes.embedder import HashEmbedder

    clock = FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))
    index = MemoryIndex(384)
    mirror = VectorMirror(db, index, HashEmbedder(dimensions=384, model="test-words"), clock)
    said = [
        IncomingMessage(role="user", content="我周末去爬山了 <private>和前任</private>"),
        IncomingMessage(role="assistant", content="the wifi password: hunter22!"),
    ]
    outcomes = await MessageIngestor(db, clock, mirror).ingest("episodes", said, conversation_id="c1")
    ids = [o.id for o in outcomes]
    rows = await db.all("SELECT id, content FROM episodes WHERE namespace = 'episodes' ORDER BY created_at, rowid")
    assert [(r["id"], r["content"]) for r in rows] == list(
        zip(ids, ["我周末去爬山了", "the wifi password: [credential]"], strict=True)
    )
    found = await db.all("SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?", ("爬山",))
    assert len(found) == 1, found
    assert (await mirror.drain()).synced == 2 and {r.metadata["kind"] for r in index.records.values()} == {"episode"}
    recall = Recall(db, mirror, clock, memory_config(settings))
    result = await recall.run("爬山", namespace="episodes", k=3, rerank=False)
    assert [(h.memory.id, h.episode is not None) for h in result.hits[:1]] == [(ids[0], True)], result.hits
    assert {"vector", "lexical"} <= result.hits[0].channels.keys(), result.hits[0].channels
    [turn] = await ConversationSearch(recall).search(
        "episodes", "wifi password", EpisodeScope(roles=("assistant",)), limit=5
    )
    assert (turn.id, turn.content) == (ids[1], "the wifi password: [credential]")
    window = await EpisodeStore(db).around(turn, before=5, after=5)
    assert sorted(e.id for e in window) == sorted(ids)  # said in the same instant
    ok("episode recall: found by words and meaning on D1, searched by role, its conversation read around it")
    assert await EpisodeForgetter(db, mirror, clock).forget("episodes", conversation_id="c1") == 2
    assert await index.count() == 0 and not await db.all("SELECT id FROM messages WHERE namespace = 'episodes'")
    ok("episode path: message and episode in one batch on D1, private cut, secret masked, embedded, forgotten")


def check_history() -> None:
    import io
    import zipfile
    from pathlib import Path

    from companion_memory.history.reading import read_history

    imports = Path("/repo/tests/data/imports")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as packed:
        packed.writestr("conversations.json", (imports / "chatgpt/conversations.json").read_bytes())
        packed.writestr("chat.html", "<html></html>")
    run = read_history(archive, "export.zip")
    assert (run.format, len(list(run.messages()))) == ("chatgpt", 10), run.format
    with (imports / "cherry-studio/data.json").open("rb") as file:
        run = read_history(file, "data.json")
        assert (run.format, len(list(run.messages()))) == ("cherry-studio", 6), run.format
    ok("history import: a ChatGPT export zip and a Cherry Studio backup read as streams")


async def check_history_import(db: Any, consumer: QueueConsumer) -> None:
    """The Worker's import: an export uploaded in parts, each a row of D1, then checked and
    stored by the queue's deliveries, a step each (``TaskRunner`` → ``HistoryImports.step``)."""
    import random
    from pathlib import Path

    from companion_memory.memory.history_imports import PART_BYTES, ImportRequest

    imports = consumer.runner.imports
    part = random.Random(32).randbytes(PART_BYTES)
    await imports.uploads.put("a-whole-part", 0, part)
    with await imports.uploads.open("a-whole-part") as file:
        assert file.read() == part
    await imports.uploads.remove("a-whole-part")
    ok(f"history import: a part of {PART_BYTES} bytes round-trips byte-exact through D1")

    content = Path("/repo/tests/data/imports/claude/conversations.json").read_bytes()
    job = await imports.begin(ImportRequest(namespace="imports", name="conversations.json", size=len(content)))
    middle = len(content) // 2
    await imports.receive(job.id, 0, content[:middle])
    await imports.receive(job.id, middle, content[middle:])  # the last part queues the job
    for _ in range(3000):
        job = await imports.get(job.id)
        if job.status in ("done", "failed"):
            break
        await asyncio.sleep(0.02)
    assert (job.status, job.detected, job.stored, job.error) == ("done", "claude", 8, None), job
    steps = consumer.seen({"task": "history_import", "id": job.id})
    assert len(steps) >= 2, steps  # the check, then the storing
    assert await db.all("SELECT count(*) AS n FROM episodes WHERE namespace = 'imports'") == [{"n": 8}]
    ok("history import: uploaded in parts to D1, checked and stored by the queue's deliveries")


async def main() -> None:
    import cf_env

    from companion_memory.adapters.cloudflare.d1 import D1Database

    def refuse_blocking(*_: object) -> None:
        raise AssertionError("time.sleep blocks the Worker's only thread")

    time.sleep = refuse_blocking  # nothing on these paths may block the event loop
    db = D1Database(cf_env.DB)
    await check_runtime()
    await check_d1(db, cf_env.DB)
    await check_migrations(db)
    settings = json.loads(cf_env.CONFIG)
    queue_retries, consumer = await check_queue(db, cf_env.TASKS, settings)
    await check_write_and_recall(db, settings)
    await check_episodes(db, settings)
    check_history()
    await queue_retries
    await check_history_import(db, consumer)
