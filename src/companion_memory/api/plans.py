"""/v1/plans: the open plans, and marking one done or abandoned."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..application import plans
from ..application.fields import PageLimit
from ..application.plans import PlanPage
from ..application.principal import Principal
from ..application.records import WriteAnswer
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["plans"], route_class=JsonRoute)


@router.get("/v1/plans")
async def list_plans(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(plans.list_plans)],
    namespace: NamespaceQuery = "default",
    status: Annotated[
        list[str] | None,
        Query(description="active (default), done, abandoned or expired; repeat or comma-separate."),
    ] = None,
    limit: Annotated[PageLimit, Query()] = 50,
) -> PlanPage:
    statuses = [s.strip() for value in status or [] for s in value.split(",") if s.strip()]
    query = plans.PlanQuery(namespace=namespace, statuses=statuses, limit=limit)
    return await plans.list_plans(runtime, principal, query)


@router.post("/v1/plans/{plan_id}/done")
async def plan_done(
    plan_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(plans.update_plan)]
) -> WriteAnswer:
    return await plans.update_plan(runtime, principal, plans.PlanUpdate(id=plan_id, status="done"))


@router.post("/v1/plans/{plan_id}/abandon")
async def plan_abandon(
    plan_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(plans.update_plan)]
) -> WriteAnswer:
    return await plans.update_plan(runtime, principal, plans.PlanUpdate(id=plan_id, status="abandoned"))
