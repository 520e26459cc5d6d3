"""/v1/night_dreams: her night dreams (梦境), the newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..application import night_dreams
from ..application.fields import LongPageLimit
from ..application.night_dreams import NightDreamList, NightDreamQuery
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["night dreams"], route_class=JsonRoute)


@router.get("/v1/night_dreams")
async def recent_night_dreams(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(night_dreams.recent_night_dreams)],
    namespace: NamespaceQuery = "default",
    nights: Annotated[night_dreams.RecentNights, Query()] = 7,
    limit: Annotated[LongPageLimit, Query()] = 20,
) -> NightDreamList:
    query = NightDreamQuery(namespace=namespace, nights=nights, limit=limit)
    return await night_dreams.recent_night_dreams(runtime, principal, query)
