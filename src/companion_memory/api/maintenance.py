"""Owner-triggered maintenance: /admin/monthly-rollup."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter

from .auth import OWNER, Principal, requires
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["maintenance"], route_class=JsonRoute)


@router.post("/admin/monthly-rollup")
async def monthly_rollup(runtime: RuntimeDep, _: Annotated[Principal, requires(OWNER)]) -> dict[str, Any]:
    """Roll weeks that ended more than 35 days ago into their months now."""
    return {"monthly_written": await runtime.rollups.monthly()}
