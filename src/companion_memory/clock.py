"""Clocks, and the one form of every time the stores keep.

A stored time is UTC text, ``YYYY-MM-DDTHH:MM:SS.mmmZ``; a stored day is ``YYYY-MM-DD``.
Fixed width and four-digit years, so text order is time order: the stores compare and
sort times as text (``valid_to <= ?``, ``ORDER BY felt_at``), and a reader parses any of
them. Both lie within ``EARLIEST`` .. ``LATEST`` (1900-01-01 to 9999-12-31, UTC):

- 9999 is the last year four digits hold, and a Python ``datetime``;
- nothing kept here (a message, a mood, a plan, a person met) happened before 1900, and a
  floor far from year 1 keeps every time zone's view of a stored time on the calendar
  (0001-01-01T00:00+14:00 is no moment in UTC);

``parse_time`` and ``parse_day`` are the only readers of a time or day someone gives (a
request, an import, a model's answer); ``read_time`` and ``read_day`` are the same as an
``InvalidInput`` naming the field, and ``iso`` writes the stored form. A year below 1000
once reached the stores as "5-01-01T…" (``%Y`` does not pad) and broke every read of its
namespace.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import InvalidInput

EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
EARLIEST_DAY, LATEST_DAY = EARLIEST.date(), LATEST.date()
TIME_RANGE = "1900-01-01T00:00:00Z to 9999-12-31T23:59:59Z (UTC)"
DAY_RANGE = "1900-01-01 to 9999-12-31"
# The stored day, exactly (ASCII digits: \d would take any script's); a stored time's
# fixed characters, at every third place from the fifth: - - T : : .
STORED_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME_MARKS = "--T::."


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to (tests, benchmarks, replays)."""

    def __init__(self, start: datetime) -> None:
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **delta: float) -> None:
        self._now += timedelta(**delta)


def iso(moment: datetime) -> str:
    """The stored form: UTC, millisecond precision, ``Z``; the year always four digits."""
    utc = moment.astimezone(UTC)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}."
        f"{utc.microsecond // 1000:03d}Z"
    )


class TimeError(ValueError):
    """Why a given text is no time (or day) the stores keep; the readers below name the field."""


class OutOfRange(TimeError):
    """A time or day, but outside the range kept."""


def parse_time(text: object, *, time_zone: str = "UTC") -> datetime:
    """An ISO-8601 time as UTC; one without an offset is read in ``time_zone``.
    ``TimeError`` when it is none, or outside ``EARLIEST`` .. ``LATEST``."""
    try:
        moment = datetime.fromisoformat(text.strip().upper().replace("Z", "+00:00") if isinstance(text, str) else "")
    except ValueError:
        raise TimeError(f"{shown(text)} is not an ISO-8601 time (YYYY-MM-DDTHH:MM:SS, with Z or an offset)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone(time_zone))
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+14:00 is before the calendar in UTC
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise OutOfRange(f"{shown(text)} is outside the times kept, {TIME_RANGE}")
    return utc


def parse_day(text: object) -> date:
    """A calendar day, YYYY-MM-DD; ``TimeError`` when it is none, or outside ``DAY_RANGE``."""
    if isinstance(text, date) and not isinstance(text, datetime):
        day = text
    else:
        value = text.strip() if isinstance(text, str) else ""
        if not STORED_DAY.fullmatch(value):
            raise TimeError(f"{shown(text)} is not a day (YYYY-MM-DD)")
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise TimeError(f"{shown(text)} is not a day on the calendar") from None
    if not EARLIEST_DAY <= day <= LATEST_DAY:
        raise OutOfRange(f"{shown(text)} is outside the days kept, {DAY_RANGE}")
    return day


def read_time(text: object, field: str, *, time_zone: str = "UTC") -> str:
    """The stored form of a time given for ``field``; an ``InvalidInput`` (invalid_time)
    naming the field otherwise. Every writer of a given time goes through here."""
    try:
        return iso(parse_time(text, time_zone=time_zone))
    except TimeError as error:
        raise InvalidInput(f"{field}: {error}", code="invalid_time") from None


def read_day(text: object, field: str) -> str:
    """The stored form of a day given for ``field``; an ``InvalidInput`` (invalid_time) otherwise."""
    try:
        return parse_day(text).isoformat()
    except TimeError as error:
        raise InvalidInput(f"{field}: {error}", code="invalid_time") from None


def time_problem(value: object) -> str | None:
    """Why a stored value is not a stored time (so no reader may parse it), or None.
    Every listing asks it of every row's times: the form is checked by position, and
    ``fromisoformat`` (ASCII digits only) checks the digits and the calendar at once."""
    if type(value) is not str or len(value) != 24 or value[-1] != "Z" or value[4:20:3] != _TIME_MARKS:
        return "is not a time in the stored form (YYYY-MM-DDTHH:MM:SS.mmmZ)"
    try:
        moment = datetime.fromisoformat(value[:-1])
    except ValueError:
        return "is not a time on the calendar"
    return None if moment.year >= EARLIEST.year else f"is outside the times kept, {TIME_RANGE}"


def day_problem(value: object) -> str | None:
    """Why a stored value is not a stored day, or None."""
    if not isinstance(value, str) or not STORED_DAY.fullmatch(value):
        return "is not a day in the stored form (YYYY-MM-DD)"
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return "is not a day on the calendar"
    return None if day >= EARLIEST_DAY else f"is outside the days kept, {DAY_RANGE}"


def parse_iso(text: str) -> datetime:
    """A stored time (``iso``'s form) as a datetime. Only for text the stores hold, which
    their readers have checked; what someone gives goes through ``read_time``."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def stored_moment(value: object) -> datetime | None:
    """A stored time as a datetime; None when there is none or it cannot be read. For the
    few readers that reach one row by its key (so that it can still be edited or fixed),
    where a listing would have left it out."""
    return parse_iso(value) if isinstance(value, str) and time_problem(value) is None else None


def shown(value: object) -> str:
    """A given value as an error message quotes it: its repr, cut short."""
    if isinstance(value, date):
        value = value.isoformat()
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (use an IANA name such as 'Asia/Singapore')") from None


def local_date(moment: datetime, time_zone: str) -> date:
    """The calendar day it is at ``moment`` in ``time_zone``."""
    return moment.astimezone(zone(time_zone)).date()


def day_bounds(day: date, time_zone: str) -> tuple[str, str]:
    """The UTC timestamps (as stored) where ``day`` starts and ends in ``time_zone``."""
    tz = zone(time_zone)
    try:
        start = datetime.combine(day, time.min, tzinfo=tz)
        end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=tz)
        return iso(start), iso(end)
    except OverflowError:  # the first or last days of the calendar, seen from UTC
        raise InvalidInput(f"date {day.isoformat()} is out of range", code="invalid_date") from None
