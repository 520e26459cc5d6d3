"""Bring your history: a chat export from ChatGPT, Claude, Chatbox, Cherry Studio, a JSONL
or a Markdown transcript, uploaded in parts and imported as a job (memory/history_imports.py)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, SkipValidation
from pydantic.json_schema import SkipJsonSchema

from ..clock import day_bounds
from ..domain.counts import MAX_COUNT
from ..domain.history_import import HistoryImport
from ..domain.scopes import OWNER
from ..memory.history_imports import PART_BYTES, ImportRequest
from ..runtime import Runtime
from .fields import Day, Id, Namespace
from .principal import Principal
from .use_case import Input, Output, use_case

Format = Literal["auto", "chatgpt", "claude", "chatbox", "cherry-studio", "jsonl", "markdown"]


class ImportStart(Input):
    name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=255,
            description="The file's name (conversations.json, an export's .zip, a day file 2026-03-14.md): "
            "errors name it, and a Markdown day file takes its day from it.",
        ),
    ]
    size: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_COUNT,
            description="The file's size in bytes (the upload is whole when it has them all); at most 2 GiB "
            "less a byte, as every count kept: a larger export goes in as the app's zip.",
        ),
    ]
    format: Annotated[Format, Field(description="Which export it is; auto detects it and says why.")] = "auto"
    namespace: Namespace = "default"
    since: Annotated[Day | None, Field(description="Store only what was said from this day on (DREAM_TIME_ZONE).")] = (
        None
    )
    until: Annotated[Day | None, Field(description="Store only what was said up to this day, included.")] = None
    dry_run: Annotated[bool, Field(description="Read and count, store nothing.")] = False


class ImportPart(Input):
    """One part of an upload: its bytes, from byte ``start`` of the file."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    id: Id
    start: Annotated[int, Field(ge=0, le=MAX_COUNT)]
    # The request's body as it came: bytes are not a JSON value.
    data: SkipJsonSchema[SkipValidation[bytes]]


class ImportRef(Input):
    id: Id


class ImportList(Input):
    limit: Annotated[int, Field(ge=1, le=100)] = 20


class ImportSummary(Output):
    """What the file holds, counted while it was checked."""

    conversations: int
    messages: int = Field(description="Messages to import (user and assistant turns).")
    skipped: int = Field(description="Messages left out: system, tool, hidden, empty…")
    skipped_by_reason: dict[str, int]
    dropped: dict[str, int] = Field(description="Parts left out of kept messages (thinking, tool calls).")
    empty_conversations: int
    first: str | None = Field(description="When the earliest message was said.")
    last: str | None
    warnings: list[str]


class ImportJob(Output):
    id: str
    namespace: str
    name: str
    status: Literal["uploading", "queued", "checking", "storing", "done", "failed"]
    size: int
    received: int = Field(description="Bytes uploaded so far.")
    part_bytes: int = Field(description="The most bytes one part may hold.")
    format: str = Field(description="What was asked: auto, or a format.")
    detected: str | None = Field(description="The format read.")
    reason: str | None = Field(description="Why that format: what detection saw, or given.")
    since: str | None
    until: str | None
    dry_run: bool
    total: int | None = Field(description="Messages to handle, once the file is checked.")
    position: int = Field(description="Messages handled so far.")
    stored: int
    duplicates: int = Field(description="Messages stored before (by an earlier import or a client).")
    outside: int = Field(description="Messages left out by since/until.")
    summary: ImportSummary | None
    error: str | None = Field(description="Why the import failed: the file, and where in it.")
    embedding_left: int = Field(description="Episodes of the namespace still waiting to be embedded.")
    created_at: str
    updated_at: str
    finished_at: str | None


class ImportJobs(Output):
    imports: list[ImportJob]


async def answer(runtime: Runtime, job: HistoryImport, embedding_left: int | None = None) -> ImportJob:
    """``embedding_left``: the namespace's count when the caller has it already."""
    if embedding_left is None:
        embedding_left = await runtime.history_imports.embedding_left(job.namespace)
    summary: Any = json.loads(job.summary) if job.summary else None
    return ImportJob(
        id=job.id,
        namespace=job.namespace,
        name=job.name,
        status=job.status,
        size=job.size,
        received=job.received,
        part_bytes=PART_BYTES,
        format=job.format,
        detected=job.detected,
        reason=job.reason,
        since=job.since_at,
        until=job.until_at,
        dry_run=bool(job.dry_run),
        total=job.total,
        position=job.position,
        stored=job.stored,
        duplicates=job.duplicates,
        outside=job.outside,
        summary=ImportSummary.model_validate(summary) if summary else None,
        error=job.error,
        embedding_left=embedding_left,
        created_at=job.created_at,
        updated_at=job.updated_at,
        finished_at=job.finished_at,
    )


def request_of(runtime: Runtime, start: ImportStart, *, path: str | None = None) -> ImportRequest:
    zone = runtime.settings.DREAM_TIME_ZONE
    return ImportRequest(
        namespace=start.namespace,
        name=start.name,
        size=start.size,
        format=start.format,
        since_at=day_bounds(start.since, zone)[0] if start.since else None,
        until_at=day_bounds(start.until, zone)[1] if start.until else None,
        dry_run=start.dry_run,
        path=path,
    )


@use_case("imports.start", OWNER)
async def start(runtime: Runtime, _: Principal, request: ImportStart) -> ImportJob:
    """A new import, waiting for its parts: PUT each part (at most part_bytes, in order)
    to /v1/imports/{id}/parts/{start}; the last one starts the import."""
    return await answer(runtime, await runtime.history_imports.begin(request_of(runtime, request)))


@use_case("imports.part", OWNER)
async def part(runtime: Runtime, _: Principal, part: ImportPart) -> ImportJob:
    """Bytes of the file from byte ``start``: parts in order; a part sent again is taken again."""
    return await answer(runtime, await runtime.history_imports.receive(part.id, part.start, part.data))


@use_case("imports.get", OWNER)
async def get(runtime: Runtime, _: Principal, ref: ImportRef) -> ImportJob:
    """An import's progress, and once its file is checked what it holds."""
    return await answer(runtime, await runtime.history_imports.get(ref.id))


@use_case("imports.list", OWNER)
async def recent(runtime: Runtime, _: Principal, listing: ImportList) -> ImportJobs:
    """The newest imports first."""
    jobs = await runtime.history_imports.recent(listing.limit)
    # One count a namespace, not one a job: the list's imports mostly share one.
    left = {ns: await runtime.history_imports.embedding_left(ns) for ns in {job.namespace for job in jobs}}
    return ImportJobs(imports=[await answer(runtime, job, left[job.namespace]) for job in jobs])
