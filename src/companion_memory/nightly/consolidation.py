"""Nightly consolidation: near-duplicates archived into the best-evidenced one, standing
rules and promises strengthened, relation edges faded with a half-life.

Each action is a ``consolidation_*`` event in the memory's history whose detail holds
what ``undo`` needs to put it back. Memories a person wrote by hand (``authored_by``) and
pinned ones are never touched. Only memories written or changed since the last pass are
looked at (each against all live ones), so a night's cost follows the day's writes.
Tombstones and tiny fragments are retention's: it expires live memories shorter than
``EMPTY_MEMORY_MIN_CHARS`` and purges retired rows after 30 days.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..clock import iso, parse_iso
from ..domain.memory import Memory, is_live
from ..errors import Conflict, NotFound
from ..memory.config import MemoryConfig
from ..memory.drafts import Actor, MemoryDraft
from ..memory.memories import MemoryWriter
from ..memory.vector_mirror import VectorMirror
from ..ports import Clock, Database, InfrastructureError, Statement
from ..store.consolidation import ConsolidationStore
from ..store.memories import MemoryStore
from ..store.outbox import OutboxStore

log = logging.getLogger("companion_memory.consolidation")
ACTOR = "consolidation"
# Memories looked at per night; a larger backlog continues on the next night. Each costs
# two vector index calls, and a Worker's invocation has a bounded number of subrequests.
PER_RUN = 200
# Who the user is and what they forbade may be the copy that is kept, never an archived one;
# a plan's copies may differ in their end, which the text does not show.
_NEVER_ARCHIVED = ("identity", "persona", "boundary", "plan")
# Only these loose kinds are retyped as a boundary or decision; the others say more.
_RETYPED = ("note", "fact", "event", "habit")
_EDGES_PER_PAGE = 500
# Live memories of one type read for the text comparison while the index is down.
SAME_TEXT_SCAN = 10_000
# The events this pass writes, each of which ``undo`` can put back.
UNDOABLE = (
    "consolidation_archived",
    "consolidation_merged",
    "consolidation_strengthened",
    "consolidation_edge_dropped",
)

_STOP = r"[^。！？!?.\n]"
_PROHIBITION = re.compile(
    rf"(以后|今后|往后|从今以后|从现在起){_STOP}{{0,8}}?(不要|别|不准|不许|不能|不可以)"
    r"|(不要|别|不准|不许)再|再也不|永远(都)?(不要|别|不)|绝对不"
    rf"|\bnever\b{_STOP}{{0,60}}\bagain\b|\b(don't|do not|dont)\s+ever\b|\bnever ever\b"
    rf"|\bfrom now on\b{_STOP}{{0,40}}\b(don't|do not|never|stop|no more)\b"
)
_PROMISE = re.compile(
    rf"永远(都)?(会|要|记得|记住)|我(会|要)?永远|(以后|今后|往后|从今以后|从现在起){_STOP}{{0,8}}?(都|要|会|一定|每次)"
    r"|我保证|答应你|我一定会"
    r"|\b(i|we)(\s+will|'ll|\s+shall)\s+always\b|\bfrom now on\b|\balways remember\b|\bi promise\b"
)


def standing_rule(text: str) -> tuple[str, str] | None:
    """(the type it fits, the words that make it one) when ``text`` states a standing rule or
    promise: a prohibition ("以后不要…", "不要再…", "never … again") is a boundary, a
    promise or standing instruction ("永远…", "I will always…", "from now on…") a decision."""
    folded = text.casefold().replace("\u2019", "'")
    for memory_type, pattern in (("boundary", _PROHIBITION), ("decision", _PROMISE)):
        found = pattern.search(folded)
        if found:
            return memory_type, found.group(0)
    return None


def normalised_text(text: str) -> str:
    """Text as the fallback duplicate check compares it: width, case, spacing and punctuation
    do not count."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in folded if c.isalnum())


def _untouchable(memory: Memory) -> bool:
    return bool(memory.authored_by) or memory.pinned


def _evidence_rank(memory: Memory) -> tuple[int, float, str, str]:
    return (len(memory.evidence), memory.confidence, memory.created_at, memory.id)


@dataclass
class _Night:
    at: str
    archived: set[str]
    merged: int = 0
    strengthened: int = 0
    vectors_down: bool = False


class Consolidation:
    def __init__(
        self, db: Database, mirror: VectorMirror, writer: MemoryWriter, clock: Clock, config: MemoryConfig
    ) -> None:
        self.db = db
        self.mirror = mirror
        self.writer = writer
        self.clock = clock
        self.config = config
        self.store = ConsolidationStore(db)
        self.memories = MemoryStore(db)

    async def run(self) -> dict[str, Any]:
        now = self.clock.now()
        night = _Night(at=iso(now), archived=set())
        updated_at, _, after_id = (await self.store.last_run() or "").partition(" ")
        # Without an id, nothing at ``updated_at`` itself is read (``id > NULL`` is never true).
        changed = await self.store.changed_since(updated_at, after_id or None, PER_RUN)
        # A full page leaves the rest for tomorrow; otherwise everything up to now was seen.
        cursor = f"{changed[-1].updated_at} {changed[-1].id}" if len(changed) == PER_RUN else night.at
        touched: list[str] = []
        same_text: dict[tuple[str, str], dict[str, list[Memory]]] = {}
        for memory in changed:
            if memory.id not in night.archived and not _untouchable(memory):
                touched += await self._merge_duplicates(memory, night, same_text)
        for memory in changed:
            if memory.id not in night.archived and not _untouchable(memory):
                touched += await self._strengthen(memory, night)
        decayed, dropped = await self._decay(now, night.at)
        await self.db.batch([ConsolidationStore.record_run(cursor, night.at)])
        if touched:
            await self.mirror.sync(touched)
        return {
            "looked_at": len(changed),
            "duplicates_archived": len(night.archived),
            "merged_into": night.merged,
            "rules_strengthened": night.strengthened,
            "edges_decayed": decayed,
            "edges_dropped": dropped,
            "duplicate_check": "text" if night.vectors_down else "vectors",
        }

    # -- near-duplicates --------------------------------------------------------

    async def _merge_duplicates(
        self, memory: Memory, night: _Night, same_text: dict[tuple[str, str], dict[str, list[Memory]]]
    ) -> list[str]:
        found = None if night.vectors_down else await self._similar(memory, night)
        if found is None:
            reason = "same text (the vector index was unavailable)"
            others = [(m, 1.0) for m in await self._same_text(memory, same_text) if m.id != memory.id]
        else:
            reason = f"near duplicate (cosine ≥ {self.config.consolidate_duplicate_cosine})"
            rows = {m.id: m for m in await self.memories.get_many([i for i, _ in found])}
            others = [(rows[i], score) for i, score in found if i in rows]
        scores = {m.id: round(score, 4) for m, score in others if m.id not in night.archived}
        if not scores:
            return []
        # Read again: a copy kept earlier tonight has taken evidence since it was listed.
        group = [
            m
            for m in await self.memories.get_many([memory.id, *scores])
            if is_live(m) and m.type == memory.type and not _untouchable(m)
        ]
        if len(group) < 2:
            return []
        kept = max(group, key=_evidence_rank)
        archived = [m for m in group if m is not kept and m.type not in _NEVER_ARCHIVED]
        if not archived:
            return []
        scores.setdefault(memory.id, scores.get(kept.id, 1.0))
        await self.db.batch(self._merge(kept, archived, scores, reason, night.at))
        night.archived.update(m.id for m in archived)
        night.merged += 1
        return [kept.id, *(m.id for m in archived)]

    async def _similar(self, memory: Memory, night: _Night) -> list[tuple[str, float]] | None:
        """None when the index cannot answer tonight (down, or another embedder's)."""
        try:
            found = await self.mirror.duplicates_of(memory, self.config.consolidate_duplicate_cosine)
        except InfrastructureError:
            log.warning("vector index unavailable; consolidation compares text only tonight", exc_info=True)
            found = None
        night.vectors_down = found is None
        return found

    async def _same_text(self, memory: Memory, cache: dict[tuple[str, str], dict[str, list[Memory]]]) -> list[Memory]:
        key = (memory.namespace, memory.type)
        if key not in cache:
            by_text: dict[str, list[Memory]] = {}
            for other in await self.store.live_of_type(memory.namespace, memory.type, SAME_TEXT_SCAN):
                by_text.setdefault(normalised_text(other.content), []).append(other)
            cache[key] = by_text
        return cache[key].get(normalised_text(memory.content), [])

    def _merge(
        self, kept: Memory, archived: list[Memory], scores: dict[str, float], reason: str, at: str
    ) -> list[Statement]:
        quotes = {e.quote for e in kept.evidence}
        evidence = list(kept.evidence)
        message_ids = list(kept.source_message_ids)
        statements: list[Statement] = []
        contributions: list[dict[str, Any]] = []
        for memory in archived:
            new_evidence = [e for e in memory.evidence if e.quote not in quotes]
            quotes.update(e.quote for e in new_evidence)
            evidence += new_evidence
            new_ids = [i for i in memory.source_message_ids if i not in message_ids]
            message_ids += new_ids
            contribution = {
                "id": memory.id,
                "similarity": scores.get(memory.id),
                "evidence": [e.as_dict() for e in new_evidence],
                "source_message_ids": new_ids,
            }
            contributions.append(contribution)
            detail = {**contribution, "kept": kept.id, "from": memory.status, "reason": reason}
            statements += [
                MemoryStore.update(memory.id, {"status": "archived", "updated_at": at}),
                MemoryStore.event(memory.namespace, memory.id, "consolidation_archived", ACTOR, detail, at),
                OutboxStore.enqueue(memory.id, memory.namespace, "delete", at),
            ]
        changes: dict[str, Any] = {"updated_at": at}
        if len(evidence) > len(kept.evidence):
            changes["evidence"] = evidence
        if len(message_ids) > len(kept.source_message_ids):
            changes["source_message_ids"] = message_ids
        detail = {"archived": contributions, "reason": reason}
        statements += [
            MemoryStore.update(kept.id, changes),
            MemoryStore.event(kept.namespace, kept.id, "consolidation_merged", ACTOR, detail, at),
        ]
        return statements

    # -- rules and promises -----------------------------------------------------

    async def _strengthen(self, memory: Memory, night: _Night) -> list[str]:
        rule = standing_rule(memory.content)
        if rule is None:
            return []
        fitting, words = rule
        memory_type = fitting if memory.type in _RETYPED else memory.type
        importance = max(memory.importance, self.config.rule_importance_floor)
        if memory_type == memory.type and importance == memory.importance:
            return []
        detail = {
            "old_importance": memory.importance,
            "old_type": memory.type,
            "importance": importance,
            "type": memory_type,
            "reason": f"a standing rule or promise ({words!r})",
        }
        statements = [
            MemoryStore.update(memory.id, {"importance": importance, "type": memory_type, "updated_at": night.at}),
            MemoryStore.event(memory.namespace, memory.id, "consolidation_strengthened", ACTOR, detail, night.at),
        ]
        if memory_type != memory.type:  # the index filters on the type
            statements.append(OutboxStore.enqueue(memory.id, memory.namespace, "upsert", night.at))
        await self.db.batch(statements)
        night.strengthened += 1
        return [memory.id] if memory_type != memory.type else []

    # -- relation edges ---------------------------------------------------------

    async def _decay(self, now: datetime, at: str) -> tuple[int, int]:
        """Every fading edge's weight × 0.5^(days since it was last set / half-life); an
        edge that falls under ``RELATION_DROP_BELOW`` is removed."""
        half_life = self.config.relation_half_life_days
        decayed = dropped = 0
        after: str | None = ""
        while after is not None:
            edges, after = await self.store.decaying_relations(after, _EDGES_PER_PAGE)
            statements: list[Statement] = []
            for edge in edges:
                days = (now - parse_iso(edge.weighed_at)).total_seconds() / 86_400
                if days <= 0:
                    continue
                weight = float(edge.weight) * 0.5 ** (days / half_life)
                if weight >= self.config.relation_drop_below:
                    statements.append(ConsolidationStore.set_weight(edge.id, weight, at))
                    decayed += 1
                    continue
                detail = {
                    "relation": {k: getattr(edge, k) for k in ("id", "source_id", "target_id", "relation", "weight")},
                    "decayed_to": round(weight, 4),
                    "reason": f"weight under {self.config.relation_drop_below} after {days:.0f} days "
                    f"(half-life {half_life:g} days)",
                }
                statements += [
                    MemoryStore.remove_relation(edge.id),
                    MemoryStore.event(edge.namespace, edge.source_id, "consolidation_edge_dropped", ACTOR, detail, at),
                ]
                dropped += 1
            if statements:
                await self.db.batch(statements)
        return decayed, dropped

    # -- undo -------------------------------------------------------------------

    async def undo(self, memory_id: str, event_id: int, actor: Actor) -> list[str]:
        """Put back what the consolidation event ``event_id`` of ``memory_id`` did; returns
        the memories changed. Refused for any other event, and for one already undone."""
        event = await self.store.event(event_id)
        if event is None or event.memory_id != memory_id:
            raise NotFound(f"event {event_id} of memory {memory_id} not found")
        kind, detail = event.event, event.detail
        if kind not in UNDOABLE:
            raise Conflict(f"event {event_id} is {kind}, not a consolidation", code="not_a_consolidation")
        if await self.store.undone(memory_id, event_id):
            raise Conflict(f"event {event_id} was already undone", code="already_undone")
        changed: list[str] = []
        if kind == "consolidation_archived":
            changed += await self._unarchive(detail["kept"], [detail | {"id": memory_id}], actor)
        elif kind == "consolidation_merged":
            changed += await self._unarchive(memory_id, detail["archived"], actor)
        elif kind == "consolidation_strengthened":
            draft = MemoryDraft(importance=detail["old_importance"], type=detail["old_type"])
            changed.append((await self.writer.edit(memory_id, draft, actor)).memory.id)
        else:
            edge = detail["relation"]
            await self.writer.relate(edge["source_id"], edge["target_id"], edge["relation"], edge["weight"], actor)
            changed += [edge["source_id"], edge["target_id"]]
        at = iso(self.clock.now())
        undone = {"event_id": event_id, "event": kind}
        await self.db.batch(
            [MemoryStore.event(event.namespace, memory_id, "consolidation_undone", actor.name, undone, at)]
        )
        return changed

    async def _unarchive(self, kept_id: str, contributions: list[dict[str, Any]], actor: Actor) -> list[str]:
        """Make the archived copies live again and take what they brought out of the kept one."""
        quotes = {e["quote"] for contribution in contributions for e in contribution["evidence"]}
        message_ids = {i for contribution in contributions for i in contribution["source_message_ids"]}
        # Taken back as the merge gave it (an edit sets the evidence and sources it names),
        # first: a kept memory this actor may not change refuses the undo before anything moves.
        kept = await self.memories.get(kept_id)
        taken = False
        if kept is not None:
            draft = MemoryDraft(
                evidence=[e for e in kept.evidence if e.quote not in quotes],
                source_message_ids=[i for i in kept.source_message_ids if i not in message_ids],
            )
            taken = (await self.writer.edit(kept.id, draft, actor)).action != "unchanged"
        changed: list[str] = []
        for contribution in contributions:
            memory = await self.memories.get(contribution["id"])
            if memory is not None and memory.status == "archived":
                await self.writer.edit(memory.id, MemoryDraft(), actor, status="active")
                changed.append(memory.id)
        return [*changed, kept_id] if taken else changed
        # Taken back as the merge gave it: an edit sets the evidence and sources it names.
        taken_back = MemoryDraft(
            evidence=[e for e in kept.evidence if e.quote not in quotes],
            source_message_ids=[i for i in kept.source_message_ids if i not in message_ids],
        )
        if (await self.writer.edit(kept.id, taken_back, actor)).action != "unchanged":
            changed.append(kept.id)
        return changed
