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
from datetime import date, timedelta
from typing import Any
from urllib.parse import quote

from ...clock import iso, local_date
from ...history.day_file import SOURCE, DailyEntry, entry_id, entry_time, parse_daily
from ...memory.config import MemoryConfig
from ...memory.ingest import IncomingMessage, MessageIngestor
from ...ports import Clock, Database, HttpClient, HttpUnanswered
from ...store.cursors import CursorStore


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
        return [
            IncomingMessage(
                role=entry.role,
                content=entry.content,
                id=entry_id(repo, day, entry),
                created_at=entry_time(day, entry, self.config.dream_time_zone),
                metadata={"source": SOURCE, "kind": entry.kind, "repo": repo, "date": day.isoformat()},
            )
            for entry in entries
        ]

    @staticmethod
    def _cursor(repo: str, day: date) -> str:
        return f"github_daily:{repo}:{day.isoformat()}"
