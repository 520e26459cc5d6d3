"""Housekeeping the owner (or the nightly job, or the command line) runs: rollups and retention."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..domain.scopes import OWNER
from ..runtime import Runtime
from .principal import Principal
from .use_case import Input, Nothing, Output, use_case


class MonthlyRollup(Output):
    monthly_written: int


class Rollups(Output):
    weekly_written: int
    monthly_written: int


class RetentionRun(Input):
    force: Annotated[bool, Field(description="Run even if retention ran in the last 24 hours.")] = False


class RetentionReport(Output):
    """What retention removed; all counts are null when it was skipped."""

    skipped: bool = Field(description="Retention ran less than 24 hours ago (and force was not set).")
    last_run: str | None = Field(None, description="When it last ran, when skipped.")
    messages: int | None = None
    usage_logs: int | None = None
    memory_events: int | None = None
    idempotency_keys: int | None = None
    moods: int | None = Field(None, description="Mood timeline entries older than 90 days.")
    person_proposals: int | None = Field(
        None, description="Person proposals approved or rejected more than 30 days ago."
    )
    memories_expired: int | None = None
    memories_too_short: int | None = None
    memories_purged: int | None = None
    episodes_expired: int | None = Field(None, description="Episodes said more than EPISODE_RETENTION_DAYS ago.")
    episodes_backfilled: int | None = Field(None, description="Episodes given to messages stored before episodes were.")
    vectors_pending: int | None = Field(None, description="Vector deletions left in the outbox for a retry.")


@use_case("rollups.monthly", OWNER)
async def monthly_rollup(runtime: Runtime, _: Principal, __: Nothing) -> MonthlyRollup:
    """Roll weeks that ended more than 35 days ago into their months now."""
    return MonthlyRollup(monthly_written=await runtime.rollups.monthly())


@use_case("rollups.run", OWNER)
async def rollups(runtime: Runtime, _: Principal, __: Nothing) -> Rollups:
    """Roll diary days into weeks, and weeks into months, now."""
    weekly = await runtime.rollups.weekly()
    return Rollups(weekly_written=weekly, monthly_written=await runtime.rollups.monthly())


@use_case("retention.run", OWNER)
async def retention(runtime: Runtime, _: Principal, run: RetentionRun) -> RetentionReport:
    """Apply retention now: old messages and logs, expiry, purge."""
    return RetentionReport.model_validate(await runtime.retention.run(force=run.force))
