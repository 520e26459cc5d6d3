"""The GitHub daily source: the day files a coding agent's hooks push to a private repo
(``archive/daily/YYYY-MM-DD.md``) become raw messages for the dream.

Each night the recent days' files are read through the GitHub contents API: turn lines
(``- 14:05 [turn] u: … ⇢ a: …``) become a user and an assistant message at that local
time, and a checkpoint's writer summary (``## checkpoint`` … ``### writer 摘要``, with
its ``### 未收尾`` open ends) becomes one message. Every message carries an id derived
from its line, so pulling a file again (or a file that grew) adds only what is new. A
missing file, a refused token or a network failure is reported, never raised, and that
day is tried again the next night while it is within MESSAGES_RETENTION_DAYS (the window
the dream catches up on).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import quote

from ...clock import iso, local_date, zone
from ...memory.config import MemoryConfig
from ...memory.ingest import IncomingMessage, MessageIngestor
from ...ports import Clock, Database, HttpClient, HttpUnanswered
from ...store.cursors import CursorStore

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


class GithubDaily:
    def __init__(
        self, db: Database, ingestor: MessageIngestor, clock: Clock, config: MemoryConfig, http: HttpClient
    ) -> None:
        self.db = db
        self.ingestor = ingestor
        self.clock = clock
        self.config = config
        self.http = http
        self.cursors = CursorStore(db)

    @property
    def namespace(self) -> str:
        return self.config.github_daily_namespace or self.config.dream_namespace or "default"

    async def pull(self) -> dict[str, Any]:
        """Pull the days of the last MESSAGES_RETENTION_DAYS (up to yesterday) not pulled yet."""
        repo, token = self.config.github_daily_repo.strip(), self.config.github_daily_token.strip()
        if not repo:
            return {"skipped": "GITHUB_DAILY_REPO is not set"}
        if not token:
            return {"skipped": "GITHUB_DAILY_TOKEN is not set", "errors": ["GITHUB_DAILY_TOKEN is not set"]}
        yesterday = local_date(self.clock.now(), self.config.dream_time_zone) - timedelta(days=1)
        report: dict[str, Any] = {"repo": repo, "namespace": self.namespace, "days": {}, "messages": 0, "errors": []}
        for back in range(self.config.messages_retention_days - 1, -1, -1):
            day = yesterday - timedelta(days=back)
            if await self.cursors.get(self._cursor(repo, day)) is not None:
                continue
            status, outcome = await self._pull_day(repo, token, day)
            report["days"][day.isoformat()] = outcome
            if status == "ok":
                report["messages"] += outcome["new_messages"]
            elif status == "error":
                report["errors"].append(f"{day.isoformat()}: {outcome['error']}")
            elif status == "refused":
                report["errors"].append(outcome["error"])
                break  # the same token fails for every day
        return report

    async def _pull_day(self, repo: str, token: str, day: date) -> tuple[str, dict[str, Any]]:
        path = f"{self.config.github_daily_path.strip('/')}/{day.isoformat()}.md".lstrip("/")
        url = f"{self.config.github_api_url.rstrip('/')}/repos/{quote(repo, safe='/')}/contents/{quote(path, safe='/')}"
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github.raw+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "companion-memory",
        }
        try:
            response = await self.http.get(url, headers=headers, timeout_seconds=30.0)
        except HttpUnanswered as error:
            return "error", {"error": f"GitHub did not answer: {error}"}
        if response.status == 404:
            return "missing", {"missing": path}
        if response.status in (401, 403):
            limited = response.headers.get("x-ratelimit-remaining") == "0"
            why = (
                "rate limit reached"
                if limited
                else "bad GITHUB_DAILY_TOKEN, or it may not read this repository's contents"
            )
            return ("error" if limited else "refused"), {"error": f"GitHub answered {response.status}: {why}"}
        if response.status != 200:
            return "error", {"error": f"GitHub answered {response.status} for {path}"}
        entries = parse_daily(response.text)
        outcomes = await self.ingestor.ingest(
            self.namespace,
            self._messages(repo, day, entries),
            conversation_id=f"{SOURCE}:{day.isoformat()}",
            source=SOURCE,
        )
        now = iso(self.clock.now())
        digest = hashlib.sha256(response.body).hexdigest()
        await self.db.batch([CursorStore.put(self._cursor(repo, day), self.namespace, digest, now)])
        return "ok", {"entries": len(entries), "new_messages": sum(not o.duplicate for o in outcomes)}

    def _messages(self, repo: str, day: date, entries: list[DailyEntry]) -> list[IncomingMessage]:
        local = zone(self.config.dream_time_zone)
        messages = []
        for entry in entries:
            hour, minute = (int(part) for part in entry.at.split(":"))
            at = datetime.combine(day, time(min(hour, 23), min(minute, 59)), tzinfo=local)
            line = f"{repo}\x00{day}\x00{entry.kind}\x00{entry.at}\x00{entry.role}\x00{entry.content}"
            messages.append(
                IncomingMessage(
                    role=entry.role,
                    content=entry.content,
                    id=f"{SOURCE}:{hashlib.sha256(line.encode('utf-8')).hexdigest()[:32]}",
                    created_at=iso(at),
                    metadata={"source": SOURCE, "kind": entry.kind, "repo": repo, "date": day.isoformat()},
                )
            )
        return messages

    @staticmethod
    def _cursor(repo: str, day: date) -> str:
        return f"github_daily:{repo}:{day.isoformat()}"
