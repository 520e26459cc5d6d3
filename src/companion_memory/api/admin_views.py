"""Read views the admin panel needs and no other route gives: the star map's graph
(/v1/admin/graph) and the same map as a file (/v1/admin/starmap), and the diary by day,
week or month (/v1/admin/diary)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from ..application import admin_views
from ..application.admin_views import (
    DiaryPage,
    DiaryQuery,
    Graph,
    GraphLimit,
    GraphQuery,
    Period,
    StarMapQuery,
)
from ..application.fields import ShortPageLimit
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute
from .paced_json import paced_json
from .starmap_file import StarMapFile, star_map_file

router = APIRouter(tags=["admin panel"], route_class=JsonRoute)


@router.get("/v1/admin/graph", response_model=Graph)
async def graph(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(admin_views.graph)],
    namespace: NamespaceQuery = "default",
    type: Annotated[list[str] | None, Query(description="Type filter; repeat or comma-separate.")] = None,
    limit: Annotated[GraphLimit, Query()] = 500,
    people: Annotated[bool, Query(description="Also the people, as stars of their own.")] = True,
) -> Response:
    """Live memories as nodes (pinned and most important first, at most ``limit``) and
    the relation edges between them; ``truncated`` says whether more memories exist."""
    query = GraphQuery(namespace=namespace, types=_types(type), limit=limit, people=people)
    return await paced_json(await admin_views.graph(runtime, principal, query), runtime.heavy_reads)


@router.get("/v1/admin/starmap", response_model=StarMapFile)
async def starmap(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(admin_views.starmap)],
    format: Literal["svg", "mermaid"] = "svg",
    namespace: NamespaceQuery = "default",
    type: Annotated[list[str] | None, Query(description="Type filter; repeat or comma-separate.")] = None,
    limit: Annotated[GraphLimit, Query()] = 500,
    people: Annotated[bool, Query(description="Also the people, as stars of their own.")] = True,
) -> Response:
    """The star map as a file (``content``): a standalone SVG or Mermaid text."""
    query = StarMapQuery(format=format, namespace=namespace, types=_types(type), limit=limit, people=people)
    drawn = await star_map_file(await admin_views.starmap(runtime, principal, query), runtime.heavy_reads)
    return await paced_json(drawn, runtime.heavy_reads)


def _types(values: list[str] | None) -> list[str]:
    return [name.strip() for value in values or [] for name in value.split(",") if name.strip()]


@router.get("/v1/admin/diary")
async def diary(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(admin_views.diary)],
    period: Period = "day",
    namespace: NamespaceQuery = "default",
    limit: Annotated[ShortPageLimit, Query()] = 30,
    before: Annotated[
        str | None, Query(max_length=10, description="Page back: entries before this date, week or month.")
    ] = None,
) -> DiaryPage:
    """Diary entries newest first: days (``date``), ISO weeks (``week``) or months (``month``)."""
    query = DiaryQuery(period=period, namespace=namespace, limit=limit, before=before)
    return await admin_views.diary(runtime, principal, query)
