"""/v1/memory/recall (every chat turn, hooks) and /v1/memory/search (raw search)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from ..application import recall as use_cases
from ..application.principal import Principal
from ..application.recall import RecallQuery, SearchQuery
from ..application.records import RecallAnswer
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["recall"], route_class=JsonRoute)


@router.post("/v1/memory/recall")
async def recall(
    body: RecallQuery, runtime: RuntimeDep, principal: Annotated[Principal, allowed(use_cases.recall)]
) -> RecallAnswer:
    """The memories to inject for this message; records them as injected."""
    return await use_cases.recall(runtime, principal, body)


@router.post("/v1/memory/search")
@router.post("/v1/search/memories", include_in_schema=False)
async def search(
    body: SearchQuery, runtime: RuntimeDep, principal: Annotated[Principal, allowed(use_cases.search)]
) -> RecallAnswer:
    """Raw search: the same pipeline, no injection bookkeeping."""
    return await use_cases.search(runtime, principal, body)
