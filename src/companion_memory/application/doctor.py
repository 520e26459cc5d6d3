"""The health report, the safe repairs, and the messages no memory cites.

The report and the scan need the scope ``/v1/debug/vector_health`` needs (the owner or
the debug key): they show the index and the store, not the memories' words beyond the
messages listed for review. A repair changes the store, so it is the owner's alone; it
keeps an export first where the runtime can (a file in the local data directory). The
Worker has no file to write to: it says so and relies on D1's Time Travel, which restores
the database to any minute of the last 30 days, rather than sending the whole export back
in the answer.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ..domain.scopes import DEBUG, OWNER
from ..errors import BackupError, Conflict
from ..memory.doctor import HealthReport
from ..runtime import Runtime
from .fields import Cursor, Namespace, ShortPageLimit
from .principal import Principal
from .use_case import Input, Nothing, Output, use_case

# A message younger than this may still be waiting for tonight's dream.
UNANCHORED_AFTER = timedelta(days=1)
WORKER_BACKUP_NOTE = (
    "no backup file: this runtime has no disk; D1 Time Travel restores the database to any "
    "minute of the last 30 days (wrangler d1 time-travel restore), and GET /api/memories/export "
    "downloads a copy"
)


class CheckRecord(BaseModel):
    name: str
    status: Literal["ok", "warn", "fail"]
    value: int | float | None = Field(description="The check's number: a count, a share (0–1), hours or bytes.")
    summary: str
    detail: dict[str, Any]


class HealthReportAnswer(Output):
    status: Literal["ok", "warn", "fail"] = Field(description="The worst of the checks.")
    ok: bool = Field(description="false when a check failed.")
    checked_at: str
    checks: list[CheckRecord]

    @classmethod
    def of(cls, report: HealthReport) -> HealthReportAnswer:
        return cls(
            status=report.status,
            ok=report.status != "fail",
            checked_at=report.checked_at,
            checks=[CheckRecord.model_validate(check, from_attributes=True) for check in report.checks],
        )


class RepairRequest(Input):
    backup: Annotated[
        bool, Field(description="Keep an export of every namespace first, where the runtime can write one.")
    ] = True


class BackupRecord(BaseModel):
    path: str | None = Field(description="Where the export was written; null when none was.")
    note: str | None = Field(description="Why there is no file, when there is none.")


class ActionRecord(BaseModel):
    name: str
    count: int
    summary: str


class RepairAnswer(Output):
    backup: BackupRecord
    actions: list[ActionRecord]
    report: HealthReportAnswer = Field(description="The health report after the repairs.")


class UnanchoredQuery(Input):
    namespace: Namespace = "default"
    limit: ShortPageLimit = 50
    cursor: Cursor | None = None


class UnanchoredMessage(BaseModel):
    id: str
    conversation_id: str | None
    content: str
    created_at: str


class UnanchoredPage(Output):
    messages: list[UnanchoredMessage] = Field(description="Newest first.")
    count: int
    next_cursor: str | None


@use_case("health.report", DEBUG, heavy=True)
async def report(runtime: Runtime, _: Principal, __: Nothing) -> HealthReportAnswer:
    """The health report: each check ok, warn or fail with a number (layers, types, evidence
    coverage, duplicates, long-term and instant shares, memories unused for 90 days, plans
    past their end, open contradictions, the vector index, backlogs, the nightly job, the
    database and its size)."""
    return HealthReportAnswer.of(await runtime.doctor.report())


@use_case("health.repair", OWNER, heavy=True)
async def repair(runtime: Runtime, _: Principal, request: RepairRequest) -> RepairAnswer:
    """Fix what needs no judgement, after keeping a backup: queue the memories the vector
    index lacks, drop vectors of dead rows, expire plans past their end, rebuild the
    full-text indexes. Answers what was done and the report afterwards."""
    backup = BackupRecord(path=None, note="not asked for")
    if request.backup:
        backup = await _keep_backup(runtime)
    actions = await runtime.doctor.repair()
    return RepairAnswer(
        backup=backup,
        actions=[ActionRecord.model_validate(action, from_attributes=True) for action in actions],
        report=HealthReportAnswer.of(await runtime.doctor.report()),
    )


async def _keep_backup(runtime: Runtime) -> BackupRecord:
    if runtime.backups is None:
        return BackupRecord(path=None, note=WORKER_BACKUP_NOTE)
    document = await runtime.snapshots.export(None)
    stamp = runtime.clock.now().strftime("%Y%m%dT%H%M%SZ")
    try:
        path = await runtime.backups.save(f"before-repair-{stamp}.json", json.dumps(document, ensure_ascii=False))
    except BackupError as error:
        raise Conflict(f"{error}; nothing was repaired", code="backup_failed") from error
    return BackupRecord(path=path, note=None)


@use_case("health.unanchored", DEBUG)
async def unanchored(runtime: Runtime, _: Principal, query: UnanchoredQuery) -> UnanchoredPage:
    """The user's messages older than a day that no memory cites (in its evidence or its
    sources), newest first: what the dream may have missed, for the owner to review."""
    rows, next_cursor = await runtime.doctor.unanchored(
        query.namespace, older_than=UNANCHORED_AFTER, limit=query.limit, cursor=query.cursor
    )
    return UnanchoredPage(
        messages=[UnanchoredMessage.model_validate(r, from_attributes=True) for r in rows],
        count=len(rows),
        next_cursor=next_cursor,
    )
