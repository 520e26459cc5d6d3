"""Read views the admin panel needs and no other route gives: the star map's graph
(/v1/admin/graph) and the diary by day, week or month (/v1/admin/diary)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..domain.types import MEMORY_TYPES, normalise_type
from ..errors import InvalidInput
from ..store.admin_views import AdminViews, Period
from .auth import MEMORY_READ, Principal, requires
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["admin panel"], route_class=JsonRoute)
Reader = Annotated[Principal, requires(MEMORY_READ)]


def _types(values: list[str] | None) -> list[str]:
    types: list[str] = []
    for name in (v.strip() for value in values or [] for v in value.split(",") if v.strip()):
        canonical = normalise_type(name)
        if canonical is None:
            raise InvalidInput(f"unknown type {name!r}; known types: {', '.join(MEMORY_TYPES)}", code="invalid_type")
        if canonical not in types:
            types.append(canonical)
    return types


@router.get("/v1/admin/graph")
async def graph(
    runtime: RuntimeDep,
    _: Reader,
    namespace: NamespaceQuery = "default",
    type: Annotated[list[str] | None, Query(description="Type filter; repeat or comma-separate.")] = None,
    limit: Annotated[int, Query(ge=1, le=2000)] = 500,
) -> dict[str, Any]:
    """Live memories as nodes (pinned and most important first, at most ``limit``) and
    the relation edges between them; ``truncated`` says whether more memories exist."""
    return await AdminViews(runtime.db).graph(namespace, types=_types(type), limit=limit)


@router.get("/v1/admin/diary")
async def diary(
    runtime: RuntimeDep,
    _: Reader,
    period: Period = "day",
    namespace: NamespaceQuery = "default",
    limit: Annotated[int, Query(ge=1, le=100)] = 30,
    before: Annotated[
        str | None, Query(max_length=10, description="Page back: entries before this date, week or month.")
    ] = None,
) -> dict[str, Any]:
    """Diary entries newest first: days (``date``), ISO weeks (``week``) or months (``month``)."""
    entries, next_before = await AdminViews(runtime.db).diary(namespace, period, limit=limit, before=before)
    return {"period": period, "entries": entries, "count": len(entries), "next_before": next_before}
