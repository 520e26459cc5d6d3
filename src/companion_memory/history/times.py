"""The times an export gives, in the stored form. Every one goes through ``clock.read_time``
(the one validator of a given time); the epoch numbers some apps write are turned into a
datetime first, once, so no precision is lost to a text round trip."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from ..clock import TIME_RANGE, iso, read_time, shown
from ..errors import InvalidInput, UnreadableHistory
from .message import ImportedMessage, Role
from .tally import Tally

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stored_time(value: object, where: str, *, time_zone: str = "UTC") -> str:
    """An ISO-8601 text (one without an offset read in ``time_zone``) as stored."""
    try:
        return read_time(value, where, time_zone=time_zone)
    except InvalidInput as error:
        raise UnreadableHistory(error.message) from None


def epoch_seconds(value: object, where: str) -> str:
    """A number of seconds since the epoch (ChatGPT's float with microseconds)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnreadableHistory(f"{where}: {shown(value)} is not a number of seconds since 1970")
    try:
        moment = datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        raise UnreadableHistory(f"{where}: {shown(value)} is outside the times kept, {TIME_RANGE}") from None
    return stored_time(iso(moment), where)


def epoch_millis(value: object, where: str) -> str:
    """A whole number of milliseconds since the epoch (Chatbox), in integer arithmetic."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise UnreadableHistory(f"{where}: {shown(value)} is not a number of milliseconds since 1970")
    try:
        moment = EPOCH + timedelta(milliseconds=int(value))
    except OverflowError:
        raise UnreadableHistory(f"{where}: {shown(value)} is outside the times kept, {TIME_RANGE}") from None
    return stored_time(iso(moment), where)


def undated(conversation_id: str, title: str | None, role: Role, content: str, source_id: str) -> ImportedMessage:
    """A message as a reader makes it, its time left for ``fill_times`` to set."""
    return ImportedMessage(conversation_id, title, role, content, created_at="", source_id=source_id)


def fill_times(
    messages: list[tuple[ImportedMessage, str | None]], start: str | None, tally: Tally
) -> Iterator[ImportedMessage]:
    """A conversation's messages, each with the time the export gave or None, dated.
    FORMATS.md §0 rule 2: a message without a time takes the time of the one shown
    before it, or the conversation's start when it is first, or else the next dated
    one's; never the import's time, which would put an old message in today's diary. In
    a conversation with no time at all they are skipped as ``undated``."""
    previous = start or next((at for _, at in messages if at is not None), None)
    for message, at in messages:
        if at is not None:
            previous = at
            yield replace(message, created_at=at)
        elif previous is None:
            tally.skip("undated")
        else:
            yield replace(message, created_at=previous, estimated=True)
