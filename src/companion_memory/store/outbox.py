"""SQL for the vector outbox: mirror writes that have not reached the index yet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ..ports import Database, Statement
from .sql import chunks, placeholders

# What an entry does, by the kind of row it mirrors (the ``kind`` column):
# - a memory: 'upsert' embeds it (or removes its vector if it is no longer live),
#   'delete' removes its vector, 'purge' removes its vector, then its row;
# - an episode: 'upsert' embeds it, 'delete' removes its vector, then the episode
#   (retention: the raw message keeps MESSAGES_RETENTION_DAYS), 'purge' removes its
#   vector, then the episode and its message (the owner forgot it).
OutboxOp = Literal["upsert", "delete", "purge"]
OutboxKind = Literal["memory", "episode"]


@dataclass(frozen=True)
class OutboxEntry:
    memory_id: str
    namespace: str
    op: OutboxOp
    seq: int
    attempts: int
    kind: OutboxKind = "memory"


_ENTRY = "memory_id, namespace, op, seq, attempts, kind"
_NEWEST_WINS = (
    "ON CONFLICT (memory_id) DO UPDATE SET kind = excluded.kind, op = excluded.op, seq = vector_outbox.seq + 1, "
    "attempts = 0, last_error = NULL, next_attempt_at = excluded.next_attempt_at"
)


class OutboxStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def enqueue(memory_id: str, namespace: str, op: OutboxOp, at: str, kind: OutboxKind = "memory") -> Statement:
        """The newest wanted state replaces an older one for the same row."""
        return Statement(
            "INSERT INTO vector_outbox (memory_id, namespace, kind, op, seq, attempts, next_attempt_at, created_at) "
            f"VALUES (?, ?, ?, ?, 0, 0, ?, ?) {_NEWEST_WINS}",
            (memory_id, namespace, kind, op, at, at),
        )

    @staticmethod
    def enqueue_unless_pending(memory_id: str, namespace: str, at: str, kind: OutboxKind = "memory") -> Statement:
        """An 'upsert' for a row that has no entry yet: one already waiting says what its row
        wants now (a pass over every row must not turn a waiting 'purge' into an 'upsert')."""
        return Statement(
            "INSERT INTO vector_outbox (memory_id, namespace, kind, op, seq, attempts, next_attempt_at, created_at) "
            "VALUES (?, ?, ?, 'upsert', 0, 0, ?, ?) ON CONFLICT (memory_id) DO NOTHING",
            (memory_id, namespace, kind, at, at),
        )

    @staticmethod
    def enqueue_stored_episodes(ids: Sequence[str], at: str) -> list[Statement]:
        """An 'upsert' for each of these episodes the table holds, in the batch that wrote
        them: an id whose insert was a duplicate's no-op (no episode) queues nothing."""
        return [
            Statement(
                "INSERT INTO vector_outbox (memory_id, namespace, kind, op, seq, attempts, next_attempt_at, created_at) "
                "SELECT id, namespace, 'episode', 'upsert', 0, 0, ?, ? FROM episodes "
                f"WHERE id IN ({placeholders(len(part))}) {_NEWEST_WINS}",
                (at, at, *part),
            )
            for part in chunks(list(ids))
        ]

    async def entries(self, memory_ids: Sequence[str]) -> list[OutboxEntry]:
        found: list[OutboxEntry] = []
        for part in chunks(list(memory_ids)):
            rows = await self.db.all(
                f"SELECT {_ENTRY} FROM vector_outbox WHERE memory_id IN ({placeholders(len(part))})",
                tuple(part),
            )
            found.extend(OutboxEntry(**r) for r in rows)
        return found

    async def due(self, now: str, limit: int) -> list[OutboxEntry]:
        rows = await self.db.all(
            f"SELECT {_ENTRY} FROM vector_outbox WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
            (now, limit),
        )
        return [OutboxEntry(**r) for r in rows]

    async def next_due(self) -> str | None:
        """When the earliest waiting entry is due, or None when the outbox is empty."""
        row = await self.db.first("SELECT MIN(next_attempt_at) AS due FROM vector_outbox")
        return row["due"] if row else None

    @staticmethod
    def clear(entry: OutboxEntry) -> Statement:
        # Only the entry as processed: a newer enqueue (higher seq) stays for the next pass.
        return Statement("DELETE FROM vector_outbox WHERE memory_id = ? AND seq = ?", (entry.memory_id, entry.seq))

    async def record_failure(self, entry: OutboxEntry, error: str, retry_at: str) -> None:
        await self.db.run(
            "UPDATE vector_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_at = ? "
            "WHERE memory_id = ? AND seq = ?",
            (error[:500], retry_at, entry.memory_id, entry.seq),
        )

    async def stats(self) -> dict[str, int | str | None]:
        row = await self.db.first(
            "SELECT COUNT(*) AS pending, MAX(attempts) AS max_attempts, MIN(created_at) AS oldest FROM vector_outbox"
        )
        return dict(row) if row else {"pending": 0, "max_attempts": None, "oldest": None}
