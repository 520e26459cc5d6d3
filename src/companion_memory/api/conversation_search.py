"""POST /v1/conversations/search: what was said in past conversations (MCP conversation_search)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter

from ..application import conversation_search as use_cases
from ..application.conversation_search import ConversationMatches, ConversationQuery
from ..application.principal import Principal
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["conversations"], route_class=JsonRoute)


@router.post("/v1/conversations/search")
async def search(
    body: ConversationQuery, runtime: RuntimeDep, principal: Annotated[Principal, allowed(use_cases.search)]
) -> ConversationMatches:
    """The turns of past conversations that match the query, the most relevant first."""
    return await use_cases.search(runtime, principal, body)
