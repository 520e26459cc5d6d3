"""Plans: list the open ones (or those done, abandoned, expired), and mark one done or abandoned.

A plan is written like any memory (``memories.upsert`` with ``type: "plan"`` and
``valid_to`` or ``valid_days``); these use cases follow it to its end.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..domain.scopes import MEMORY_READ, MEMORY_WRITE
from ..domain.types import PLAN_STATUSES
from ..runtime import Runtime
from .fields import MemoryRef, Namespace, PageLimit, ShortText
from .principal import Principal
from .records import PlanRecord, WriteAnswer
from .use_case import Input, Output, use_case

PlanStatus = Annotated[ShortText, Field(json_schema_extra={"enum": list(PLAN_STATUSES)})]


class PlanQuery(Input):
    namespace: Namespace = "default"
    statuses: Annotated[
        list[PlanStatus],
        Field(default_factory=list, max_length=4, description="Default active (the open plans)."),
    ]
    limit: PageLimit = 50


class PlanUpdate(Input):
    id: Annotated[MemoryRef, Field(description="The plan's memory id.")]
    status: Annotated[Literal["done", "abandoned"], Field(description="What became of the plan.")]


class PlanPage(Output):
    plans: list[PlanRecord] = Field(description="The soonest end first; open-ended plans last.")
    count: int


@use_case("plans.list", MEMORY_READ)
async def list_plans(runtime: Runtime, _: Principal, query: PlanQuery) -> PlanPage:
    """Plans by status (default: the open ones), the soonest end first."""
    plans = await runtime.plans.by_status(query.namespace, query.statuses or ["active"], query.limit)
    return PlanPage.model_validate(
        {"plans": [PlanRecord.model_validate(p, from_attributes=True) for p in plans], "count": len(plans)}
    )


@use_case("plans.update", MEMORY_WRITE)
async def update_plan(runtime: Runtime, principal: Principal, update: PlanUpdate) -> WriteAnswer:
    """Mark an active plan done or abandoned: it is kept, but no longer recalled."""
    return WriteAnswer.of(await runtime.writer.close_plan(update.id, update.status, principal.actor))
