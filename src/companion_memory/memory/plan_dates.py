"""When a plan ends: reading, resolving and testing a plan's ``valid_to``."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta

from ..clock import STORED_DAY, OutOfRange, TimeError, iso, local_date, parse_day, parse_time, shown, stored_moment
from ..domain.memory import Memory
from ..errors import InvalidInput

MAX_VALID_DAYS = 3650


def plan_end(text: object, time_zone: str) -> str:
    """The one spelling of a plan's end: a day stays "YYYY-MM-DD"; a moment becomes UTC
    (one without an offset is read in ``time_zone``). ``TimeError`` when it is neither."""
    if isinstance(text, str) and STORED_DAY.fullmatch(text.strip()):
        return parse_day(text).isoformat()
    try:
        return iso(parse_time(text, time_zone=time_zone))
    except OutOfRange:
        raise
    except TimeError:
        raise TimeError(f"{shown(text)} is neither a day (YYYY-MM-DD) nor an ISO-8601 time") from None


def parse_valid_to(text: object, time_zone: str, field: str = "valid_to") -> str:
    """``plan_end``, or an ``InvalidInput`` (invalid_time) naming ``field``."""
    try:
        return plan_end(text, time_zone)
    except TimeError as error:
        raise InvalidInput(f"{field}: {error}", code="invalid_time") from None


def valid_for(days: int, now: datetime, time_zone: str) -> str:
    """The day ``days`` days from today in ``time_zone``: valid_days=0 is today."""
    if not 0 <= days <= MAX_VALID_DAYS:
        raise InvalidInput(f"valid_days must be between 0 and {MAX_VALID_DAYS}", code="invalid_time")
    return (local_date(now, time_zone) + timedelta(days=days)).isoformat()


def has_passed(valid_to: str | None, now: datetime, time_zone: str) -> bool:
    """Whether a stored end has passed. An end that cannot be read (a row stored before
    ends were checked, which listings leave out) has not: the plan stays until the owner
    edits it or a repair reads it."""
    if valid_to is None:
        return False
    if STORED_DAY.fullmatch(valid_to):
        return local_date(now, time_zone).isoformat() > valid_to
    end = stored_moment(valid_to)
    return end is not None and end <= now


def plan_status(memory: Memory, now: datetime, time_zone: str) -> str | None:
    """The plan's status as of ``now``: an active plan past its end is expired already,
    whether or not the nightly job has written it down yet."""
    if memory.plan_status == "active" and has_passed(memory.valid_to, now, time_zone):
        return "expired"
    return memory.plan_status


def is_open(memory: Memory, now: datetime, time_zone: str) -> bool:
    """Recall's test: anything that is not a plan passes; a plan only while it is active."""
    return memory.type != "plan" or plan_status(memory, now, time_zone) == "active"


# -- "周末", "next week": the day a plan said in words ends --------------------------

_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_NUMBERS_ZH = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUMBERS_EN = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}


def _sunday(day: date) -> date:
    """The Sunday that ends ``day``'s week (Monday to Sunday)."""
    return day + timedelta(days=6 - day.weekday())


def _weekend(day: date) -> date:
    """The coming weekend's Sunday: said on a Sunday, "周末" is next week's, not one that is ending."""
    return _sunday(day + timedelta(days=1 if day.weekday() == 6 else 0))


def _month_end(day: date, months_ahead: int) -> date:
    month = day.month - 1 + months_ahead
    first_of_next = date(day.year + (month + 1) // 12, (month + 1) % 12 + 1, 1)
    return first_of_next - timedelta(days=1)


def _count(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.lower() in _NUMBERS_EN:
        return _NUMBERS_EN[text.lower()]
    # 十 alone is ten, 十三 is 13, 三十 is 30.
    tens, _, ones = text.partition("十") if "十" in text else ("", "", text)
    if "十" in text:
        return (_NUMBERS_ZH.get(tens, 1) if tens else 1) * 10 + (_NUMBERS_ZH.get(ones, 0) if ones else 0)
    return _NUMBERS_ZH.get(text, 0)


def _weekday_en(match: re.Match[str]) -> int:
    return _WEEKDAYS_EN.index(match.group("weekday").lower())


_EN_DAY = "|".join(_WEEKDAYS_EN)
_ZH_WEEK = r"(?:周|星期|礼拜)"
_ZH_COUNT = r"(?P<n>\d{1,3}|[一两二三四五六七八九十]{1,3})"
# (pattern, the day it names given the day it was said); the first pattern wins where
# two start at the same place, so longer phrases come first.
_PHRASES: tuple[tuple[re.Pattern[str], Callable[[date, re.Match[str]], date]], ...] = (
    (re.compile(r"大后天"), lambda d, m: d + timedelta(days=3)),
    (re.compile(r"后天"), lambda d, m: d + timedelta(days=2)),
    (re.compile(r"明(?:天|日|早|晚|儿)"), lambda d, m: d + timedelta(days=1)),
    (re.compile(r"今(?:天|日|早|晚)"), lambda d, m: d),
    (
        re.compile(rf"下个?{_ZH_WEEK}(?P<weekday>[一二三四五六日天])"),
        lambda d, m: d - timedelta(days=d.weekday() - 7) + timedelta(days=_WEEKDAYS_ZH[m.group("weekday")]),
    ),
    (
        re.compile(rf"(?<!上)(?:这个?|本)?{_ZH_WEEK}(?P<weekday>[一二三四五六日天])"),
        lambda d, m: d + timedelta(days=(_WEEKDAYS_ZH[m.group("weekday")] - d.weekday()) % 7),
    ),
    (re.compile(r"下个?周末"), lambda d, m: _weekend(d) + timedelta(days=7)),
    (re.compile(r"(?<!上)(?:这个?|本)?周末"), lambda d, m: _weekend(d)),
    (re.compile(rf"下个?{_ZH_WEEK}"), lambda d, m: _sunday(d) + timedelta(days=7)),
    (re.compile(rf"(?:这个?|本){_ZH_WEEK}"), lambda d, m: _sunday(d)),
    (re.compile(r"下个?月"), lambda d, m: _month_end(d, 1)),
    (re.compile(r"(?:这个月|本月|月底)"), lambda d, m: _month_end(d, 0)),
    (re.compile(r"明年"), lambda d, m: date(d.year + 1, 12, 31)),
    (re.compile(rf"{_ZH_COUNT}(?:天|日)(?:后|之后|以后)"), lambda d, m: d + timedelta(days=_count(m.group("n")))),
    (
        re.compile(rf"{_ZH_COUNT}个?(?:周|星期|礼拜)(?:后|之后|以后)"),
        lambda d, m: d + timedelta(weeks=_count(m.group("n"))),
    ),
    (re.compile(r"\bthe day after tomorrow\b", re.I), lambda d, m: d + timedelta(days=2)),
    (re.compile(r"\btomorrow\b", re.I), lambda d, m: d + timedelta(days=1)),
    (re.compile(r"\b(?:today|tonight)\b", re.I), lambda d, m: d),
    (re.compile(r"\bnext weekend\b", re.I), lambda d, m: _weekend(d) + timedelta(days=7)),
    (re.compile(r"(?<!last )\bweekend\b", re.I), lambda d, m: _weekend(d)),
    (
        re.compile(rf"\bnext (?P<weekday>{_EN_DAY})\b", re.I),
        lambda d, m: d - timedelta(days=d.weekday() - 7) + timedelta(days=_weekday_en(m)),
    ),
    (
        re.compile(rf"(?<!last )\b(?P<weekday>{_EN_DAY})\b", re.I),
        lambda d, m: d + timedelta(days=(_weekday_en(m) - d.weekday()) % 7),
    ),
    (re.compile(r"\bnext week\b", re.I), lambda d, m: _sunday(d) + timedelta(days=7)),
    (re.compile(r"\bthis week\b", re.I), lambda d, m: _sunday(d)),
    (re.compile(r"\bnext month\b", re.I), lambda d, m: _month_end(d, 1)),
    (re.compile(r"\b(?:this month|end of the month)\b", re.I), lambda d, m: _month_end(d, 0)),
    (re.compile(r"\bnext year\b", re.I), lambda d, m: date(d.year + 1, 12, 31)),
    (
        re.compile(r"\bin (?P<n>\d{1,3}|an?|one|two|three|four|five|six|seven|ten) (?P<unit>day|week)s?\b", re.I),
        lambda d, m: d + timedelta(days=_count(m.group("n")) * (7 if m.group("unit").lower() == "week" else 1)),
    ),
)


def resolve_when(text: str, said_on: date) -> tuple[date, str] | None:
    """The day a plan in ``text`` ends, for words said on ``said_on`` ("周末" is that
    week's Sunday, "next week" the next week's Sunday, "on Friday" the coming Friday),
    and the words that said it; None when the text names no day ahead."""
    found: tuple[int, date, str] | None = None
    for pattern, resolve in _PHRASES:
        match = pattern.search(text)
        if match and (found is None or match.start() < found[0]):
            try:
                found = (match.start(), resolve(said_on, match), match.group(0))
            except (OverflowError, ValueError):  # a day past the end of the calendar
                continue
    return None if found is None else (found[1], found[2])
