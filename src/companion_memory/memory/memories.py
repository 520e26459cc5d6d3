"""The write paths: upsert by fact_key, create, supersede, edit, merge into, archive,
delete, close a plan, relate. What a draft makes of a memory is the merge rule's
(memory/merge_rule.py); the drafts, actors and results are memory/drafts.py's.

Each write changes the row, its audit event and its vector-outbox entry in one atomic
batch, then asks the mirror to apply the outbox entry. The database is the truth; the
vector index catches up, now or on a retry.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace

from ..clock import iso
from ..domain.memory import Memory
from ..domain.relation import Relation
from ..domain.types import RELATIONS
from ..errors import Conflict, InvalidInput, NotFound, SensitiveContent
from ..ports import Clock, ConstraintError, Database, Statement
from ..store.candidates import CandidateStore
from ..store.consolidation import ConsolidationStore
from ..store.memories import MemoryStore
from ..store.outbox import OutboxOp, OutboxStore
from .config import MemoryConfig
from .contradictions import Contradictions
from .drafts import Actor, MemoryDraft, WriteResult
from .merge_rule import BOOKKEEPING, UPDATED, changes_of, new_memory, plan_notes, type_of, vector_relevant
from .plan_dates import plan_status
from .sensitive import refused_classes
from .vector_mirror import VectorMirror


class MemoryWriter:
    def __init__(
        self,
        db: Database,
        mirror: VectorMirror,
        clock: Clock,
        config: MemoryConfig,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.db = db
        self.mirror = mirror
        self.clock = clock
        self.config = config
        self.new_id = new_id
        self.store = MemoryStore(db)
        self.contradictions = Contradictions(db, mirror, new_id)

    # -- public write paths -------------------------------------------------------

    async def upsert(self, namespace: str, draft: MemoryDraft, actor: Actor) -> WriteResult:
        """Same fact_key → update in place (seen once more); new key → create."""
        if not draft.fact_key:
            raise InvalidInput(
                "fact_key is required: memories are written by upsert on a stable fact key, "
                "e.g. 'user.coffee.preference'",
                code="missing_fact_key",
            )
        self._check_content(draft, actor)
        existing = await self.store.current_by_fact_key(namespace, draft.fact_key)
        if existing is None:
            try:
                return await self.create(namespace, draft, actor)
            except ConstraintError:
                # Another writer created the same key between our read and our insert.
                existing = await self.store.current_by_fact_key(namespace, draft.fact_key)
                if existing is None:
                    raise
        self._guard_authored(existing, actor)
        return await self._change(existing, draft, actor, said_again=True)

    async def create(self, namespace: str, draft: MemoryDraft, actor: Actor) -> WriteResult:
        self._check_content(draft, actor)
        memory_type, notes = type_of(draft, None)
        at = self.clock.now()
        now = iso(at)
        memory = new_memory(self.new_id(), namespace, draft, memory_type, who=actor.name, now=at, config=self.config)
        notes += plan_notes(memory_type, draft)
        await self.db.batch(
            [
                MemoryStore.insert(memory),
                MemoryStore.event(namespace, memory.id, "created", actor.name, {"source": memory.source}, now),
                OutboxStore.enqueue(memory.id, namespace, "upsert", now),
            ]
        )
        return await self._flag_contradictions(await self._finish(memory, "created", created=True, notes=notes), actor)

    async def supersede(self, namespace: str, old_id: str, draft: MemoryDraft, actor: Actor) -> WriteResult:
        """Replace a memory by a new version; the old one stays as history."""
        self._check_content(draft, actor)
        old = await self.store.get(old_id)
        if old is None:
            result = await (self.upsert if draft.fact_key else self.create)(namespace, draft, actor)
            result.old_status = "missing"
            result.notes.append(f"memory {old_id} does not exist; the new memory was written on its own")
            return result
        self._guard_authored(old, actor)
        if old.status != "active":
            raise Conflict(
                f"memory {old_id} is {old.status}"
                + (f" (superseded by {old.superseded_by})" if old.superseded_by else "")
                + "; only an active memory can be superseded",
                code="not_active",
            )
        at = self.clock.now()
        now = iso(at)
        memory_type, notes = type_of(draft, old.type)
        new = new_memory(
            self.new_id(), old.namespace, draft, memory_type, who=actor.name, now=at, config=self.config, inherit=old
        )
        notes += plan_notes(new.type, draft)
        await self._claim_fact_key(old.namespace, new.fact_key, old.id)
        # The old row leaves 'active' before the new one arrives: the one-live-row-per-fact
        # index sees them in this order inside the batch.
        await self.db.batch(
            [
                MemoryStore.update(
                    old.id,
                    {
                        "status": "superseded",
                        "version_status": "historical",
                        "superseded_by": new.id,
                        "updated_at": now,
                    },
                ),
                MemoryStore.insert(new),
                MemoryStore.add_relation(self.new_id(), old.namespace, new.id, old.id, "supersedes", 1.0, now),
                MemoryStore.event(old.namespace, old.id, "superseded", actor.name, {"superseded_by": new.id}, now),
                MemoryStore.event(old.namespace, new.id, "created", actor.name, {"supersedes": old.id}, now),
                OutboxStore.enqueue(old.id, old.namespace, "delete", now),
                OutboxStore.enqueue(new.id, old.namespace, "upsert", now),
            ]
        )
        result = await self._finish(new, "superseded", created=True, notes=notes, also_sync=[old.id])
        result.previous = old.replace(
            **{"status": "superseded", "version_status": "historical", "superseded_by": new.id, "updated_at": now}
        )
        result.old_status = old.status
        return await self._flag_contradictions(result, actor)

    async def resolve_contradiction(self, keep_id: str, drop_id: str, actor: Actor) -> WriteResult:
        """The owner's answer to a contradiction between two live memories: ``drop``
        becomes history, superseded by ``keep``, which stays as it is."""
        keep, drop = await self._existing(keep_id), await self.store.get(drop_id)
        if keep.status != "active":
            raise Conflict(
                f"memory {keep.id} is {keep.status}; the memory that stands must be active", code="target_missing"
            )
        if drop is None or drop.status != "active":
            state = drop.status if drop else "gone"
            return WriteResult(memory=keep, action="unchanged", notes=[f"memory {drop_id} is already {state}"])
        self._guard_authored(drop, actor)
        now = iso(self.clock.now())
        retired = {"status": "superseded", "version_status": "historical", "superseded_by": keep.id, "updated_at": now}
        await self.db.batch(
            [
                MemoryStore.update(drop.id, retired),
                MemoryStore.add_relation(self.new_id(), keep.namespace, keep.id, drop.id, "supersedes", 1.0, now),
                MemoryStore.event(
                    drop.namespace,
                    drop.id,
                    "superseded",
                    actor.name,
                    {"superseded_by": keep.id, "contradiction": True},
                    now,
                ),
                OutboxStore.enqueue(drop.id, drop.namespace, "delete", now),
            ]
        )
        result = await self._finish(keep, "superseded", also_sync=[drop.id])
        result.previous = drop.replace(**retired)
        result.old_status = drop.status
        return result

    async def edit(self, memory_id: str, draft: MemoryDraft, actor: Actor, *, status: str | None = None) -> WriteResult:
        """Change fields in place (the panel's edit, a PATCH) by the merge rule, as an edit:
        what it gives is what the memory now holds. ``status`` moves a memory between
        active and archived."""
        memory = await self._existing(memory_id)
        self._guard_authored(memory, actor)
        if draft.content is not None:
            self._check_content(draft, actor)
        if status is not None and (status not in ("active", "archived") or memory.status not in ("active", "archived")):
            raise Conflict(
                f"cannot move memory from {memory.status} to {status} by editing", code="invalid_status_change"
            )
        return await self._change(memory, draft, actor, said_again=False, status=status)

    async def merge_into(self, memory_id: str, draft: MemoryDraft, actor: Actor) -> WriteResult:
        """The memory said again by another write (a candidate the review folds into it),
        by the merge rule, as an upsert on its fact_key: what it brings is added."""
        memory = await self._existing(memory_id)
        self._guard_authored(memory, actor)
        if draft.content is not None:
            self._check_content(draft, actor)
        return await self._change(memory, draft, actor, said_again=True)

    async def archive(self, memory_id: str, actor: Actor) -> WriteResult:
        memory = await self._existing(memory_id)
        self._guard_authored(memory, actor)
        if memory.status == "archived":
            return WriteResult(memory=memory, action="unchanged", notes=["already archived"])
        if memory.status != "active":
            raise Conflict(
                f"memory {memory_id} is {memory.status}; only an active memory can be archived", code="not_active"
            )
        return await self._retire(memory, "archived", actor, "delete")

    async def delete(self, memory_id: str, actor: Actor, *, hard: bool = False) -> WriteResult:
        """Soft delete (status 'deleted', vector removed); ``hard`` also removes the row,
        but only once its vector is gone."""
        memory = await self._existing(memory_id)
        self._guard_authored(memory, actor)
        if hard:
            return await self._retire(memory, "deleted", actor, "purge")
        if memory.status == "deleted":
            return WriteResult(memory=memory, action="unchanged", notes=["already deleted"])
        return await self._retire(memory, "deleted", actor, "delete")

    async def close_plan(self, memory_id: str, status: str, actor: Actor) -> WriteResult:
        """Mark an active plan ``done`` or ``abandoned``: it is kept, but leaves recall and the index."""
        memory = await self._existing(memory_id)
        if memory.type != "plan" or memory.status != "active":
            raise Conflict(f"memory {memory_id} is not an active plan", code="not_a_plan")
        self._guard_authored(memory, actor)
        current = plan_status(memory, self.clock.now(), self.config.dream_time_zone)
        if current == status:
            return WriteResult(
                memory=memory.replace(plan_status=status), action="unchanged", notes=[f"already {status}"]
            )
        if current != "active":
            raise Conflict(
                f"plan {memory_id} is {current}; only an active plan can be marked {status}", code="not_active"
            )
        now = iso(self.clock.now())
        await self.db.batch(closing(memory, status, actor.name, now))
        result = await self._finish(memory.replace(plan_status=status, updated_at=now), status)
        result.old_status = "active"
        return result

    async def relate(self, source_id: str, target_id: str, relation: str, weight: float, actor: Actor) -> Relation:
        """A typed, weighted edge between two live memories of one namespace. Saying an
        existing edge again sets its weight, and its fade (nightly consolidation) starts over."""
        if relation not in RELATIONS or relation == "supersedes":
            allowed = ", ".join(r for r in RELATIONS if r != "supersedes")
            raise InvalidInput(
                f"relation must be one of {allowed} (supersedes comes from superseding)", code="invalid_relation"
            )
        if source_id == target_id:
            raise InvalidInput("a memory cannot be related to itself", code="invalid_relation")
        source, target = await self._existing(source_id), await self._existing(target_id)
        if source.namespace != target.namespace:
            raise InvalidInput("related memories must be in the same namespace", code="invalid_relation")
        existing = await self.store.relations(source.id)
        said = (source.id, target.id, relation)
        known = next((e for e in existing if (e.source_id, e.target_id, e.relation) == said), None)
        now = iso(self.clock.now())
        if known is not None:
            # Said again: the edge is as strong as it is now said to be, and fades from now.
            detail = {"target_id": target.id, "relation": relation, "refreshed": True}
            await self.db.batch(
                [
                    ConsolidationStore.set_weight(known.id, weight, now),
                    MemoryStore.event(source.namespace, source.id, "related", actor.name, detail, now),
                ]
            )
            return replace(known, weight=weight, weighed_at=now)
        edge = Relation(
            id=self.new_id(),
            namespace=source.namespace,
            source_id=source.id,
            target_id=target.id,
            relation=relation,
            weight=weight,
            created_at=now,
            weighed_at=now,
        )
        await self.db.batch(
            [
                MemoryStore.add_relation(edge.id, source.namespace, source.id, target.id, relation, weight, now),
                MemoryStore.event(
                    source.namespace,
                    source.id,
                    "related",
                    actor.name,
                    {"target_id": target.id, "relation": relation},
                    now,
                ),
            ]
        )
        return edge

    async def unrelate(self, memory_id: str, relation_id: str, actor: Actor) -> None:
        memory = await self._existing(memory_id)
        edges = [e for e in await self.store.relations(memory.id) if e.id == relation_id]
        if not edges or edges[0].relation == "supersedes":
            raise NotFound(
                f"relation {relation_id} of memory {memory_id} not found (version history cannot be removed)"
            )
        now = iso(self.clock.now())
        statements = [
            MemoryStore.remove_relation(relation_id),
            MemoryStore.event(memory.namespace, memory.id, "unrelated", actor.name, {"relation_id": relation_id}, now),
        ]
        if edges[0].relation == "contradicts":
            # No contradiction any more: both memories stand, and the question about them is closed.
            statements.append(CandidateStore.both_stand(edges[0].target_id, edges[0].source_id, now))
        await self.db.batch(statements)

    # -- helpers ------------------------------------------------------------------

    async def _claim_fact_key(self, namespace: str, fact_key: str | None, holder: str) -> None:
        """One live memory per fact_key: refuse to give ``holder`` a key another one holds."""
        if not fact_key:
            return
        clash = await self.store.current_by_fact_key(namespace, fact_key)
        if clash is not None and clash.id != holder:
            raise Conflict(f"fact_key {fact_key!r} already belongs to memory {clash.id}", code="fact_key_taken")

    async def _change(
        self, memory: Memory, draft: MemoryDraft, actor: Actor, *, said_again: bool, status: str | None = None
    ) -> WriteResult:
        """Change a memory that exists by the merge rule (memory/merge_rule.py): an edit,
        or, ``said_again``, an upsert on its fact_key or a candidate merged into it."""
        changes, notes = changes_of(
            memory,
            draft,
            said_again=said_again,
            who=actor.name,
            now=self.clock.now(),
            config=self.config,
            status=status,
        )
        if not changes and not said_again:
            return WriteResult(memory=memory, action="unchanged", notes=[*notes, "nothing to change"])
        if changes.get("status", memory.status) == "active" and ("fact_key" in changes or "status" in changes):
            await self._claim_fact_key(memory.namespace, changes.get("fact_key", memory.fact_key), memory.id)
        now = iso(self.clock.now())
        if said_again:
            changes.update(seen_count=memory.seen_count + 1, last_seen_at=now)
        changes["updated_at"] = now
        statements = [
            MemoryStore.update(memory.id, changes),
            MemoryStore.event(
                memory.namespace,
                memory.id,
                UPDATED,
                actor.name,
                {"fields": sorted(set(changes) - BOOKKEEPING)},
                now,
            ),
        ]
        if vector_relevant(changes):
            statements.append(OutboxStore.enqueue(memory.id, memory.namespace, "upsert", now))
        await self.db.batch(statements)
        updated = memory.replace(**changes)
        result = await self._finish(updated, UPDATED, notes=notes)
        # New words are a new claim (the same words seen again are not); an archived memory claims nothing.
        claims = "content" in changes and updated.status == "active"
        return await self._flag_contradictions(result, actor) if claims else result

    async def _flag_contradictions(self, result: WriteResult, actor: Actor) -> WriteResult:
        """Record each live memory the written one contradicts (see memory/contradictions.py)."""
        memory = result.memory
        pairs = await self.contradictions.find(
            memory.namespace, memory.content, memory.fact_key, memory.type, memory_id=memory.id, vector=result.embedding
        )
        if pairs:
            result.notes += await self.contradictions.record(memory, pairs, actor.name, iso(self.clock.now()))
        return result

    async def _retire(self, memory: Memory, status: str, actor: Actor, op: OutboxOp) -> WriteResult:
        now = iso(self.clock.now())
        event = "purged" if op == "purge" else status
        await self.db.batch(
            [
                MemoryStore.update(memory.id, {"status": status, "updated_at": now}),
                MemoryStore.event(memory.namespace, memory.id, event, actor.name, {"from": memory.status}, now),
                OutboxStore.enqueue(memory.id, memory.namespace, op, now),
            ]
        )
        retired = memory.replace(**{"status": status, "updated_at": now})
        return await self._finish(retired, event)

    async def _finish(
        self,
        memory: Memory,
        action: str,
        *,
        created: bool = False,
        notes: list[str] | None = None,
        also_sync: list[str] | None = None,
    ) -> WriteResult:
        report = await self.mirror.sync([memory.id, *(also_sync or [])])
        return WriteResult(
            memory=memory,
            action=action,
            created=created,
            vector="pending" if report.failed or report.blocked else "synced",
            notes=notes or [],
            embedding=report.vectors.get(memory.id),
        )

    async def _existing(self, memory_id: str) -> Memory:
        memory = await self.store.get(memory_id)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory

    def _check_content(self, draft: MemoryDraft, actor: Actor) -> None:
        if draft.content is None or not draft.content.strip():
            raise InvalidInput("content must not be empty (<private> spans are never stored)", code="empty_content")
        if draft.authored_by or actor.owner:
            # The owner decides what to keep; the filter stops agents and the dream.
            return
        found = refused_classes(draft.content, self.config.memory_sensitive_allow)
        if found:
            raise SensitiveContent(
                f"content looks like it holds sensitive data ({', '.join(found)}); automatic writers may not "
                "store it. Remove it, write it with the owner key, or allow the class with MEMORY_SENSITIVE_ALLOW",
                details={"classes": found},
            )

    @staticmethod
    def _guard_authored(memory: Memory, actor: Actor) -> None:
        if memory.authored_by and not actor.owner:
            raise Conflict(
                f"memory {memory.id} was written by hand ({memory.authored_by}); only the owner may change it",
                code="authored_memory",
            )


def closing(memory: Memory, status: str, actor: str, at: str) -> list[Statement]:
    """A plan leaves ``active`` (done, abandoned, expired): the row, its event, its vector removed."""
    return [
        MemoryStore.update(memory.id, {"plan_status": status, "updated_at": at}),
        MemoryStore.event(memory.namespace, memory.id, f"plan_{status}", actor, {"valid_to": memory.valid_to}, at),
        OutboxStore.enqueue(memory.id, memory.namespace, "delete", at),
    ]
