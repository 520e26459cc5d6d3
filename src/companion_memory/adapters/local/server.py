"""The local server: the shared ASGI app plus the background work the Worker gets from
its Queue and Cron: a durable task queue in the local database, and the nightly job."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from ...api.app import PANEL_PREFIXES, create_app
from ...application import dream, tasks
from ...application.principal import SYSTEM
from ...memory.nightly import next_run
from ...ports import QueueMessage
from ...runtime import Runtime
from ...settings import Settings
from .http_timeouts import BodyTimeout, header_timeout_protocol
from .task_queue import LocalTaskQueue
from .vector_index import LocalVectorIndex

log = logging.getLogger("companion_memory")
QUEUE_POLL_SECONDS = 1.0


async def catch_up_mirror(runtime: Runtime) -> None:
    """At start: queue what the index lacks (a new or emptied index) and a drain of
    whatever the outbox holds from before."""
    problem = await runtime.mirror.mismatch()
    if problem:
        log.warning("%s", problem)
        return
    queued = await runtime.mirror.enqueue_missing()
    if queued:
        log.info("vector index is missing %d memories; rebuilding it in the background", queued)
    await runtime.mirror.schedule_retry()


async def _handle(runtime: Runtime, messages: Sequence[QueueMessage]) -> None:
    await tasks.handle(runtime, SYSTEM, tasks.Deliveries(messages=messages))


async def work_queue(runtime: Runtime, queue: LocalTaskQueue, poll: float = QUEUE_POLL_SECONDS) -> None:
    """The Worker's Queue consumer, locally: deliver due tasks until none are left, then poll."""
    try:
        await catch_up_mirror(runtime)
    except Exception:  # broad on purpose: the queue worker must start; the outbox catches up later
        log.exception("could not check the vector index at start")
    while True:
        try:
            delivered = await queue.deliver(lambda messages: _handle(runtime, messages))
        except Exception:  # broad on purpose: the loop must outlive a pass; its tasks stay for the next
            log.exception("task queue pass failed")
            delivered = 0
        if not delivered:
            await asyncio.sleep(poll)


async def nightly_schedule(runtime: Runtime) -> None:
    """The Worker's Cron, locally: the nightly job at 04:10 in DREAM_TIME_ZONE."""
    while True:
        now = runtime.clock.now()
        due = next_run(now, runtime.settings.DREAM_TIME_ZONE)
        await asyncio.sleep((due - now).total_seconds())
        report = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger())
        log.info("nightly job: %s", "; ".join(f"{step.name}: {step.describe()}" for step in report.steps))


class RedactToken(logging.Filter):
    """Cuts ``token=…`` out of access-log lines (uvicorn logs the path with its query): the
    MCP routes take the key as ``?token=``. They also cut it out of the request, so this is
    the second guard, for a line logged before (or without) the route."""

    pattern = re.compile(r"([?&]token=)[^&\s\"]*", re.IGNORECASE)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self.pattern.sub(r"\1[redacted]", a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = self.pattern.sub(r"\1[redacted]", record.msg)
        return True


def redact_access_log() -> None:
    """Installs ``RedactToken`` on uvicorn's access log, once; the local server calls it
    before it serves (the Worker has no access log of ours and never imports this)."""
    access_log = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactToken) for f in access_log.filters):
        access_log.addFilter(RedactToken())


def admin_dir() -> Path:
    """The packaged panel in an installed wheel, else the repository's ``admin/``."""
    packaged = Path(__file__).resolve().parents[2] / "_admin"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[4] / "admin"


def create_local_app(runtime: Runtime) -> FastAPI:
    if not isinstance(runtime.queue, LocalTaskQueue):
        raise TypeError("the local server needs the runtime from build_local_runtime (with its LocalTaskQueue)")
    queue = runtime.queue

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # What the start made (the app, the index, the engine's tables) lives as long as
        # the process: it is left out of the collector's full passes, which went over all
        # of it in one piece, nothing else running meanwhile (80 ms at 3,000 memories,
        # set off every few heavy reads, whose rows are many small objects).
        gc.collect()
        gc.freeze()
        tasks = [asyncio.create_task(work_queue(runtime, queue)), asyncio.create_task(nightly_schedule(runtime))]
        try:
            yield
        finally:
            gc.unfreeze()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if isinstance(runtime.vectors, LocalVectorIndex):
                runtime.vectors.save()

    app = create_app(runtime, lifespan=lifespan)
    # In the Worker, Workers static assets serve these files.
    panel = StaticFiles(directory=admin_dir(), html=True)
    for prefix in PANEL_PREFIXES:
        app.mount(prefix, panel, name=prefix.strip("/"))
    return app


def server_options(app: Any, settings: Settings) -> dict[str, Any]:
    """What ``uvicorn.run`` / ``uvicorn.Config`` take to serve ``app`` with the
    connection time limits (SERVER_*_SECONDS): the app with its body limit, the h11
    protocol with its header limit, and the keep-alive limit."""
    return {
        "app": BodyTimeout(app, settings.SERVER_BODY_TIMEOUT_SECONDS),
        "http": header_timeout_protocol(settings.SERVER_HEADER_TIMEOUT_SECONDS),
        "timeout_keep_alive": settings.SERVER_KEEP_ALIVE_SECONDS,
    }
