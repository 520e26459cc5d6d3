"""Plans: memories of type ``plan`` that are good until a day or a moment.

A plan's ``valid_to`` is either a calendar day ("2026-12-06", good to the end of that day
in DREAM_TIME_ZONE) or a UTC moment. Its ``plan_status`` is ``active`` until the owner
marks it ``done`` or ``abandoned`` (a write: ``MemoryWriter.close_plan``), or its time
passes: a plan whose ``valid_to`` has passed is expired from that moment on (recall
leaves it out at once), and the nightly job writes that down here (``plan_status =
'expired'``, an event, its vector removed).
"""

from __future__ import annotations

from ..clock import iso
from ..domain.memory import Memory
from ..domain.types import PLAN_STATUSES
from ..errors import InvalidInput
from ..ports import Clock, Database
from ..store.memories import MemoryStore
from .config import MemoryConfig
from .memories import closing
from .plan_dates import has_passed, plan_status
from .vector_mirror import VectorMirror

# Plans are few; an owner with more open plans than this sees the soonest ones.
PLANS_READ = 500


class Plans:
    def __init__(self, db: Database, mirror: VectorMirror, clock: Clock, config: MemoryConfig) -> None:
        self.db = db
        self.mirror = mirror
        self.clock = clock
        self.config = config
        self.store = MemoryStore(db)

    async def by_status(self, namespace: str, statuses: list[str], limit: int) -> list[Memory]:
        """Live plans with these (current) statuses, the soonest end first; open-ended ones last."""
        unknown = [s for s in statuses if s not in PLAN_STATUSES]
        if unknown:
            raise InvalidInput(
                f"unknown plan status {unknown[0]!r}; known: {', '.join(PLAN_STATUSES)}", code="invalid_status"
            )
        now, time_zone = self.clock.now(), self.config.dream_time_zone
        # An active row may already be expired: read those whenever expired ones are asked for.
        stored = set(statuses) | ({"active"} if "expired" in statuses else set())
        plans = [
            memory.replace(plan_status=plan_status(memory, now, time_zone))
            for memory in await self.store.plans(namespace, sorted(stored), PLANS_READ)
        ]
        return [p for p in plans if p.plan_status in statuses][:limit]

    async def upcoming(self, namespace: str, limit: int) -> list[Memory]:
        return await self.by_status(namespace, ["active"], limit)

    async def overdue(self) -> list[Memory]:
        """Plans still stored as active whose end has passed (recall leaves them out
        already; ``expire`` writes it down)."""
        now = self.clock.now()
        return [
            memory
            for memory in await self.store.plans_ending_before(iso(now), PLANS_READ)
            if has_passed(memory.valid_to, now, self.config.dream_time_zone)
        ]

    async def expire(self) -> dict[str, int]:
        """The nightly step: every active plan whose end has passed is marked expired."""
        at = iso(self.clock.now())
        due = await self.overdue()
        if due:
            await self.db.batch([s for memory in due for s in closing(memory, "expired", "nightly", at)])
            await self.mirror.sync([memory.id for memory in due])
        return {"plans_expired": len(due)}
