"""/v1/ingest/messages: raw chat messages in, stored once each."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter

from ..memory.ingest import IncomingMessage
from .auth import MEMORY_WRITE, Principal, requires
from .deps import RuntimeDep
from .json_body import JsonRoute
from .schemas import IngestRequest

router = APIRouter(tags=["ingest"], route_class=JsonRoute)


@router.post("/v1/ingest/messages")
@router.post("/v1/messages/ingest", include_in_schema=False)
async def ingest_messages(
    body: IngestRequest, runtime: RuntimeDep, _: Annotated[Principal, requires(MEMORY_WRITE)]
) -> dict[str, Any]:
    """Idempotent: a message already stored (same client id, or same conversation,
    role, content and timestamp) is reported as a duplicate, not stored again."""
    messages = [
        IncomingMessage(
            role=m.role, content=m.text(), id=m.id, created_at=m.created_at, model=m.model, metadata=m.metadata
        )
        for m in body.messages
    ]
    outcomes = await runtime.ingestor.ingest(
        body.namespace, messages, conversation_id=body.conversation_id, source=body.source
    )
    stored = sum(not o.duplicate for o in outcomes)
    return {
        "stored": stored,
        "duplicates": len(outcomes) - stored,
        "messages": [{"id": o.id, "duplicate": o.duplicate} for o in outcomes],
    }
