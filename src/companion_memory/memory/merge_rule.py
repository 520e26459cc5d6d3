"""The merge rule: how what a draft says and the memory already there make the memory
written. One rule for every write that changes a memory that exists, an edit, an upsert
on its fact_key or a candidate merged into it (``changes``), and for a memory written
anew, a new one or a new version standing where an old one stood (``new_memory``):

- a field the draft gives is set to it (strings trimmed, tags cleaned); what it leaves
  out stays as it was (for a new version, as the old one had it);
- the type is set when the draft names a memory type; any other word leaves the type as
  it is (a new memory's being 'note'), and the answer's notes say so (``type_of``);
- evidence and source_message_ids, each quote and id once: a write that says the memory
  again (``said_again``) adds what it gives to the memory's, since the same fact said
  again brings more backing and takes none away; an edit sets them to what it gives, so
  the owner can take back a quote that was wrong;
- a plan's end as ``_plan_columns`` says, the layer as domain/layers.on_write says;
- the event is ``UPDATED``, as the answer's action, naming the fields that changed.

``said_again`` (an upsert on the memory's fact_key, a candidate merged into it): the
memory is also seen once more, which counts as a mention for its layer, even when
nothing else changes. An edit is not a mention.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..clock import iso
from ..domain.layers import on_write
from ..domain.memory import Evidence, Memory
from ..domain.mood import MOOD_LABELS
from ..domain.types import normalise_type
from ..errors import InvalidInput
from .config import MemoryConfig
from .drafts import MemoryDraft
from .moods import EMOTION_TAG_PREFIX, emotion_tags
from .plan_dates import parse_valid_to, valid_for

# The event, and the answer's action, of a write that changes a memory in place.
UPDATED = "updated"
# Columns a write keeps up to date by itself; an event's "fields" names what was changed.
BOOKKEEPING = frozenset({"seen_count", "last_seen_at", "updated_at", "layer_reason", "layer_at", "revivals"})


def changes_of(
    memory: Memory,
    draft: MemoryDraft,
    *,
    said_again: bool,
    who: str,
    now: datetime,
    config: MemoryConfig,
    status: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The columns of ``memory`` that this draft changes (those that differ), and the
    notes for the answer. ``status``: an edit that moves the memory between active and
    archived. The seen count and the times are the writer's to add."""
    found: dict[str, Any] = {}
    notes: list[str] = []
    if draft.type is not None:
        found["type"], notes = type_of(draft, memory.type)
    for name in ("content", "fact_key", "importance", "confidence", "pinned", "source", "authored_by"):
        value = getattr(draft, name)
        if value is not None:
            found[name] = value.strip() if isinstance(value, str) else value
    if draft.tags is not None:
        found["tags"] = _clean_tags(draft.tags)
    kept_evidence, kept_ids = (memory.evidence, memory.source_message_ids) if said_again else ([], [])
    if draft.evidence is not None:
        found["evidence"] = _added_evidence(kept_evidence, draft.evidence)
    if draft.source_message_ids is not None:
        found["source_message_ids"] = _union(kept_ids, draft.source_message_ids)
    memory_type = found.get("type", memory.type)
    found.update(_plan_columns(memory, memory_type, draft, now, config))
    notes += plan_notes(memory_type, draft)
    found.update(
        on_write(
            memory,
            memory_type,
            found.get("pinned", memory.pinned),
            draft.layer,
            iso(now),
            config.layer_policy,
            who=who,
            mentioned=said_again,
        )
    )
    if status is not None:
        found["status"] = status
    return {k: v for k, v in found.items() if getattr(memory, k) != v}, notes


def new_memory(
    id_: str,
    namespace: str,
    draft: MemoryDraft,
    memory_type: str,
    *,
    who: str,
    now: datetime,
    config: MemoryConfig,
    inherit: Memory | None = None,
) -> Memory:
    """A fresh row from a draft; what the draft leaves out comes from ``inherit`` (the
    version being superseded) or the defaults. A new version stands where the old one
    stood, as said again."""
    at = iso(now)
    base = inherit or Memory(id="", namespace=namespace, type=memory_type, content="", created_at=at, updated_at=at)
    pinned = base.pinned if draft.pinned is None else draft.pinned
    layer = {name: getattr(base, name) for name in ("layer", "layer_reason", "layer_at", "revivals")}
    layer.update(on_write(inherit, memory_type, pinned, draft.layer, at, config.layer_policy, who=who))
    return Memory(
        id=id_,
        namespace=namespace,
        type=memory_type,
        content=draft.content.strip(),  # type: ignore[union-attr]
        fact_key=draft.fact_key or base.fact_key,
        importance=_or(draft.importance, base.importance),
        confidence=_or(draft.confidence, base.confidence),
        pinned=pinned,
        tags=_clean_tags(base.tags if draft.tags is None else draft.tags),
        source=draft.source or "api",
        source_message_ids=draft.source_message_ids or [],
        evidence=draft.evidence or [],
        authored_by=draft.authored_by,
        last_seen_at=at,
        created_at=at,
        updated_at=at,
        **_plan_columns(inherit, memory_type, draft, now, config),
        **layer,
    )


def type_of(draft: MemoryDraft, current: str | None) -> tuple[str, list[str]]:
    """The type a write gives a memory whose type is ``current`` (None: a new memory). A word
    that names no type is not an error, since agents and models write loosely: it leaves the
    type as it is, a new memory's being 'note', and the notes say so."""
    memory_type = normalise_type(draft.type)
    if memory_type is not None:
        return memory_type, []
    if not draft.type:
        return current or "note", []
    if current is None:
        return "note", [f"unknown type {draft.type!r} stored as 'note'"]
    return current, [f"unknown type {draft.type!r} ignored; kept {current!r}"]


def plan_notes(memory_type: str, draft: MemoryDraft) -> list[str]:
    if memory_type != "plan" and (draft.valid_to is not None or draft.valid_days is not None):
        return [f"valid_to and valid_days are for plans; ignored for a {memory_type}"]
    return []


def vector_relevant(changed: dict[str, Any]) -> bool:
    """Whether the memory's vector (its text or its filterable metadata) changes with these columns."""
    return bool({"content", "type", "pinned", "status", "plan_status"} & changed.keys())


def _plan_columns(
    memory: Memory | None, memory_type: str, draft: MemoryDraft, now: datetime, config: MemoryConfig
) -> dict[str, Any]:
    """The plan columns of a memory of ``memory_type`` after this draft. A plan is
    active from when it is written; a new end (valid_to or valid_days) makes a closed
    plan active again, since it is a new commitment. Other types hold neither column."""
    if memory_type != "plan":
        return {"valid_to": None, "plan_status": None}
    end = _valid_to(draft, now, config.dream_time_zone)
    if end is None and memory is not None and memory.type == "plan":
        return {"valid_to": memory.valid_to, "plan_status": memory.plan_status}
    return {"valid_to": end, "plan_status": "active"}


def _valid_to(draft: MemoryDraft, now: datetime, time_zone: str) -> str | None:
    if draft.valid_to is not None:
        return parse_valid_to(draft.valid_to, time_zone)
    if draft.valid_days is not None:
        return valid_for(draft.valid_days, now, time_zone)
    return None


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def _clean_tags(tags: list[str]) -> list[str]:
    """Each tag once, trimmed; an emotion tag in the mood vocabulary's words (emotion:开心 →
    emotion:happy), so a memory's feeling and the mood timeline speak the same labels."""
    kept, unknown = emotion_tags(tag.strip() for tag in tags if tag.strip())
    if unknown:
        raise InvalidInput(
            f"unknown emotion in {', '.join(unknown)}: use {EMOTION_TAG_PREFIX}<{'|'.join(MOOD_LABELS)}>",
            code="invalid_emotion",
        )
    return kept


def _union(first: list[str], second: list[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))


def _added_evidence(first: list[Evidence], second: list[Evidence]) -> list[Evidence]:
    """Each quote once, as it was first given."""
    kept = list(first)
    quotes = {e.quote for e in first}
    for evidence in second:
        if evidence.quote not in quotes:
            quotes.add(evidence.quote)
            kept.append(evidence)
    return kept
