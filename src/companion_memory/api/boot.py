"""/v1/memory_boot and the diary: /v1/diary?date= and /v1/diary/recent."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query

from ..application import boot as use_cases
from ..application.boot import BootPackage, DiaryAnswer, DiaryDay, DiaryList, Scope
from ..application.principal import Principal
from ..errors import InvalidInput
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["boot and diary"], route_class=JsonRoute)


@router.get("/v1/memory_boot")
async def memory_boot(
    runtime: RuntimeDep, principal: Annotated[Principal, allowed(use_cases.boot)], namespace: NamespaceQuery = "default"
) -> BootPackage:
    """Impressions ladder, newest precious words, glossary, today's messages, counts by type."""
    return await use_cases.boot(runtime, principal, Scope(namespace=namespace))


@router.get("/v1/diary")
async def diary(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(use_cases.diary)],
    date_: Annotated[
        str, Query(alias="date", max_length=10, description="YYYY-MM-DD", json_schema_extra={"format": "date"})
    ],
    namespace: NamespaceQuery = "default",
) -> DiaryAnswer:
    try:
        day = date.fromisoformat(date_)
    except ValueError:
        raise InvalidInput(f"date must be YYYY-MM-DD, got {date_!r}", code="invalid_date") from None
    return await use_cases.diary(runtime, principal, DiaryDay(namespace=namespace, date=day))


@router.get("/v1/diary/recent")
async def recent_diary(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(use_cases.recent_diary)],
    namespace: NamespaceQuery = "default",
) -> DiaryList:
    return await use_cases.recent_diary(runtime, principal, Scope(namespace=namespace))
