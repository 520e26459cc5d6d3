"""/v1/dream/run and /v1/dream/status, for the panel and for scripts."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

from ..application import dream
from ..application.dream import DreamAnswer, DreamRun, DreamStatus, StatusScope
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["dream"], route_class=JsonRoute)


@router.post("/v1/dream/run")
async def run_dream(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(dream.dream)],
    body: Annotated[DreamRun | None, Body()] = None,
) -> DreamAnswer:
    """Dream a day now; without ``date``, every recent day with messages not dreamt yet
    (as the nightly job does). ``dry_run`` writes nothing."""
    return await dream.dream(runtime, principal, body or DreamRun())


@router.get("/v1/dream/status")
async def dream_status(
    runtime: RuntimeDep, principal: Annotated[Principal, allowed(dream.status)], namespace: NamespaceQuery = "default"
) -> DreamStatus:
    """The latest dream runs, the candidates waiting in ``namespace``, and the last nightly job."""
    return await dream.status(runtime, principal, StatusScope(namespace=namespace))
