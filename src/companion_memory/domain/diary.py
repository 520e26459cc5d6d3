"""The diary, as the services hand it around: a day's entry (``daily_log``, in its column
order), the week and month summaries the rollups make of them, and those as the admin
panel's diary lists them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, kw_only=True)
class DiaryDay:
    """What the dream wrote about one local day of a namespace."""

    id: str
    namespace: str
    date: str
    title: str
    summary: str
    message_count: int
    created_at: str
    updated_at: str


def iso_week(day: date) -> str:
    """The ISO week a day falls in, as weekly_log names it: ``2026-W47``."""
    year, number, _ = day.isocalendar()
    return f"{year}-W{number:02d}"


@dataclass(frozen=True, kw_only=True)
class WeekSummary:
    """An ISO week (``2026-W47``) of diary days, Monday to Sunday."""

    week: str
    start_date: str
    end_date: str
    title: str
    summary: str


@dataclass(frozen=True, kw_only=True)
class MonthSummary:
    """A month (``2026-11``) of weeks."""

    month: str
    title: str
    summary: str


@dataclass(frozen=True, kw_only=True)
class WeekEntry(WeekSummary):
    """A week as the diary browser lists it: also when it was last written."""

    updated_at: str


@dataclass(frozen=True, kw_only=True)
class MonthEntry(MonthSummary):
    """A month as the diary browser lists it: also when it was last written."""

    updated_at: str
