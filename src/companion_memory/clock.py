"""Clocks and the one timestamp format the stores use."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import InvalidInput


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
    """UTC, millisecond precision, ``Z`` suffix: sorts correctly as text."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    """Raises ValueError for text that is not ISO-8601, or a moment UTC cannot hold
    (0001-01-01T00:00+14:00)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{text!r} is out of range in UTC") from None


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
