"""Retention: old raw data goes, unused memories expire, retired rows are purged,
episodes go after EPISODE_RETENTION_DAYS, the mood timeline keeps MOOD_DAYS (a mood
is how a day felt, not something to keep), and person proposals the owner decided go
DECIDED_PROPOSAL_DAYS after the decision.

At most once per 24 hours (unless forced). Purging removes a memory's or an episode's
vector before its row, through the vector outbox, so a failing index keeps the row until
it can follow. Raw messages (MESSAGES_RETENTION_DAYS) and episodes are kept apart: a
message that goes leaves its episode, an episode that goes leaves its message.

Both count from when they reached the memory as much as from when they were said: a
message is kept MESSAGES_RETENTION_DAYS after it was stored (so that the dream can read
an imported year), an episode until both its saying and its storing are older than
EPISODE_RETENTION_DAYS (so that imported history is kept that long from its import).

Retention also gives an episode to each message stored before episodes were, within
the episodes' retention (the two agree, so what expires is not made again).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..clock import iso, parse_iso
from ..domain.folding import FOLDS_KEPT_DAYS
from ..ports import Clock, Database
from ..store.episodes import EpisodeStore
from ..store.memories import MemoryStore
from ..store.messages import MessageStore
from ..store.outbox import OutboxStore
from ..store.retention import RetentionStore
from .config import MemoryConfig
from .episodes import backfilled
from .vector_mirror import VectorMirror

LOG_DAYS = 30
IDEMPOTENCY_DAYS = 7
# A person proposal the owner decided is kept this long after the decision, then goes:
# a pending one stays until decided (a rejected one never blocked the same proposal anyway).
DECIDED_PROPOSAL_DAYS = 30
# The boot package shows a week and the panel a month; three months keep a season to look back on.
MOOD_DAYS = 90
EXPIRE_AFTER_DAYS = 180
PURGE_AFTER_DAYS = 30
_BATCH = 200
# Memories expired or purged, episodes expired or backfilled, per run; a larger backlog
# continues on the next run.
PER_RUN = 10_000


class Retention:
    def __init__(self, db: Database, mirror: VectorMirror, clock: Clock, config: MemoryConfig) -> None:
        self.db = db
        self.mirror = mirror
        self.clock = clock
        self.config = config
        self.store = RetentionStore(db)
        self.episodes = EpisodeStore(db)

    async def run(self, *, force: bool = False) -> dict[str, Any]:
        now = self.clock.now()
        last = await self.store.last_run()
        if last and not force and now - parse_iso(last) < timedelta(hours=24):
            return {"skipped": True, "last_run": last}

        def before(days: int) -> str:
            return iso(now - timedelta(days=days))

        results = await self.db.batch(
            [
                RetentionStore.delete_older("messages", "stored_at", before(self.config.messages_retention_days)),
                RetentionStore.delete_older("usage_logs", "created_at", before(LOG_DAYS)),
                RetentionStore.delete_older("memory_events", "created_at", before(LOG_DAYS)),
                RetentionStore.delete_older("idempotency_keys", "created_at", before(IDEMPOTENCY_DAYS)),
                RetentionStore.delete_older("context_folds", "used_at", before(FOLDS_KEPT_DAYS)),
                RetentionStore.delete_older("moods", "felt_at", before(MOOD_DAYS)),
                RetentionStore.delete_decided_proposals(before(DECIDED_PROPOSAL_DAYS)),
            ]
        )
        # Purge first: what expires now must wait its own 30 days.
        purged = await self._retire(
            await self.store.retired_memories(before(PURGE_AFTER_DAYS), PER_RUN), "purge", iso(now)
        )
        expired = await self._retire(
            await self.store.stale_memories(before(EXPIRE_AFTER_DAYS), PER_RUN), "expired", iso(now)
        )
        too_short = 0
        if self.config.empty_memory_min_chars:
            too_short = await self._retire(
                await self.store.short_memories(self.config.empty_memory_min_chars, PER_RUN), "expired", iso(now)
            )
        episodes_since = before(self.config.episode_retention_days) if self.config.episode_retention_days else ""
        episodes_expired = await self._expire_episodes(episodes_since, iso(now)) if episodes_since else 0
        episodes_backfilled = await self._backfill(episodes_since, iso(now))
        await self.db.batch([RetentionStore.record_run(iso(now))])
        report = await self.mirror.drain(limit=max(200, expired + purged + episodes_expired + episodes_backfilled))
        return {
            "skipped": False,
            "messages": results[0].changes,
            "usage_logs": results[1].changes,
            "memory_events": results[2].changes,
            "idempotency_keys": results[3].changes,
            "context_folds": results[4].changes,
            "moods": results[5].changes,
            "person_proposals": results[6].changes,
            "memories_expired": expired,
            "memories_too_short": too_short,
            "memories_purged": purged,
            "episodes_expired": episodes_expired,
            "episodes_backfilled": episodes_backfilled,
            "vectors_pending": report.failed + report.blocked,
        }

    async def _expire_episodes(self, cutoff: str, at: str) -> int:
        """Queue the episodes said and stored before ``cutoff`` to go, vector first (the
        'delete' op keeps their messages); returns how many."""
        rows = await self.episodes.kept_since_before(cutoff, PER_RUN)
        for start in range(0, len(rows), _BATCH):
            await self.db.batch(
                [
                    OutboxStore.enqueue(id_, namespace, "delete", at, "episode")
                    for id_, namespace in rows[start : start + _BATCH]
                ]
            )
        return len(rows)

    async def _backfill(self, since: str, at: str) -> int:
        made = 0
        messages = await MessageStore(self.db).without_episode(since=since, limit=PER_RUN)
        for start in range(0, len(messages), _BATCH):
            statements, count = backfilled(messages[start : start + _BATCH], at)
            await self.db.batch(statements)
            made += count
        return made

    async def _retire(self, rows: list[tuple[str, str]], what: str, at: str) -> int:
        """Expire or purge these memories, given as (id, namespace)."""
        for start in range(0, len(rows), _BATCH):
            statements = []
            for id_, namespace in rows[start : start + _BATCH]:
                if what == "expired":
                    statements += [
                        MemoryStore.update(id_, {"status": "expired", "updated_at": at}),
                        MemoryStore.event(namespace, id_, "expired", "retention", {}, at),
                        OutboxStore.enqueue(id_, namespace, "delete", at),
                    ]
                else:
                    statements.append(OutboxStore.enqueue(id_, namespace, "purge", at))
            await self.db.batch(statements)
        return len(rows)
