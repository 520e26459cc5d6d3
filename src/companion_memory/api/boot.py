"""/v1/memory_boot and the diary: /v1/diary?date= and /v1/diary/recent."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..errors import InvalidInput, NotFound
from .auth import MEMORY_READ, Principal, requires
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["boot and diary"], route_class=JsonRoute)
Reader = Annotated[Principal, requires(MEMORY_READ)]


@router.get("/v1/memory_boot")
async def memory_boot(runtime: RuntimeDep, _: Reader, namespace: NamespaceQuery = "default") -> dict[str, Any]:
    """Impressions ladder, newest precious words, glossary, today's messages, counts by type."""
    return await runtime.boot.package(namespace)


@router.get("/v1/diary")
async def diary(
    runtime: RuntimeDep,
    _: Reader,
    date_: Annotated[
        str, Query(alias="date", max_length=10, description="YYYY-MM-DD", json_schema_extra={"format": "date"})
    ],
    namespace: NamespaceQuery = "default",
) -> dict[str, Any]:
    try:
        day = date.fromisoformat(date_).isoformat()
    except ValueError:
        raise InvalidInput(f"date must be YYYY-MM-DD, got {date_!r}", code="invalid_date") from None
    entry = await runtime.boot.diary(namespace, day)
    if entry is None:
        raise NotFound(f"no diary for {day} in {namespace!r}")
    return {"diary": entry}


@router.get("/v1/diary/recent")
async def recent_diary(runtime: RuntimeDep, _: Reader, namespace: NamespaceQuery = "default") -> dict[str, Any]:
    entries = await runtime.boot.recent_diary(namespace)
    return {"diaries": entries, "count": len(entries)}
