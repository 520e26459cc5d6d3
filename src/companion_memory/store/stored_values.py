"""Every column that holds a time, a day or a count, and what its value must be.

Writers store times only in ``clock.iso``'s form and counts within ``domain.counts``'s
bound. Rows written before that (by an older version, an import, a hand in the database)
may hold "5-01-01T00:00:00.000Z", "garbage" or a ``seen_count`` of 2**63, which once
made every read of their namespace fail. Here is how the rest of the code lives with
them, as it lives with unreadable JSON:

- a reader that lists rows leaves such a row out with a warning (``readable``), so that
  no code parses or compares what it cannot read;
- the health report counts and names them (``problem_sql``: the same checks in SQL);
- the repair rewrites them (``repaired``): a value that can be read is normalised
  (clamped into the range kept), one that cannot becomes NULL where the column allows
  it, else the row's ``created_at`` (or now) for a time, the default for a count.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from ..clock import EARLIEST, LATEST, day_problem, iso, stored_moment, time_problem
from ..domain.counts import MAX_COUNT, clamped, count_problem

log = logging.getLogger("companion_memory.store")

Kind = Literal["time", "day", "plan_end", "count", "flag"]


@dataclass(frozen=True)
class StoredColumn:
    name: str
    kind: Kind
    required: bool = True
    # A count that cannot be read is repaired to this.
    default: int = 0


@dataclass(frozen=True)
class StoredTable:
    name: str
    columns: tuple[StoredColumn, ...]
    # The column that names a row in the health report; None: only its rowid.
    key: str | None = "id"


def _times(*names: str, optional: Sequence[str] = ()) -> tuple[StoredColumn, ...]:
    return tuple(StoredColumn(n, "time") for n in names) + tuple(StoredColumn(n, "time", False) for n in optional)


def _counts(*names: str) -> tuple[StoredColumn, ...]:
    return tuple(StoredColumn(n, "count") for n in names)


# Every table of the migrations with such a column (a test checks the migrations against it).
TABLES = (
    StoredTable("messages", _times("created_at", "stored_at")),
    StoredTable(
        "episodes",
        (
            *_times("created_at", "stored_at", optional=("layer_at", "last_injected_at")),
            *_counts("recall_count", "revivals"),
        ),
    ),
    StoredTable(
        "memories",
        (
            *_times("created_at", "updated_at", optional=("last_injected_at", "last_seen_at", "layer_at")),
            StoredColumn("valid_to", "plan_end", False),
            StoredColumn("seen_count", "count", default=1),
            *_counts("recall_count", "revivals"),
            StoredColumn("pinned", "flag"),
        ),
    ),
    StoredTable("memory_relations", _times("created_at", optional=("weighed_at",))),
    StoredTable(
        "memory_candidates",
        (*_times("created_at", "updated_at", optional=("reviewed_at",)), StoredColumn("valid_to", "plan_end", False)),
    ),
    StoredTable("precious", _times("created_at")),
    StoredTable("glossary", _times("created_at", "updated_at")),
    StoredTable(
        "daily_log", (StoredColumn("date", "day"), *_counts("message_count"), *_times("created_at", "updated_at"))
    ),
    StoredTable(
        "weekly_log",
        (
            StoredColumn("start_date", "day"),
            StoredColumn("end_date", "day"),
            *_times("created_at", "updated_at", optional=("rolled_up_at",)),
        ),
    ),
    StoredTable("monthly_log", _times("created_at", "updated_at")),
    StoredTable(
        "dream_runs",
        (
            StoredColumn("date", "day"),
            StoredColumn("dry_run", "flag"),
            *_counts("messages_read", "candidates_created"),
            *_times("started_at", optional=("finished_at",)),
        ),
    ),
    StoredTable("memory_events", _times("created_at")),
    StoredTable(
        "usage_logs",
        (
            *_counts("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens"),
            StoredColumn("latency_ms", "count", False),
            *_times("created_at"),
        ),
    ),
    StoredTable("cache_entries", _times("created_at", "updated_at", optional=("expires_at",)), key="key"),
    StoredTable("idempotency_keys", _times("created_at"), key="key"),
    StoredTable("processing_cursors", _times("updated_at"), key="name"),
    StoredTable(
        "vector_outbox", (*_counts("seq", "attempts"), *_times("next_attempt_at", "created_at")), key="memory_id"
    ),
    StoredTable("vector_index_state", (*_counts("dimensions"), *_times("updated_at"))),
    StoredTable("memory_shares", _times("created_at", "updated_at", optional=("decided_at",))),
    StoredTable("memory_share_events", _times("created_at")),
    StoredTable(
        "todos",
        (
            StoredColumn("priority", "count", default=3),
            StoredColumn("due", "day", False),
            *_times("created_at", "updated_at", optional=("closed_at",)),
        ),
    ),
    StoredTable("moods", _times("felt_at", "created_at")),
    StoredTable("night_dreams", (StoredColumn("date", "day"), *_counts("seq"), *_times("created_at"))),
    StoredTable("persona_changes", _times("changed_at")),
    StoredTable("context_folds", (*_counts("upto"), *_times("created_at", "used_at"))),
    StoredTable(
        "people",
        (*_counts("mentions"), *_times("familiarity_at", "created_at", "updated_at", optional=("last_mentioned_at",))),
    ),
    StoredTable("person_memories", _times("created_at"), key=None),
    StoredTable("person_proposals", _times("created_at", optional=("reviewed_at",))),
    StoredTable(
        "history_imports",
        (
            *_times("created_at", "updated_at", optional=("since_at", "until_at", "finished_at")),
            *_counts("size", "received", "position", "stored", "duplicates", "outside"),
            StoredColumn("total", "count", False),
            StoredColumn("dry_run", "flag"),
        ),
    ),
    StoredTable("oauth_clients", _times("created_at", optional=("fetched_at",)), key="client_id"),
    StoredTable("oauth_requests", _times("created_at", "expires_at")),
    StoredTable("oauth_grants", _times("created_at", optional=("last_used_at", "revoked_at"))),
    StoredTable("oauth_codes", _times("created_at", "expires_at", optional=("used_at",)), key=None),
    StoredTable("oauth_tokens", _times("created_at", "expires_at", optional=("used_at",)), key=None),
    StoredTable("oauth_document_failures", _times("failed_at"), key="client_id"),
)
TABLES_BY_NAME = {table.name: table for table in TABLES}


# -- reading --------------------------------------------------------------------------


def plan_end_problem(value: object) -> str | None:
    """A plan's end is a stored day or a stored time."""
    if isinstance(value, str) and len(value) == 10:
        return day_problem(value)
    return time_problem(value)


def flag_problem(value: object) -> str | None:
    return None if type(value) is int and value in (0, 1) else f"{value!r} is neither 0 nor 1"


_CHECKS = {
    "time": time_problem,
    "day": day_problem,
    "plan_end": plan_end_problem,
    "count": count_problem,
    "flag": flag_problem,
}


def value_problem(column: StoredColumn, value: object) -> str | None:
    if value is None and not column.required:
        return None
    return _CHECKS[column.kind](value)


def row_problem(table: StoredTable, row: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first of the row's columns (those it holds) that cannot be read, and why.
    Every listing asks it of every row it reads: about 4 µs for a memory."""
    for column in table.columns:
        if column.name in row:
            problem = value_problem(column, row[column.name])
            if problem:
                return column.name, problem
    return None


def readable(table: str, rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows whose times and counts can be read; each one left out is logged (the
    health report lists it, and a repair fixes it)."""
    spec = TABLES_BY_NAME[table]
    kept: list[dict[str, Any]] = []
    for row in rows:
        found = row_problem(spec, row)
        if found is None:
            kept.append(row)
        else:
            column, problem = found
            log.warning(
                "%s %s: %s %r %s; left out (the health report lists it, doctor --repair fixes it)",
                table,
                row.get(spec.key or "id", "?"),
                column,
                row[column] if not isinstance(row[column], str) else row[column][:60],
                problem,
            )
    return kept


# -- the same checks in SQL (the health report, the repair) ---------------------------

# The stored forms as GLOB patterns: D1 refuses one longer than 50 bytes, so a time is
# matched in two parts. The character classes leave only the months, days and hours past
# the end to the comparisons below; SQL and ``clock.time_problem`` agree on every value
# (a test checks). About 1 µs a value (SQLite, 100k rows).
_DAY_GLOB = "'[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'"
_DATE_PART_GLOB = "'[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T*'"
_TIME_PART_GLOB = "'[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'"


def _calendar_sql(c: str) -> str:
    """The month and the day of ``c`` (in a stored form) exist."""
    year = f"CAST(substr({c}, 1, 4) AS INTEGER)"
    leap = f"({year} % 4 = 0 AND ({year} % 100 <> 0 OR {year} % 400 = 0))"
    last_day = (
        f"CASE substr({c}, 6, 2) WHEN '02' THEN CASE WHEN {leap} THEN '29' ELSE '28' END "
        "WHEN '04' THEN '30' WHEN '06' THEN '30' WHEN '09' THEN '30' WHEN '11' THEN '30' ELSE '31' END"
    )
    day = f"substr({c}, 9, 2)"
    return f"substr({c}, 6, 2) BETWEEN '01' AND '12' AND {day} BETWEEN '01' AND '31' AND ({day} <= '28' OR {day} <= {last_day})"


def _time_sql(c: str) -> str:
    return (
        f"length({c}) = 24 AND {c} GLOB {_DATE_PART_GLOB} AND substr({c}, 12) GLOB {_TIME_PART_GLOB} "
        f"AND {c} >= '{iso(EARLIEST)}' AND {_calendar_sql(c)} AND substr({c}, 12, 2) <= '23'"
    )


def _day_sql(c: str) -> str:
    return (
        f"length({c}) = 10 AND {c} GLOB {_DAY_GLOB} AND {c} >= '{EARLIEST.date().isoformat()}' AND {_calendar_sql(c)}"
    )


def _fine_sql(column: StoredColumn) -> str:
    c = column.name
    if column.kind == "count":
        check = f"typeof({c}) = 'integer' AND {c} BETWEEN 0 AND {MAX_COUNT}"
    elif column.kind == "flag":
        check = f"typeof({c}) = 'integer' AND {c} IN (0, 1)"
    elif column.kind == "time":
        check = f"typeof({c}) = 'text' AND {_time_sql(c)}"
    elif column.kind == "day":
        check = f"typeof({c}) = 'text' AND {_day_sql(c)}"
    else:
        check = f"typeof({c}) = 'text' AND CASE WHEN length({c}) = 10 THEN {_day_sql(c)} ELSE {_time_sql(c)} END"
    return f"({c} IS NULL OR ({check}))" if not column.required else f"({check})"


def problem_sql(table: StoredTable) -> str:
    """A condition true of the table's rows that ``row_problem`` finds a problem in."""
    return "NOT (" + " AND ".join(_fine_sql(column) for column in table.columns) + ")"


def time_sql(column: str) -> str:
    """A condition true where ``column`` holds a readable stored time."""
    return _fine_sql(StoredColumn(column, "time"))


def day_sql(column: str) -> str:
    """A condition true where ``column`` holds a readable stored day."""
    return _fine_sql(StoredColumn(column, "day"))


# -- repairing -------------------------------------------------------------------------

# A year written with fewer than four digits ("5-01-01T…", as %Y once wrote year 5).
_SHORT_YEAR = re.compile(r"^([0-9]{1,3})(-[0-9]{2}-[0-9]{2})")


def _lenient_time(value: object) -> datetime | None:
    """What a stored value most likely meant as a UTC time, any year; None when nothing."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = _SHORT_YEAR.sub(lambda m: m.group(1).zfill(4) + m.group(2), value.strip())
    try:
        moment = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # just before or after the calendar, seen from UTC
        return EARLIEST if moment.year < 5000 else LATEST


def _clamped(moment: datetime) -> datetime:
    return min(max(moment, EARLIEST), LATEST)


def repaired(column: StoredColumn, value: object, row: Mapping[str, Any], now: datetime) -> object:
    """The value a repair writes for ``value`` (one ``value_problem`` refuses)."""
    if column.kind in ("count", "flag"):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return clamped(int(value)) if column.kind == "count" else int(bool(value))
        return column.default if column.required else None
    moment = _lenient_time(value)
    is_day = column.kind == "day" or (column.kind == "plan_end" and isinstance(value, str) and "T" not in value.upper())
    if moment is not None:
        moment = _clamped(moment)
        return moment.date().isoformat() if is_day else iso(moment)
    if not column.required:
        return None
    created = stored_moment(row.get("created_at")) if column.name != "created_at" else None
    fallback = created or now
    return fallback.date().isoformat() if is_day else iso(fallback)
