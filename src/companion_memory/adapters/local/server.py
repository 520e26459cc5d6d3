"""The local server: the shared ASGI app plus the background work the Worker gets from
its Queue and Cron (here: retrying vector-mirror writes, and the nightly job)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from ...api.app import create_app
from ...memory.nightly import next_run
from ...runtime import Runtime

log = logging.getLogger("companion_memory")
MIRROR_RETRY_SECONDS = 15.0


async def keep_mirror_in_step(runtime: Runtime, interval: float = MIRROR_RETRY_SECONDS) -> None:
    """Queue what the index lacks, then drain the outbox now and every ``interval``."""
    problem = await runtime.mirror.mismatch()
    if problem:
        log.warning("%s", problem)
    queued = await runtime.mirror.enqueue_missing() if not problem else 0
    if queued:
        log.info("vector index is missing %d memories; rebuilding it in the background", queued)
    while True:
        try:
            while (report := await runtime.mirror.drain()).synced:
                pass
            if report.failed:
                log.warning("vector mirror: %d writes failed; retrying with backoff", report.failed)
        except Exception:  # keep retrying: the outbox still holds the work
            log.exception("vector mirror pass failed")
        await asyncio.sleep(interval)


async def nightly_schedule(runtime: Runtime) -> None:
    """The Worker's Cron, locally: the nightly job at 04:10 in DREAM_TIME_ZONE."""
    while True:
        now = runtime.clock.now()
        due = next_run(now, runtime.settings.DREAM_TIME_ZONE)
        await asyncio.sleep((due - now).total_seconds())
        log.info("nightly job: %s", await runtime.nightly.run())


def admin_dir() -> Path:
    """The packaged panel in an installed wheel, else the repository's ``admin/``."""
    packaged = Path(__file__).resolve().parents[2] / "_admin"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[4] / "admin"


def create_local_app(runtime: Runtime) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        tasks = [asyncio.create_task(keep_mirror_in_step(runtime)), asyncio.create_task(nightly_schedule(runtime))]
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    app = create_app(runtime, lifespan=lifespan)
    # In the Worker, Workers static assets serve these files.
    panel = StaticFiles(directory=admin_dir(), html=True)
    app.mount("/admin", panel, name="admin")
    app.mount("/memory-admin", panel, name="memory-admin")
    return app
