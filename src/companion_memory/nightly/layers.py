"""The nightly layer pass (rules in domain/layers.py): short memories that kept coming up
move to long, unused ones go cold, permanence follows the type and pinning, and instant
memories past their sleep become tombstones (expired, out of the index). Each move is a
``layer_changed`` event with its reason, which the panel shows."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from ..clock import iso
from ..domain.layers import instant_phase, nightly_move
from ..memory.config import MemoryConfig
from ..memory.vector_mirror import VectorMirror
from ..ports import Clock, Database, Statement
from ..store.layers import LayerStore
from ..store.memories import MemoryStore
from ..store.outbox import OutboxStore

ACTOR = "nightly"
# Memories moved per night; the rest move on the next one (a Worker's invocation is bounded).
PER_RUN = 1000


class Layers:
    def __init__(self, db: Database, mirror: VectorMirror, clock: Clock, config: MemoryConfig) -> None:
        self.db = db
        self.mirror = mirror
        self.clock = clock
        self.policy = config.layer_policy
        self.store = LayerStore(db)

    async def run(self) -> dict[str, Any]:
        now = self.clock.now()
        at, policy = iso(now), self.policy
        due = await self.store.due(
            instant_gone_before=iso(now - timedelta(hours=policy.instant_awake_hours + policy.instant_asleep_hours)),
            cold_before=iso(now - timedelta(days=policy.cold_after_days)),
            long_mentions=policy.long_after_mentions,
            long_days=policy.long_after_days,
            limit=PER_RUN,
        )
        statements: list[Statement] = []
        moved: Counter[str] = Counter()
        tombstones: list[str] = []
        for memory in due:
            if memory.layer == "instant" and instant_phase(memory, now, policy) == "gone":
                reason = f"instant memory not recalled within {policy.instant_asleep_hours:g} h of falling asleep"
                statements += [
                    MemoryStore.update(memory.id, {"status": "expired", "layer_reason": reason, "updated_at": at}),
                    MemoryStore.event(
                        memory.namespace, memory.id, "expired", ACTOR, {"from": "active", "reason": reason}, at
                    ),
                    OutboxStore.enqueue(memory.id, memory.namespace, "delete", at),
                ]
                tombstones.append(memory.id)
                continue
            changes = nightly_move(memory, now, policy)
            if changes is None:
                continue
            detail = {"from": memory.layer, "to": changes["layer"], "reason": changes["layer_reason"]}
            statements += [
                MemoryStore.update(memory.id, changes),
                MemoryStore.event(memory.namespace, memory.id, "layer_changed", ACTOR, detail, at),
            ]
            moved[changes["layer"]] += 1
        if statements:
            await self.db.batch(statements)
        if tombstones:
            await self.mirror.sync(tombstones)
        return {"moved": dict(sorted(moved.items())), "tombstones": len(tombstones)}
