"""/v1/context/folds/{id}: what a long chat's fold replaced, word for word."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from ..application import context
from ..application.context import FoldRecord
from ..application.principal import Principal
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["context"], route_class=JsonRoute)


@router.get("/v1/context/folds/{fold_id}")
async def expand_fold(
    fold_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(context.expand)]
) -> FoldRecord:
    return await context.expand(runtime, principal, context.FoldId(fold_id=fold_id))
