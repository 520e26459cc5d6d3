"""``ports.TaskQueue`` for the local server: a table in the local SQLite database.

It behaves like the Worker's Queue: delivery at least once, ``ack`` or ``retry`` per
message, a delay on send and on retry, and a message that keeps failing is set aside
("dead") after ``max_attempts`` deliveries instead of looping forever. Tasks survive a
restart; a delivery cut short by a crash comes back once its lease runs out. The same
task queued twice while the first still waits is kept once.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ...clock import iso
from ...ports import Clock, Database, QueueMessage, Statement

log = logging.getLogger("companion_memory.queue")
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS local_tasks ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " body TEXT NOT NULL,"
    " status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'dead')),"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " available_at TEXT NOT NULL,"
    " last_error TEXT,"
    " created_at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS local_tasks_due ON local_tasks (status, available_at)",
    # Finds a waiting copy of a task being sent (see send_batch).
    "CREATE INDEX IF NOT EXISTS local_tasks_waiting ON local_tasks (body) WHERE status = 'queued' AND attempts = 0",
)
# The Worker's consumer settings in wrangler.toml: max_batch_size 10, max_retries 5.
BATCH_SIZE = 10
MAX_ATTEMPTS = 6
LEASE = timedelta(minutes=5)
UNSETTLED_DELAY_SECONDS = 30


@dataclass
class LocalMessage:
    id: str
    body: Any
    attempts: int
    outcome: tuple[str, int] | None = None

    def ack(self) -> None:
        self.outcome = ("ack", 0)

    def retry(self, delay_seconds: int = 0) -> None:
        self.outcome = ("retry", delay_seconds)


class LocalTaskQueue:
    def __init__(self, db: Database, clock: Clock, *, max_attempts: int = MAX_ATTEMPTS) -> None:
        self.db = db
        self.clock = clock
        self.max_attempts = max_attempts

    async def prepare(self) -> None:
        await self.db.batch([Statement(sql) for sql in SCHEMA])

    def _at(self, delay_seconds: float) -> str:
        return iso(self.clock.now() + timedelta(seconds=delay_seconds))

    async def send(self, body: Mapping[str, Any], *, delay_seconds: int = 0) -> None:
        await self.send_batch([body], delay_seconds=delay_seconds)

    async def send_batch(self, bodies: Sequence[Mapping[str, Any]], *, delay_seconds: int = 0) -> None:
        at, now = self._at(delay_seconds), iso(self.clock.now())
        statements = []
        for body in bodies:
            text = json.dumps(dict(body), sort_keys=True, separators=(",", ":"))
            statements += [
                # A waiting copy of the same task is brought forward instead of doubled.
                Statement(
                    "UPDATE local_tasks SET available_at = MIN(available_at, ?) "
                    "WHERE body = ? AND status = 'queued' AND attempts = 0",
                    (at, text),
                ),
                Statement(
                    "INSERT INTO local_tasks (body, available_at, created_at) SELECT ?, ?, ? WHERE NOT EXISTS "
                    "(SELECT 1 FROM local_tasks WHERE body = ? AND status = 'queued' AND attempts = 0)",
                    (text, at, now, text),
                ),
            ]
        if statements:
            await self.db.batch(statements)

    async def deliver(
        self, handler: Callable[[Sequence[QueueMessage]], Awaitable[None]], limit: int = BATCH_SIZE
    ) -> int:
        """Hand the due tasks (at most ``limit``) to ``handler`` and apply what it decided
        for each; returns how many were delivered. A handler that raises, or leaves a
        message unsettled, has it retried, as the Queue does."""
        now = iso(self.clock.now())
        rows = await self.db.all(
            "SELECT id, body, attempts FROM local_tasks WHERE status = 'queued' AND available_at <= ? "
            "ORDER BY available_at, id LIMIT ?",
            (now, limit),
        )
        if not rows:
            return 0
        lease = iso(self.clock.now() + LEASE)
        await self.db.batch(
            [
                Statement(
                    "UPDATE local_tasks SET attempts = attempts + 1, available_at = ? WHERE id = ?", (lease, r["id"])
                )
                for r in rows
            ]
        )
        messages = [LocalMessage(str(r["id"]), json.loads(r["body"]), r["attempts"] + 1) for r in rows]
        error = None
        try:
            await handler(messages)
        except Exception as raised:  # broad on purpose: a consumer's crash is recorded and its tasks retried
            log.exception("queue handler failed; its messages will be retried")
            error = f"{type(raised).__name__}: {raised}"
        await self.db.batch([self._settle(m, error) for m in messages])
        return len(messages)

    def _settle(self, message: LocalMessage, error: str | None) -> Statement:
        verdict, delay = message.outcome or ("retry", UNSETTLED_DELAY_SECONDS)
        if verdict == "ack":
            return Statement("DELETE FROM local_tasks WHERE id = ?", (int(message.id),))
        if message.attempts >= self.max_attempts:
            log.error("task %s failed %d times; set aside: %r", message.id, message.attempts, message.body)
            return Statement(
                "UPDATE local_tasks SET status = 'dead', last_error = ? WHERE id = ?",
                (error or "retried too often", int(message.id)),
            )
        return Statement(
            "UPDATE local_tasks SET available_at = ?, last_error = ? WHERE id = ?",
            (self._at(delay), error, int(message.id)),
        )

    async def stats(self) -> dict[str, int]:
        rows = await self.db.all("SELECT status, COUNT(*) AS n FROM local_tasks GROUP BY status")
        counts = {r["status"]: r["n"] for r in rows}
        return {"queued": counts.get("queued", 0), "dead": counts.get("dead", 0)}
