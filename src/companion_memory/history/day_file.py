"""The day files a coding agent's hooks write (``archive/daily/YYYY-MM-DD.md``), read
without any store: the GitHub daily source pulls them each night and ``import-history``
reads one handed to it, and both give a line the same time and the same message id, so
that a day stored by one is not stored again by the other.

A turn line (``- 14:05 [turn] u: … ⇢ a: …``) is a user and an assistant message at that
local time; a checkpoint's writer summary (``## checkpoint`` … ``### writer 摘要``, with
its ``### 未收尾`` open ends) is one message.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date, datetime, time

from ..clock import iso, zone

MAX_ENTRY_CHARS = 4000
SOURCE = "github-daily"
TURN = re.compile(r"^\s*[-*]\s+(\d{1,2}:\d{2})\s+\[turn\]\s+u:\s*(.+?)\s+⇢\s+a:\s*(.+?)\s*$")
CHECKPOINT = re.compile(r"^##\s+checkpoint\b.*$", re.IGNORECASE | re.MULTILINE)
HEADING = re.compile(r"^#{2,3}\s+.*$", re.MULTILINE)
CLOCK_TIME = re.compile(r"\b(\d{1,2}):(\d{2})\b")


@dataclass(frozen=True)
class DailyEntry:
    role: str
    content: str
    at: str  # HH:MM, local
    # "turn" or "checkpoint": what the line was, kept in the message's metadata.
    kind: str


def _section(block: str, title: str) -> str:
    """The text under ``### <title>`` up to the next heading."""
    for match in re.finditer(r"^###\s+(.+?)\s*$", block, re.MULTILINE):
        if match.group(1).strip().lower() == title.lower():
            rest = block[match.end() :]
            following = HEADING.search(rest)
            return (rest[: following.start()] if following else rest).strip()
    return ""


def parse_daily(markdown: str) -> list[DailyEntry]:
    """The turns and checkpoint summaries of one day file, in file order."""
    entries: list[DailyEntry] = []
    for line in markdown.splitlines():
        if match := TURN.match(line):
            at, user, assistant = match.groups()
            entries.append(DailyEntry("user", user[:MAX_ENTRY_CHARS], at.zfill(5), "turn"))
            entries.append(DailyEntry("assistant", assistant[:MAX_ENTRY_CHARS], at.zfill(5), "turn"))
    starts = [m.start() for m in CHECKPOINT.finditer(markdown)]
    for start, end in zip(starts, [*starts[1:], len(markdown)], strict=False):
        block = markdown[start:end]
        heading, _, body = block.partition("\n")
        summary = _section(body, "writer 摘要")
        if not summary:
            continue
        open_ends = _section(body, "未收尾")
        content = summary + (f"\n\n未收尾:\n{open_ends}" if open_ends else "")
        stamp = CLOCK_TIME.search(heading)
        at = f"{int(stamp.group(1)):02d}:{stamp.group(2)}" if stamp else "23:59"
        entries.append(DailyEntry("user", content[:MAX_ENTRY_CHARS], at, "checkpoint"))
    return entries


def entry_time(day: date, entry: DailyEntry, time_zone: str) -> str:
    """The stored time of an entry: its HH:MM on ``day``, local in ``time_zone``."""
    hour, minute = (int(part) for part in entry.at.split(":"))
    return iso(datetime.combine(day, time(min(hour, 23), min(minute, 59)), tzinfo=zone(time_zone)))


def entry_id(repo: str, day: date, entry: DailyEntry) -> str:
    """The message id of an entry: the same line of the same day is the same message."""
    line = f"{repo}\x00{day}\x00{entry.kind}\x00{entry.at}\x00{entry.role}\x00{entry.content}"
    return f"{SOURCE}:{hashlib.sha256(line.encode('utf-8')).hexdigest()[:32]}"
