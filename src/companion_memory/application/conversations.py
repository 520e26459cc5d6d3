"""Conversations, as the owner and the owner's agents read what was said: the turns that
answer a query (``conversation_search``, Letta's shape), a window of turns around one
(``conversation_get``), a day's conversations, and forgetting a turn, a conversation or
a span of time (the owner only)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..clock import STORED_DAY, day_bounds, local_date, parse_day, parse_iso, read_time
from ..domain.episode import Episode
from ..domain.scopes import MEMORY_READ, OWNER
from ..errors import InvalidInput, NotFound
from ..runtime import Runtime
from ..store.conversations import ConversationDay, ConversationStore
from ..store.episode_search import EpisodeScope
from ..store.episodes import EpisodeStore
from ..store.places import PlaceStore
from .fields import (
    TIME_FORMAT,
    Day,
    DayOrTime,
    EpisodeRef,
    Id,
    LongPageLimit,
    Moment,
    Namespace,
    SearchText,
    ShortPageLimit,
)
from .principal import Principal
from .records import TurnRecord
from .use_case import Input, Output, use_case

# How many turns a window reaches on each side of its message.
Reach = Annotated[int, Field(ge=0, le=50)]
FIRST_LINE_CHARS = 200
Role = Literal["user", "assistant", "system", "tool"]
BOUND = f"YYYY-MM-DD (a day in DREAM_TIME_ZONE) or a time, {TIME_FORMAT} (without an offset: UTC)"


class ConversationQuery(Input):
    query: Annotated[SearchText, Field(description="What to look for, in any words.")]
    namespace: Namespace = "default"
    roles: Annotated[
        list[Role], Field(default_factory=list, max_length=4, description="Only turns of these roles (default: all).")
    ]
    limit: Annotated[ShortPageLimit, Field(description="How many turns to return, best first.")] = 10
    start_date: Annotated[DayOrTime | None, Field(description=f"Said at or after: {BOUND}.")] = None
    end_date: Annotated[DayOrTime | None, Field(description=f"Said before, or on that day: {BOUND}.")] = None
    conversation_id: Annotated[Id | None, Field(description="Only turns of this conversation.")] = None


class ConversationMatches(Output):
    turns: list[TurnRecord] = Field(description="The turns that match, the most relevant first.")


class Window(Input):
    message_id: Annotated[EpisodeRef, Field(description="The turn to read around (a message's id).")]
    before: Annotated[Reach, Field(description="How many earlier turns of its conversation.")] = 5
    after: Annotated[Reach, Field(description="How many later turns of its conversation.")] = 5


class Turns(Output):
    message_id: str
    conversation_id: str | None
    turns: list[TurnRecord] = Field(description="In the order they were said, the message itself included.")


class DayQuery(Input):
    namespace: Namespace = "default"
    day: Annotated[Day | None, Field(description="The day in DREAM_TIME_ZONE; default today.")] = None
    limit: LongPageLimit = 100


class ConversationSummary(Output):
    conversation_id: str | None = Field(
        description="null: the turns stored without a conversation, one stream per source (the chat's)."
    )
    source: str
    first_message_id: str = Field(description="Its first turn that day: open the conversation around it.")
    first_role: str
    first_line: str = Field(
        description=f"The first line of its first turn that day, at most {FIRST_LINE_CHARS} characters."
    )
    messages: int = Field(description="Its turns that day.")
    first_at: str
    last_at: str


class DayConversations(Output):
    namespace: str
    day: str
    since: str = Field(description="Where the day starts (UTC): what forgetting the day gives as since.")
    until: str = Field(description="Where the day ends (UTC): what forgetting the day gives as until.")
    conversations: list[ConversationSummary] = Field(description="In the order they began, at most limit.")
    count: int = Field(description="The conversations with turns that day (all of them).")
    messages: int = Field(description="The turns said that day.")
    previous_day: str | None = Field(description="The last earlier day anything was said.")
    next_day: str | None = Field(description="The first later day anything was said.")


class Forget(Input):
    namespace: Annotated[
        Namespace, Field(description="Where to forget; a message is forgotten in its own namespace.")
    ] = "default"
    message_id: Annotated[Id | None, Field(description="Forget this one turn.")] = None
    conversation_id: Annotated[
        Id | None, Field(description="Forget this conversation (with since and until: its turns in that span).")
    ] = None
    since: Annotated[Moment | None, Field(description="Forget what was said from this time (give until too).")] = None
    until: Annotated[Moment | None, Field(description="… up to, not including, this time.")] = None


class Forgotten(Output):
    namespace: str
    forgotten: int = Field(description="The turns forgotten: their vectors first, then the episodes and messages.")


def first_line(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


def _summary(conversation: ConversationDay) -> ConversationSummary:
    return ConversationSummary(
        conversation_id=conversation.conversation_id,
        source=conversation.source,
        first_message_id=conversation.first_message_id,
        first_role=conversation.first_role,
        first_line=first_line(conversation.opening),
        messages=conversation.messages,
        first_at=conversation.first_at,
        last_at=conversation.last_at,
    )


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
    return ConversationMatches(turns=[TurnRecord.of(e, zone) for e in found if said(e)])


@use_case("conversations.get", MEMORY_READ)
async def get_turns(runtime: Runtime, _: Principal, window: Window) -> Turns:
    """The turns around a message in its conversation, in the order they were said."""
    store = EpisodeStore(runtime.db)
    found = [episode for episode in await store.get_many([window.message_id]) if said(episode)]
    if not found:
        raise NotFound(f"message {window.message_id} not found")
    turns = await store.around(found[0], before=window.before, after=window.after)
    time_zone = runtime.settings.DREAM_TIME_ZONE
    return Turns(
        message_id=window.message_id,
        conversation_id=found[0].conversation_id,
        turns=[TurnRecord.of(turn, time_zone) for turn in turns if said(turn)],
    )


def said(episode: Episode) -> bool:
    """An episode being forgotten is emptied first (its vector goes next, then its row)."""
    return episode.content != ""


@use_case("conversations.day", MEMORY_READ)
async def day_conversations(runtime: Runtime, _: Principal, query: DayQuery) -> DayConversations:
    """The conversations of a day (in DREAM_TIME_ZONE), each with its first line and its
    count of turns, and the nearest days before and after when anything was said."""
    time_zone = runtime.settings.DREAM_TIME_ZONE
    day = query.day or local_date(runtime.clock.now(), time_zone)
    since, until = day_bounds(day, time_zone)
    store = ConversationStore(runtime.db)
    found = await store.day(query.namespace, since=since, until=until, limit=query.limit)
    earlier, later = await store.said_before(query.namespace, since), await store.said_from(query.namespace, until)
    return DayConversations(
        namespace=query.namespace,
        day=day.isoformat(),
        since=since,
        until=until,
        conversations=[_summary(c) for c in found.conversations],
        count=found.total,
        messages=found.messages,
        previous_day=None if earlier is None else local_date(parse_iso(earlier), time_zone).isoformat(),
        next_day=None if later is None else local_date(parse_iso(later), time_zone).isoformat(),
    )


@use_case("conversations.forget", OWNER)
async def forget(runtime: Runtime, _: Principal, what: Forget) -> Forgotten:
    """Forget one turn (message_id), a conversation (conversation_id), or what was said
    from since until until (of one conversation with conversation_id): the vectors go
    first, then the episodes and their messages. The owner only."""
    if what.message_id is not None:
        if what.conversation_id is not None or what.since is not None or what.until is not None:
            raise InvalidInput(
                "message_id forgets that one turn: give it alone, without conversation_id, since or until",
                code="invalid_forget",
            )
        # A message may have no episode (all of it was private): it is forgotten all the same.
        places = PlaceStore(runtime.db)
        namespace = await places.home("episodes", what.message_id) or await places.home("messages", what.message_id)
        if namespace is None:
            raise NotFound(f"message {what.message_id} not found")
        count = await runtime.episode_forgetter.forget(namespace, ids=[what.message_id])
        return Forgotten(namespace=namespace, forgotten=count)
    if (what.since is None) != (what.until is None):
        raise InvalidInput("give since and until together: the span to forget", code="invalid_forget")
    since = None if what.since is None else read_time(what.since, "since")
    until = None if what.until is None else read_time(what.until, "until")
    count = await runtime.episode_forgetter.forget(
        what.namespace, conversation_id=what.conversation_id, since=since, until=until
    )
    if count == 0 and since is None:
        raise NotFound(f"conversation {what.conversation_id} not found in namespace {what.namespace!r}")
    return Forgotten(namespace=what.namespace, forgotten=count)
