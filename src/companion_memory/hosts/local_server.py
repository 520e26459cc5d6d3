"""The local server: the shared ASGI app plus the background work the Worker gets from
its Queue and Cron: a durable task queue in the local database, and the nightly job."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import logging
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.types import Scope

from ..adapters.local import docs
from ..adapters.local.embedder import BundledEmbedder
from ..adapters.local.http_timeouts import BodyTimeout, header_timeout_protocol
from ..adapters.local.task_queue import LocalTaskQueue
from ..adapters.local.vector_index import LocalVectorIndex
from ..api.app import create_app
from ..api.panel_headers import WORKER_HEADERS_FILE, panel_headers
from ..application import dream, tasks
from ..application.principal import SYSTEM
from ..domain.endpoints import PANEL_PREFIXES
from ..nightly.job import next_run
from ..ports import QueueMessage
from ..runtime import Runtime
from ..settings import Settings

log = logging.getLogger("companion_memory")
QUEUE_POLL_SECONDS = 1.0
# How often a rebuild of the vector index says how far it has got.
REBUILD_REPORT_SECONDS = 15.0


async def catch_up_mirror(runtime: Runtime) -> int:
    """At start: a drain of whatever the outbox holds from before, the pass under way (a
    reindex, a sweep) going on, and a sweep if the index holds fewer vectors than the
    rows it mirrors and the outbox owes (a new, emptied or replaced index). A few counts
    however many rows there are: every vector a write owes is in the outbox, written in
    the write's own batch, so only an index that lost vectors behind the database's back
    needs the sweep, which goes over the rows in the background.

    An index that an earlier engine of the bundled model made is made again by this one
    through a reindex pass (its vectors are never mixed with this engine's); returns how
    many rows that re-embeds (0 for none)."""
    mirror = runtime.mirror
    await mirror.passes.resume()
    problem = await mirror.mismatch()
    if problem:
        state = await mirror.state.get()
        if isinstance(runtime.embedder, BundledEmbedder) and state and state.model in runtime.embedder.replaces:
            running = await mirror.passes.current()
            # A restart during the pass goes on with it rather than removing vectors again.
            queued = await mirror.passes.remaining() if running and running.mode == "reindex" else 0
            queued = queued or await mirror.start_reindex()
            log.info(
                "the vector index was made by %s: embedding its %d rows again with %s in the background",
                state.model,
                queued,
                runtime.embedder.model,
            )
            return queued
        log.warning("%s", problem)
        return 0
    lacking = await mirror.unaccounted()
    if lacking > 0 and await mirror.passes.begin("sweep"):
        log.info("the vector index lacks about %d vectors; looking for them in the background", lacking)
    await mirror.schedule_retry()
    return 0


async def report_rebuild(runtime: Runtime, total: int, every: float = REBUILD_REPORT_SECONDS) -> None:
    """Logs how far a rebuild of the index has got: the rows its pass has not reached yet
    and those queued in the outbox are still to embed."""
    started = asyncio.get_running_loop().time()
    mirror = runtime.mirror
    while True:
        await asyncio.sleep(every)
        left = await mirror.passes.remaining() + int((await mirror.outbox.stats())["pending"] or 0)
        if not left:
            elapsed = asyncio.get_running_loop().time() - started
            log.info("vector index rebuilt: %d rows embedded in %.0f s", total, elapsed)
            return
        log.info("rebuilding the vector index: %d of %d rows embedded", max(0, total - left), total)


async def _handle(runtime: Runtime, messages: Sequence[QueueMessage]) -> None:
    await tasks.handle(runtime, SYSTEM, tasks.Deliveries(messages=messages))


async def work_queue(runtime: Runtime, queue: LocalTaskQueue, poll: float = QUEUE_POLL_SECONDS) -> None:
    """The Worker's Queue consumer, locally: deliver due tasks until none are left, then poll."""
    reporter: asyncio.Task[None] | None = None
    try:
        if rebuilding := await catch_up_mirror(runtime):
            reporter = asyncio.create_task(report_rebuild(runtime, rebuilding))
    except Exception:  # broad on purpose: the queue worker must start; the outbox catches up later
        log.exception("could not check the vector index at start")
    try:
        while True:
            try:
                delivered = await queue.deliver(lambda messages: _handle(runtime, messages))
            except Exception:  # broad on purpose: the loop must outlive a pass; its tasks stay for the next
                log.exception("task queue pass failed")
                delivered = 0
            if not delivered:
                await asyncio.sleep(poll)
    finally:
        if reporter is not None:
            reporter.cancel()


async def nightly_schedule(runtime: Runtime) -> None:
    """The Worker's Cron, locally: the nightly job at 04:10 in DREAM_TIME_ZONE."""
    while True:
        now = runtime.clock.now()
        due = next_run(now, runtime.settings.DREAM_TIME_ZONE)
        await asyncio.sleep((due - now).total_seconds())
        report = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger())
        log.info("nightly job: %s", "; ".join(f"{step.name}: {step.describe()}" for step in report.steps))


# A request target's query: what follows "?" up to a space or quote (an access-log line
# quotes the request line).
_QUERY = re.compile(r"\?([^\s\"]*)")
REDACTED = "[redacted]"


def redact_query(text: str) -> str:
    """``text`` with the value of every ``token`` parameter of a query in it cut out. The
    name is compared as the server reads it, percent-decoded (``%74oken`` is ``token``),
    and in any case (``TOKEN``), so no spelling of it passes."""

    def redact(match: re.Match[str]) -> str:
        pairs = match.group(1).split("&")
        for index, pair in enumerate(pairs):
            name, equals, _ = pair.partition("=")
            if unquote_plus(name).strip().lower() == "token":
                pairs[index] = f"{name}{equals or '='}{REDACTED}"
        return "?" + "&".join(pairs)

    return _QUERY.sub(redact, text)


class RedactToken(logging.Filter):
    """Cuts ``token=…`` out of log lines (uvicorn's access log has the path with its
    query): the MCP routes take the key as ``?token=``. They also cut it out of the
    request, so this is the second guard, for a line logged before (or without) the route."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_query(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact_query(record.msg)
        return True


def redact_access_log() -> None:
    """Installs ``RedactToken`` on uvicorn's access log, once; the local server calls it
    before it serves (the Worker has no access log of ours and never imports this)."""
    access_log = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactToken) for f in access_log.filters):
        access_log.addFilter(RedactToken())


class PanelFiles(StaticFiles):
    """The panel's files, each with the panel's headers (api/panel_headers.py); ``_headers``
    (the same headers, for Workers static assets) is not one of them."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        if Path(path).name == WORKER_HEADERS_FILE:
            raise HTTPException(status_code=404)
        response = await super().get_response(path, scope)
        response.headers.update(panel_headers(response.headers.get("content-security-policy")))
        return response


def admin_dir() -> Path:
    """The packaged panel in an installed wheel, else the repository's ``admin/``."""
    packaged = Path(__file__).resolve().parents[1] / "_admin"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[3] / "admin"


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
    docs.install(app)
    # In the Worker, Workers static assets serve these files.
    panel = PanelFiles(directory=admin_dir(), html=True)
    for prefix in PANEL_PREFIXES:
        app.mount(prefix, panel, name=prefix.strip("/"))
    return app


def issuer_warning(host: str, settings: Settings) -> str | None:
    """What to warn of at start when the server listens beyond this machine without
    PUBLIC_URL: OAuth then names itself (its issuer, its endpoints, the audience of its
    tokens) after each request's Host header, which whoever connects chooses."""
    if settings.PUBLIC_URL.strip():
        return None
    name = host.strip().strip("[]").lower()
    try:
        loopback = ipaddress.ip_address(name).is_loopback
    except ValueError:
        loopback = name == "localhost"
    if loopback:
        return None
    return (
        f"Warning: listening on {host} without PUBLIC_URL: OAuth takes its own address from each request's "
        "Host header, which any client can set. Set PUBLIC_URL to the address clients reach "
        "(e.g. https://memory.example.com)."
    )


def server_options(app: Any, settings: Settings) -> dict[str, Any]:
    """What ``uvicorn.run`` / ``uvicorn.Config`` take to serve ``app`` with the
    connection time limits (SERVER_*_SECONDS): the app with its body limit, the h11
    protocol with its header limit, and the keep-alive limit."""
    return {
        "app": BodyTimeout(app, settings.SERVER_BODY_TIMEOUT_SECONDS),
        "http": header_timeout_protocol(settings.SERVER_HEADER_TIMEOUT_SECONDS),
        "timeout_keep_alive": settings.SERVER_KEEP_ALIVE_SECONDS,
    }
