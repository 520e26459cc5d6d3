"""Owner-triggered maintenance: /admin/monthly-rollup."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from ..application import maintenance
from ..application.maintenance import MonthlyRollup
from ..application.principal import Principal
from ..application.use_case import Nothing
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["maintenance"], route_class=JsonRoute)


@router.post("/admin/monthly-rollup")
async def monthly_rollup(
    runtime: RuntimeDep, principal: Annotated[Principal, allowed(maintenance.monthly_rollup)]
) -> MonthlyRollup:
    """Roll weeks that ended more than 35 days ago into their months now."""
    return await maintenance.monthly_rollup(runtime, principal, Nothing())
