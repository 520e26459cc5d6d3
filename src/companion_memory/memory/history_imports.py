"""History imports: a chat export from another app (history/ reads it) stored as messages
and episodes with their own times, as a job that survives a crash.

A job goes ``uploading`` (its parts arriving; a local file skips this) → ``queued`` →
``checking``: the whole file is read once, storing nothing, so that a file that turns out
broken halfway leaves nothing half-written, and so the job knows its total → ``storing``:
batch by batch, each batch written with the job's new position (``ingest_dated``) →
``done``, or ``failed`` with the reader's message (naming the file and where in it).

A step does a bounded amount of work (a queue delivery, or one turn of the CLI's loop)
and says whether more is left. The stream a step stopped in is kept open for the next
step in the same process; after a restart the file is read again and the messages
already handled are passed over, which is cheap beside storing them.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby, islice
from typing import BinaryIO

from ..clock import iso
from ..domain.history_import import RUNNABLE, HistoryImport, ImportStatus
from ..errors import Conflict, InvalidInput, NotFound, UnreadableHistory
from ..history.message import ImportedMessage
from ..history.options import ReadOptions
from ..history.reading import HistoryRead, read_history
from ..ports import Clock, Database, SqlValue, Statement, TaskQueue, UploadStore
from ..store.history_imports import HistoryImportStore
from ..store.sql import to_json
from .ingest import IncomingMessage, MessageIngestor

log = logging.getLogger("companion_memory.history_imports")
# Messages written in one database batch: a few hundred statements, well under D1's
# limits on a batch, and few enough round trips to store thousands a second.
BATCH = 500
# Messages one step stores at most: a Worker's queue delivery has 30 s of CPU.
STEP = 10_000
# An upload arrives in parts of at most this many bytes: the request-body limit of the API.
PART_BYTES = 1024 * 1024
# An upload with no part for this long was given up: its parts go.
UPLOAD_ABANDONED = timedelta(days=1)
# A job that has not moved for this long lost its queue message (set aside after its
# retries, or lost with a crash): the night queues its next step again.
STALLED = timedelta(hours=1)
IMPORT_TASK = "history_import"


@dataclass(frozen=True)
class ImportRequest:
    namespace: str
    name: str
    size: int
    format: str = "auto"
    since_at: str | None = None
    until_at: str | None = None
    dry_run: bool = False
    # A file the job reads where it is (the CLI's); None: the bytes are uploaded in parts.
    path: str | None = None


@dataclass
class _Reading:
    """A job's stream, open between steps."""

    file: BinaryIO
    read: HistoryRead
    messages: Iterator[ImportedMessage]
    position: int

    def close(self) -> None:
        self.file.close()


class HistoryImports:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        ingestor: MessageIngestor,
        uploads: UploadStore,
        queue: TaskQueue | None,
        time_zone: str,
    ) -> None:
        self.db = db
        self.store = HistoryImportStore(db)
        self.clock = clock
        self.ingestor = ingestor
        self.uploads = uploads
        self.queue = queue
        self.time_zone = time_zone
        self._open: dict[str, _Reading] = {}

    async def begin(self, request: ImportRequest) -> HistoryImport:
        """A new job; for a local file, the unfinished job of the same file (and size)
        instead, so that running the import again after a crash goes on with it."""
        if request.size <= 0:
            raise InvalidInput(f"{request.name} is empty: nothing to import", code="unreadable_history")
        if request.path is None and request.size > self.uploads.max_bytes:
            raise InvalidInput(
                f"{request.name} is {request.size} bytes; an upload here takes at most {self.uploads.max_bytes} "
                "(companion-memory import-history FILE --url sends a larger one in pieces)",
                code="payload_too_large",
                details={"max_bytes": self.uploads.max_bytes},
            )
        if request.path is not None and (found := await self.store.unfinished_from(request.path, request.size)):
            return found
        now = iso(self.clock.now())
        job = HistoryImport(
            id=str(uuid.uuid4()),
            namespace=request.namespace,
            name=request.name,
            path=request.path,
            size=request.size,
            received=request.size if request.path else 0,
            format=request.format,
            since_at=request.since_at,
            until_at=request.until_at,
            time_zone=self.time_zone,
            dry_run=int(request.dry_run),
            status="queued" if request.path else "uploading",
            created_at=now,
            updated_at=now,
        )
        await self.store.create(job)
        return job

    async def get(self, id_: str) -> HistoryImport:
        job = await self.store.get(id_)
        if job is None:
            raise NotFound(f"no import {id_}")
        return job

    async def recent(self, limit: int) -> list[HistoryImport]:
        return await self.store.recent(limit)

    async def embedding_left(self, namespace: str) -> int:
        return await self.store.embedding_left(namespace)

    async def receive(self, id_: str, start: int, data: bytes) -> HistoryImport:
        """One part of an upload, at byte ``start``. Parts come in order; a part sent
        again (its answer was lost) is taken again. The last part queues the job."""
        job = await self.get(id_)
        end = start + len(data)
        if job.status != "uploading":
            if job.path is None and end <= job.received:
                return job  # a repeat of a part of an upload already whole
            raise Conflict(f"import {id_} is {job.status}, not waiting for parts")
        if start > job.received:
            raise Conflict(
                f"part at byte {start} is ahead of the upload, which has {job.received} bytes: send byte {job.received} next",
                details={"received": job.received},
            )
        if not data or len(data) > PART_BYTES or end > job.size:
            raise InvalidInput(
                f"a part holds 1 to {PART_BYTES} bytes and ends by byte {job.size} (the size given); "
                f"this one has {len(data)} bytes from byte {start}"
            )
        await self.uploads.put(id_, start, data)
        received = max(job.received, end)
        whole = received == job.size
        now = iso(self.clock.now())
        changes: dict[str, SqlValue] = {"received": received, "updated_at": now}
        if whole:
            changes["status"] = "queued"
        await self.store.update(id_, changes, status=("uploading",))
        if whole:
            await self.queue_step(id_)
        return await self.get(id_)

    async def queue_step(self, id_: str) -> None:
        if self.queue is not None:
            await self.queue.send({"task": IMPORT_TASK, "id": id_})

    async def step(self, id_: str, *, limit: int = STEP) -> HistoryImport:
        """The next piece of the job: the whole check, or up to ``limit`` messages stored."""
        job = await self.get(id_)
        if job.status not in RUNNABLE:
            return job
        try:
            if job.status == "storing":
                return await self._store(job, limit)
            return await self._check(job)
        except UnreadableHistory as error:
            return await self._end(job, "failed", error=error.message)
        except OSError as error:
            return await self._end(job, "failed", error=f"{job.name}: cannot be read ({error.strerror or error})")

    async def tidy(self) -> dict[str, int]:
        """The night's look at imports: an upload given up fails and its parts go; a job
        that stopped moving is queued again."""
        now = self.clock.now()
        given_up, stalled_since = iso(now - UPLOAD_ABANDONED), iso(now - STALLED)
        abandoned = stalled = 0
        for job in await self.store.unended():
            if job.status == "uploading" and job.updated_at < given_up:
                error = f"{job.name}: the upload stopped at byte {job.received} of {job.size}; start it again"
                await self._end(job, "failed", error=error)
                abandoned += 1
            elif job.status in RUNNABLE and job.path is None and job.updated_at < stalled_since:
                await self.queue_step(job.id)
                stalled += 1
        return {"abandoned": abandoned, "requeued": stalled}

    async def run(self, id_: str, progress: Callable[[HistoryImport], None] = lambda _: None) -> HistoryImport:
        """Every step of the job, one after another (the CLI's way)."""
        job = await self.get(id_)
        while job.status in RUNNABLE:
            job = await self.step(id_)
            progress(job)
        return job

    async def _check(self, job: HistoryImport) -> HistoryImport:
        self._close(job.id)
        file = await self._file(job)
        with file:
            read = read_history(file, job.name, format=job.format, options=self._options(job))
            await self.store.update(
                job.id,
                {"status": "checking", "detected": read.format, "reason": read.reason, "updated_at": self._now()},
                status=RUNNABLE,
            )
            for _ in read.messages():
                pass
        summary = dataclasses.asdict(read.tally.summary())
        summary["warnings"] = list(summary["warnings"])  # JSON has lists, not tuples
        await self.store.update(
            job.id,
            {
                "status": "storing",
                "total": read.tally.messages,
                "summary": to_json(summary, what="the summary"),
                "updated_at": self._now(),
            },
            status=("checking",),
        )
        return await self.get(job.id)

    async def _store(self, job: HistoryImport, limit: int) -> HistoryImport:
        reading = await self._reading(job)
        position = job.position
        for batch in _batches(islice(reading.messages, limit)):
            position = await self._store_batch(job, position, batch)
            reading.position = position
        if position >= (job.total or 0):
            return await self._end(job, "done")
        return await self.get(job.id)

    async def _store_batch(self, job: HistoryImport, position: int, batch: list[ImportedMessage]) -> int:
        inside = [m for m in batch if _inside(m, job)]
        outside = len(batch) - len(inside)
        after = position + len(batch)
        conversations = [
            (conversation_id, [as_incoming(m) for m in said])
            for conversation_id, said in groupby(inside, key=lambda m: m.conversation_id)
        ]

        def advance(new: int, duplicates: int) -> Statement:
            return HistoryImportStore.advance(
                job.id, after, stored=new, duplicates=duplicates, outside=outside, at=self._now()
            )

        if job.dry_run:
            new, duplicates = await self.ingestor.count_new(job.namespace, conversations)
            await self.db.batch([advance(new, duplicates)])
        else:
            source = f"import:{job.detected}"
            await self.ingestor.ingest_dated(job.namespace, conversations, source=source, progress=advance)
        return after

    async def _reading(self, job: HistoryImport) -> _Reading:
        """The job's stream at its position: the one a step left open, or the file read
        again with the messages already handled passed over."""
        reading = self._open.get(job.id)
        if reading is not None and reading.position == job.position:
            return reading
        self._close(job.id)
        file = await self._file(job)
        read = read_history(file, job.name, format=job.detected or job.format, options=self._options(job))
        messages = read.messages()
        for _ in islice(messages, job.position):
            pass
        reading = self._open[job.id] = _Reading(file, read, messages, job.position)
        return reading

    async def _file(self, job: HistoryImport) -> BinaryIO:
        if job.path is not None:
            return await self.uploads.open_local(job.path)
        return await self.uploads.open(job.id)

    async def _end(self, job: HistoryImport, status: ImportStatus, *, error: str | None = None) -> HistoryImport:
        self._close(job.id)
        now = self._now()
        await self.store.update(
            job.id,
            {"status": status, "error": error, "updated_at": now, "finished_at": now},
            status=("uploading", *RUNNABLE),
        )
        if job.path is None:
            await self.uploads.remove(job.id)
        ended = await self.get(job.id)
        log.info("import %s %s: %s", job.id, ended.status, error or f"{ended.stored} stored")
        return ended

    def _close(self, id_: str) -> None:
        reading = self._open.pop(id_, None)
        if reading is not None:
            reading.close()

    def _options(self, job: HistoryImport) -> ReadOptions:
        return ReadOptions(time_zone=job.time_zone)

    def _now(self) -> str:
        return iso(self.clock.now())


def _batches(messages: Iterator[ImportedMessage]) -> Iterator[list[ImportedMessage]]:
    while batch := list(islice(messages, BATCH)):
        yield batch


def _inside(message: ImportedMessage, job: HistoryImport) -> bool:
    # Stored times sort as text in time order.
    return (job.since_at is None or message.created_at >= job.since_at) and (
        job.until_at is None or message.created_at < job.until_at
    )


def as_incoming(message: ImportedMessage) -> IncomingMessage:
    """As ingest takes it: the conversation's title (and whether the time was guessed)
    kept beside what the export said of the message."""
    extra: dict[str, object] = {"title": message.title} if message.title else {}
    if message.estimated:
        extra["estimated_time"] = True
    metadata = {**(message.metadata or {}), **extra} or None
    return IncomingMessage(
        role=message.role,
        content=message.content,
        id=message.source_id,
        created_at=message.created_at,
        name=message.name,
        metadata=metadata,
    )
