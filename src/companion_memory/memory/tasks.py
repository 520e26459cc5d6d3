"""Background tasks: what the queue carries and how each kind is run.

The Worker's Queue consumer and the local server's durable queue hand deliveries to
``TaskRunner.handle``. Every task does a bounded amount of work and queues its own
continuation, so no delivery runs long and a crash loses nothing: the state lives in
the database (the vector outbox, the memories), the task only says "go on".

- ``vector_mirror``: drain the outbox (index writes that failed or wait).
- ``reindex``: rebuild the vector index from the database, then drain.
- ``vector_pass``: a few pages of the pass over every row under way (memory/vector_passes.py).
- ``retention``: run retention; a backlog larger than one run continues in a new task.
- ``history_import``: the next step of a history import (memory/history_imports.py).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from ..domain.history_import import RUNNABLE
from ..ports import QueueMessage, TaskQueue
from .history_imports import HistoryImports
from .retention import PER_RUN, Retention
from .vector_mirror import VectorMirror
from .vector_passes import PASS_TASK

log = logging.getLogger("companion_memory.tasks")
MIRROR_BATCH = 100
# Outbox entries one delivery handles at most (ten batches); more continue in a new task.
MIRROR_ROUNDS = 10
RETRY_BASE_SECONDS = 30
RETRY_MAX_SECONDS = 3600


@dataclass(frozen=True)
class MirrorTask:
    task: Literal["vector_mirror"] = "vector_mirror"


@dataclass(frozen=True)
class ReindexTask:
    task: Literal["reindex"] = "reindex"
    # Empty the index and queue every live memory even if the embedder did not change.
    restart: bool = False


@dataclass(frozen=True)
class PassTask:
    task: Literal["vector_pass"] = "vector_pass"


@dataclass(frozen=True)
class RetentionTask:
    task: Literal["retention"] = "retention"
    # A continuation runs even though retention ran in the last 24 hours.
    force: bool = False


@dataclass(frozen=True)
class ImportTask:
    id: str
    task: Literal["history_import"] = "history_import"


Task = MirrorTask | ReindexTask | PassTask | RetentionTask | ImportTask
_KINDS: dict[str, type[Task]] = {
    "vector_mirror": MirrorTask,
    "reindex": ReindexTask,
    "vector_pass": PassTask,
    "retention": RetentionTask,
    "history_import": ImportTask,
}


def parse_task(body: Any) -> Task:
    """The task a queue message carries; a ValueError says why a body is none. Members
    a task does not know are ignored (a newer version may add some)."""
    if not isinstance(body, dict):
        raise ValueError("the body is not an object")
    name = body.get("task")
    kind = _KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError(f"unknown task {name!r}; known: {', '.join(_KINDS)}")
    given: dict[str, Any] = {}
    for field in (f for f in fields(kind) if f.name != "task"):
        # Every member is a flag (false unless given) or a required string.
        if field.type == "bool":
            if field.name in body and not isinstance(body[field.name], bool):
                raise ValueError(f"{field.name} must be true or false")
        elif not isinstance(body.get(field.name), str):
            raise ValueError(f"{field.name} must be a string")
        if field.name in body:
            given[field.name] = body[field.name]
    return kind(**given)


def retry_delay(attempts: int) -> int:
    """Seconds before a failed delivery is tried again: 30 s, 60 s, … up to an hour."""
    return min(RETRY_BASE_SECONDS * 2 ** max(0, attempts - 1), RETRY_MAX_SECONDS)


class TaskRunner:
    def __init__(
        self, mirror: VectorMirror, retention: Retention, imports: HistoryImports, queue: TaskQueue | None
    ) -> None:
        self.mirror = mirror
        self.retention = retention
        self.imports = imports
        self.queue = queue

    async def handle(self, messages: Sequence[QueueMessage]) -> None:
        """Run each delivered task and settle it: ack when done, retry with backoff when
        it failed. A body that is not a task is acked and logged: retrying cannot fix it."""
        for message in messages:
            try:
                task = parse_task(message.body)
            except ValueError as error:
                log.error("dropping message %s, not a task: %r (%s)", message.id, message.body, error)
                message.ack()
                continue
            try:
                result = await self.run(task)
            except Exception:  # broad on purpose: a task that fails, however, is delivered again
                log.exception("task %s failed (attempt %d); retrying", task.task, message.attempts)
                message.retry(retry_delay(message.attempts))
            else:
                log.info("task %s: %s", task.task, result)
                message.ack()

    async def run(self, task: Task) -> dict[str, Any]:
        if isinstance(task, MirrorTask):
            return await self._drain()
        if isinstance(task, ReindexTask):
            queued = await self.mirror.rebuild(restart=task.restart)
            return {"queued": queued, **await self._drain()}
        if isinstance(task, ImportTask):
            job = await self.imports.step(task.id)
            if job.status in RUNNABLE:
                await self.imports.queue_step(task.id)
            return {"import": job.id, "status": job.status, "position": job.position}
        if isinstance(task, PassTask):
            step = await self.mirror.passes.step()
            if step.queued:
                await self.mirror.schedule_retry()
            if step.running:
                await self._send(PASS_TASK)
            return {"queued": step.queued, "running": step.running}
        report = await self.retention.run(force=task.force)
        backlog = ("memories_expired", "memories_purged", "episodes_expired", "episodes_backfilled")
        if not report["skipped"] and PER_RUN in (report[name] for name in backlog):
            await self._send({"task": "retention", "force": True})
        if report.get("vectors_pending"):
            await self.mirror.schedule_retry()
        return report

    async def _drain(self) -> dict[str, Any]:
        synced = failed = 0
        for _ in range(MIRROR_ROUNDS):
            report = await self.mirror.drain(MIRROR_BATCH)
            synced, failed = synced + report.synced, failed + report.failed
            if report.synced < MIRROR_BATCH:
                break
        # Only a delivery that found work queues the next one: several deliveries that
        # arrive together collapse into one chain instead of multiplying.
        if synced or failed:
            await self.mirror.schedule_retry()
        return {"synced": synced, "failed": failed}

    async def _send(self, body: dict[str, Any]) -> None:
        if self.queue is not None:
            await self.queue.send(body)
