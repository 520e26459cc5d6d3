"""Shared memories: a memory of one namespace made visible in another.

A share is proposed (by any key that may write: a bot offers one of its memories to
``default``), then the owner approves or rejects it; an approved share makes recall in
the target namespace see the memory, with its own namespace on the hit, until the owner
or the proposer revokes it. Every change is an event in the shares' own audit log.

A share follows one memory, not its fact: when the memory stops being live (superseded,
deleted, archived, expired, purged) recall in the target stops seeing it at once (the
read checks the row), and the next listing marks the share revoked with the reason. The
newer version of a superseded memory is not shared until someone proposes it: what the
owner approved is that text, not whatever replaces it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Literal

from ..clock import day_bounds, iso, local_date
from ..domain.memory import is_live
from ..domain.share import Share, ShareEvent
from ..errors import Conflict, ConstraintError, InvalidInput, NotFound, PermissionDenied
from ..ports import Clock, Database, Statement
from ..store.memories import MemoryStore
from ..store.shares import OPEN_STATUSES, ShareStore
from .config import MemoryConfig
from .drafts import Actor

SHARE_STATUSES = ("proposed", "approved", "rejected", "revoked")
Decision = Literal["approve", "reject", "revoke"]
# What each decision moves a share from, and to.
_MOVES: dict[Decision, tuple[tuple[str, ...], str]] = {
    "approve": (("proposed",), "approved"),
    "reject": (("proposed",), "rejected"),
    "revoke": (OPEN_STATUSES, "revoked"),
}
# Orphaned shares marked per listing; the rest are marked by the next one (recall never
# sees them meanwhile).
_SWEPT = 200


class Sharing:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        config: MemoryConfig,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.new_id = new_id
        self.store = ShareStore(db)
        self.memories = MemoryStore(db)

    async def propose(self, memory_id: str, target: str, actor: Actor, note: str | None) -> Share:
        memory = await self.memories.get(memory_id)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        if memory.namespace == target:
            raise InvalidInput(f"memory {memory_id} is already in namespace {target!r}", code="same_namespace")
        if not is_live(memory):
            raise Conflict(
                f"memory {memory_id} is {_death(memory.status, memory.version_status, memory.superseded_by)}: "
                "only a live memory can be shared",
                code="memory_not_live",
            )
        existing = await self.store.open_share(memory_id, target)
        if existing is not None:
            raise Conflict(
                f"memory {memory_id} is already {existing.status} for {target!r} (share {existing.id})",
                code="share_exists",
                details={"share_id": existing.id},
            )
        now = self.clock.now()
        today = local_date(now, self.config.dream_time_zone)
        proposed = await self.store.proposed_since(memory.namespace, day_bounds(today, self.config.dream_time_zone)[0])
        cap = self.config.share_daily_nomination_cap
        if proposed >= cap:
            tomorrow = day_bounds(today + timedelta(days=1), self.config.dream_time_zone)[0]
            raise Conflict(
                f"namespace {memory.namespace!r} has proposed {proposed} shares today, the daily cap "
                f"(SHARE_DAILY_NOMINATION_CAP={cap}); try again after {tomorrow}",
                code="share_cap_reached",
            )
        at, share_id = iso(now), self.new_id()
        share = Share(
            id=share_id,
            memory_id=memory_id,
            source_namespace=memory.namespace,
            target_namespace=target,
            proposed_by=actor.name,
            note=note,
            created_at=at,
            updated_at=at,
        )
        try:
            await self.db.batch(
                [ShareStore.insert(share), ShareStore.event(share_id, "proposed", actor.name, note, at)]
            )
        except ConstraintError:  # a proposal for the same memory and target landed first
            raise Conflict(
                f"memory {memory_id} is already shared or proposed for {target!r}", code="share_exists"
            ) from None
        return await self._get(share_id)

    async def decide(self, share_id: str, decision: Decision, actor: Actor, reason: str | None) -> Share:
        """Approve or reject a proposal (the owner), or revoke an open share (the owner, or
        the key that proposed it)."""
        share = await self._get(share_id)
        if decision != "revoke" and not actor.owner:
            raise PermissionDenied(f"only the owner may {decision} a share")
        if not actor.owner and actor.name != share.proposed_by:
            raise PermissionDenied("only the owner or the key that proposed a share may revoke it")
        before, after = _MOVES[decision]
        if share.status not in before:
            raise Conflict(f"share {share_id} is {share.status}; cannot {decision} it", code="share_closed")
        if decision == "approve":
            swept = await self.sweep(share_id)
            if swept:
                raise Conflict(f"share {share_id} was revoked: {swept[share_id]}", code="memory_not_live")
        at = iso(self.clock.now())
        moved, _ = await self.db.batch(self._moving(share_id, before, after, actor.name, reason, at))
        if moved.changes != 1:  # another decision landed between the read and this write
            raise Conflict(f"share {share_id} changed meanwhile; look again", code="share_closed")
        return await self._get(share_id)

    async def listed(self, namespace: str | None, statuses: Sequence[str], limit: int) -> list[Share]:
        unknown = [s for s in statuses if s not in SHARE_STATUSES]
        if unknown:
            raise InvalidInput(
                f"unknown share status {unknown[0]!r}; known: {', '.join(SHARE_STATUSES)}", code="invalid_status"
            )
        await self.sweep()
        return await self.store.listed(namespace, statuses or OPEN_STATUSES, limit)

    async def history(self, share_id: str) -> tuple[Share, list[ShareEvent]]:
        await self.sweep(share_id)
        share = await self._get(share_id)
        return share, await self.store.events(share_id)

    async def sweep(self, share_id: str | None = None) -> dict[str, str]:
        """Revoke the open shares (all, or this one) whose memory is no longer live, saying
        why; share id → reason."""
        orphans = await self.store.orphaned(_SWEPT, share_id)
        if not orphans:
            return {}
        at = iso(self.clock.now())
        reasons = {o.share_id: "memory " + _death(o.status, o.version_status, o.superseded_by) for o in orphans}
        await self.db.batch(
            [s for id_, why in reasons.items() for s in self._moving(id_, OPEN_STATUSES, "revoked", "system", why, at)]
        )
        return reasons

    @staticmethod
    def _moving(
        share_id: str, before: Sequence[str], status: str, actor: str, reason: str | None, at: str
    ) -> list[Statement]:
        return [
            ShareStore.move(share_id, before, status, actor, reason, at),
            ShareStore.event(share_id, status, actor, reason, at),
        ]

    async def _get(self, share_id: str) -> Share:
        share = await self.store.get(share_id)
        if share is None:
            raise NotFound(f"share {share_id} not found")
        return share


def _death(status: str | None, version_status: str | None, superseded_by: str | None) -> str:
    """What became of a memory that is not live, in a few words."""
    if status is None:
        return "purged"
    if version_status == "superseded" or status == "superseded":
        return f"superseded by {superseded_by}" if superseded_by else "superseded"
    return status
