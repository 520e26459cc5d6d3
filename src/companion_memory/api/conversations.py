"""/v1/conversations: search (MCP conversation_search), a day's conversations, the turns
around a message, and forgetting (a turn, a conversation, a span of time: the owner key
only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..application import conversations
from ..application.conversations import (
    ConversationMatches,
    ConversationQuery,
    DayConversations,
    Forget,
    Forgotten,
    Reach,
    Turns,
)
from ..application.fields import LongPageLimit
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["conversations"], route_class=JsonRoute)


@router.post("/v1/conversations/search")
async def search(
    body: ConversationQuery, runtime: RuntimeDep, principal: Annotated[Principal, allowed(conversations.search)]
) -> ConversationMatches:
    """The turns of past conversations that match the query, the most relevant first."""
    return await conversations.search(runtime, principal, body)


@router.get("/v1/conversations")
async def day_conversations(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(conversations.day_conversations)],
    namespace: NamespaceQuery = "default",
    day: Annotated[
        str | None,
        Query(
            max_length=10,
            description="YYYY-MM-DD in DREAM_TIME_ZONE; default today.",
            json_schema_extra={"format": "date"},
        ),
    ] = None,
    limit: Annotated[LongPageLimit, Query()] = 100,
) -> DayConversations:
    """The day's conversations, each with its first line and its count of turns, and the
    nearest earlier and later days when anything was said."""
    query = conversations.DayQuery.model_validate({"namespace": namespace, "day": day, "limit": limit})
    return await conversations.day_conversations(runtime, principal, query)


@router.get("/v1/conversations/messages/{message_id}")
async def conversation_get(
    message_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(conversations.get_turns)],
    before: Annotated[Reach, Query(description="How many earlier turns of its conversation.")] = 5,
    after: Annotated[Reach, Query(description="How many later turns of its conversation.")] = 5,
) -> Turns:
    """The turns around a message in its conversation, in the order they were said."""
    window = conversations.Window(message_id=message_id, before=before, after=after)
    return await conversations.get_turns(runtime, principal, window)


@router.delete("/v1/conversations/messages/{message_id}")
async def forget_message(
    message_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(conversations.forget)]
) -> Forgotten:
    """Forget one turn: its vector, its episode and its message."""
    return await conversations.forget(runtime, principal, Forget(message_id=message_id))


@router.delete("/v1/conversations/{conversation_id}")
async def forget_conversation(
    conversation_id: str,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(conversations.forget)],
    namespace: NamespaceQuery = "default",
) -> Forgotten:
    """Forget every turn of a conversation."""
    return await conversations.forget(runtime, principal, Forget(namespace=namespace, conversation_id=conversation_id))


@router.post("/v1/conversations/forget")
async def forget(
    body: Forget, runtime: RuntimeDep, principal: Annotated[Principal, allowed(conversations.forget)]
) -> Forgotten:
    """Forget what was said from ``since`` until ``until`` (of one conversation with
    ``conversation_id``); or, as MCP's conversation_forget takes them, one turn
    (``message_id``) or a whole conversation (``conversation_id`` alone)."""
    return await conversations.forget(runtime, principal, body)
