"""/v1/ingest/messages: raw chat messages in, stored once each."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from ..application import ingest as use_cases
from ..application.ingest import IngestAnswer, IngestRequest
from ..application.principal import Principal
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["ingest"], route_class=JsonRoute)


@router.post("/v1/ingest/messages")
@router.post("/v1/messages/ingest", include_in_schema=False)
async def ingest_messages(
    body: IngestRequest, runtime: RuntimeDep, principal: Annotated[Principal, allowed(use_cases.ingest)]
) -> IngestAnswer:
    """Idempotent: a message already stored (same client id; or same conversation, role,
    content, timestamp and rank in its request; without an id or a timestamp, only within
    10 minutes of storing it) is reported as a duplicate, not stored again."""
    return await use_cases.ingest(runtime, principal, body)
