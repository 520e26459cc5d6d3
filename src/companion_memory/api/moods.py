"""/v1/moods: the mood timeline, hers and the owner's as she perceives it."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from ..application import moods
from ..application.fields import LongPageLimit
from ..application.moods import MoodAnswer, MoodTimeline, MoodWrite
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["moods"], route_class=JsonRoute)


@router.post("/v1/moods", status_code=201)
async def log_mood(
    body: MoodWrite, runtime: RuntimeDep, principal: Annotated[Principal, allowed(moods.log_mood)]
) -> MoodAnswer:
    return await moods.log_mood(runtime, principal, body)


@router.get("/v1/moods")
async def recent_moods(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(moods.recent_moods)],
    namespace: NamespaceQuery = "default",
    days: Annotated[moods.RecentDays, Query()] = 7,
    whose: Annotated[Literal["owner", "companion"] | None, Query(description="Only hers, or only the owner's.")] = None,
    limit: Annotated[LongPageLimit, Query()] = 200,
) -> MoodTimeline:
    query = moods.MoodQuery(namespace=namespace, days=days, whose=whose, limit=limit)
    return await moods.recent_moods(runtime, principal, query)
