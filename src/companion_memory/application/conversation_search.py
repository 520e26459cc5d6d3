"""conversation_search: what was said in past conversations, by query (Letta's shape)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..clock import STORED_DAY, day_bounds, parse_day, read_time
from ..memory.context import stored_day
from ..runtime import Runtime
from ..store.episode_search import EpisodeScope
from .fields import TIME_FORMAT, DayOrTime, Id, Namespace
from .principal import MEMORY_READ, Principal
from .use_case import Input, Output, use_case

Role = Literal["user", "assistant", "system", "tool"]
BOUND = f"YYYY-MM-DD (a day in DREAM_TIME_ZONE) or a time, {TIME_FORMAT} (without an offset: UTC)"


class ConversationQuery(Input):
    query: Annotated[str, Field(min_length=1, max_length=10_000, description="What to look for, in any words.")]
    namespace: Namespace = "default"
    roles: Annotated[
        list[Role], Field(default_factory=list, max_length=4, description="Only turns of these roles (default: all).")
    ]
    limit: Annotated[int, Field(ge=1, le=100, description="How many turns to return, best first.")] = 10
    start_date: Annotated[DayOrTime | None, Field(description=f"Said at or after: {BOUND}.")] = None
    end_date: Annotated[DayOrTime | None, Field(description=f"Said before, or on that day: {BOUND}.")] = None
    conversation_id: Annotated[Id | None, Field(description="Only turns of this conversation.")] = None


class ConversationTurn(Output):
    id: str = Field(description="The message's id.")
    conversation_id: str | None
    role: str
    speaker: str | None = Field(description="The speaker's name, when the client gave one.")
    content: str = Field(description="What was said, as kept for recall (secrets masked).")
    created_at: str = Field(description="When it was said (UTC).")
    day: str = Field(description="The day it was said in DREAM_TIME_ZONE.")


class ConversationMatches(Output):
    turns: list[ConversationTurn] = Field(description="The turns that match, the most relevant first.")


def _moment(bound: str | None, field: str, time_zone: str) -> str | None:
    """The stored time a bound stands for: a day starts (start_date) or ends (end_date)
    in DREAM_TIME_ZONE."""
    if bound is None:
        return None
    if STORED_DAY.fullmatch(bound):
        return day_bounds(parse_day(bound), time_zone)[0 if field == "start_date" else 1]
    return read_time(bound, field)


@use_case("conversations.search", MEMORY_READ)
async def search(runtime: Runtime, _: Principal, query: ConversationQuery) -> ConversationMatches:
    """The turns of past conversations that match the query: by meaning and words, in
    the roles, time range and conversation asked for; nothing is counted as recalled."""
    zone = runtime.settings.DREAM_TIME_ZONE
    scope = EpisodeScope(
        conversation_id=query.conversation_id,
        roles=tuple(query.roles),
        since=_moment(query.start_date, "start_date", zone),
        until=_moment(query.end_date, "end_date", zone),
    )
    found = await runtime.conversation_search.search(query.namespace, query.query, scope, limit=query.limit)
    return ConversationMatches(
        turns=[
            ConversationTurn(
                id=e.id,
                conversation_id=e.conversation_id,
                role=e.role,
                speaker=e.speaker,
                content=e.content,
                created_at=e.created_at,
                day=stored_day(e.created_at, zone),
            )
            for e in found
        ]
    )
