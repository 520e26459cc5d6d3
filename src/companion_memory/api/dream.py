"""/v1/dream/run and /v1/dream/status, for the panel and for scripts."""

from __future__ import annotations

import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body

from .auth import MEMORY_READ, OWNER, Principal, requires
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute
from .schemas import Request

router = APIRouter(tags=["dream"], route_class=JsonRoute)


class DreamRun(Request):
    date: datetime.date | None = None
    dry_run: bool = False


def _public(report: dict[str, Any]) -> dict[str, Any]:
    return {
        **report,
        "candidates": [
            {k: c[k] for k in ("id", "type", "content", "evidence", "target_memory_id")} for c in report["candidates"]
        ],
    }


@router.post("/v1/dream/run")
async def run_dream(
    runtime: RuntimeDep, _: Annotated[Principal, requires(OWNER)], body: Annotated[DreamRun | None, Body()] = None
) -> dict[str, Any]:
    """Dream a day now; without ``date``, every recent day with messages not dreamt yet
    (as the nightly job does). ``dry_run`` writes nothing."""
    body = body or DreamRun()
    reports = await runtime.dream.night(body.date, dry_run=body.dry_run)
    return {"date": (body.date or runtime.dream.yesterday()).isoformat(), "runs": [_public(r) for r in reports]}


@router.get("/v1/dream/status")
async def dream_status(
    runtime: RuntimeDep, _: Annotated[Principal, requires(MEMORY_READ)], namespace: NamespaceQuery = "default"
) -> dict[str, Any]:
    """The latest dream runs, the candidates waiting in ``namespace``, and the last nightly job."""
    return {
        "runs": await runtime.dream.store.recent_runs(20),
        "pending_candidates": await runtime.review.store.count(namespace, "pending"),
        "last_nightly": await runtime.nightly.last_run(),
    }
