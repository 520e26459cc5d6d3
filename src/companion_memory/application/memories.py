"""Memories: list, read, upsert by fact key, edit, supersede, archive, delete, relate."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, TypeAdapter

from ..domain.counts import MAX_COUNT
from ..domain.layers import Layer
from ..domain.memory import Evidence
from ..domain.scopes import MEMORY_READ, MEMORY_WRITE, OWNER
from ..domain.types import MEMORY_TYPES, RELATIONS, STATUSES, normalise_type
from ..errors import InvalidInput, NotFound
from ..memory.drafts import MemoryDraft
from ..runtime import Runtime
from .fields import (
    Cursor,
    FactKey,
    Id,
    InNamespace,
    LayerChoice,
    MemoryContent,
    MemoryRef,
    Namespace,
    NamespaceName,
    PageLimit,
    Score,
    ShortText,
    Tag,
    TypeFilter,
    ValidDays,
    ValidTo,
)
from .principal import Principal
from .records import Deleted, MemoryEvent, MemoryRecord, Relation, WriteAnswer
from .use_case import Input, Output, use_case


def known_types(names: list[str]) -> list[str]:
    """The canonical types for a filter; any name that is no type is refused, on every surface."""
    found: list[str] = []
    for name in names:
        canonical = normalise_type(name)
        if canonical is None:
            raise InvalidInput(f"unknown type {name!r}; known types: {', '.join(MEMORY_TYPES)}", code="invalid_type")
        if canonical not in found:
            found.append(canonical)
    return found


class EvidenceIn(Input):
    """A verbatim quote from a source message that backs a memory."""

    quote: Annotated[str, Field(min_length=1, max_length=2000)]
    message_id: Annotated[str, Field(max_length=200)] | None = None


class MemoryFields(Input):
    type: Annotated[
        ShortText | None,
        Field(
            description=f"One of {', '.join(MEMORY_TYPES)}; anything else is stored as 'note' "
            "(an existing memory keeps its type), and the answer's notes say so."
        ),
    ] = None
    fact_key: FactKey | None = None
    importance: Score | None = None
    confidence: Score | None = None
    tags: Annotated[list[Tag], Field(max_length=32)] | None = None
    pinned: bool | None = None
    source: ShortText | None = None
    source_message_ids: Annotated[list[Id], Field(max_length=200)] | None = None
    evidence: Annotated[list[EvidenceIn], Field(max_length=50)] | None = None
    authored_by: Annotated[ShortText | None, Field(description="Marks a memory written by hand (owner only).")] = None
    valid_to: ValidTo | None = None
    valid_days: ValidDays | None = None
    layer: LayerChoice | None = None

    def draft(self, principal: Principal) -> MemoryDraft:
        if self.authored_by:
            # Marking a memory as written by hand protects it from every other writer.
            principal.require(OWNER)
        fields = self.model_dump(include=_DRAFTED, exclude_none=True)
        evidence = None if self.evidence is None else [Evidence(e.quote, e.message_id) for e in self.evidence]
        return MemoryDraft(**fields, evidence=evidence)


_DRAFTED = {f.name for f in dataclasses.fields(MemoryDraft)} - {"evidence"}


UpsertKey = Annotated[
    FactKey, Field(description="The stable key the memory is upserted on, e.g. 'user.coffee.preference'.")
]


def _fact_key_required(schema: dict[str, Any]) -> None:
    schema["required"] = [*schema.get("required", []), "fact_key"]
    schema["properties"]["fact_key"] = {**TypeAdapter(UpsertKey).json_schema(), "title": "Fact Key"}


class MemoryWrite(MemoryFields):
    namespace: Namespace = "default"
    content: MemoryContent


class MemoryUpsert(MemoryWrite):
    """``fact_key`` is required, and the document says so. The model itself lets a
    missing one through, so that the writer can say why it is needed (``missing_fact_key``)
    rather than a bare "field required"."""

    model_config = ConfigDict(json_schema_extra=_fact_key_required)


class MemorySupersede(MemoryWrite):
    # The new version goes where the old one lives; namespace only when old_id names none.
    namespace: Annotated[NamespaceName, InNamespace(unless_row=True)] = "default"
    old_id: Annotated[MemoryRef, Field(description="The memory the new one replaces.")]


class MemoryPatch(MemoryFields):
    content: MemoryContent | None = None
    status: Literal["active", "archived"] | None = None


class MemoryEdit(MemoryPatch):
    id: MemoryRef


class MemoryId(Input):
    id: Annotated[MemoryRef, Field(description="The memory id.")]


class MemoryDelete(MemoryId):
    hard: Annotated[bool, Field(description="Remove the row too (owner only), once its vector is gone.")] = False


class MemoryQuery(Input):
    namespace: Namespace = "default"
    types: Annotated[list[TypeFilter], Field(default_factory=list, max_length=20, description="Only these types.")]
    statuses: Annotated[
        list[ShortText],
        Field(default_factory=list, max_length=10, description="Default active; 'all' for every status."),
    ]
    layers: Annotated[list[Layer], Field(default_factory=list, max_length=5, description="Only these layers.")]
    limit: PageLimit = 50
    cursor: Cursor | None = None


class RelationWrite(Input):
    target_id: MemoryRef
    # The document lists the kinds; the service names them in its 400 for any other.
    relation: Annotated[ShortText, Field(json_schema_extra={"enum": [r for r in RELATIONS if r != "supersedes"]})]
    weight: Annotated[float, Field(gt=0, le=1)] = 1.0


class RelationAdd(RelationWrite):
    source_id: MemoryRef


class RelationRemove(Input):
    memory_id: MemoryRef
    relation_id: Id


class ConsolidationUndo(Input):
    memory_id: Annotated[MemoryRef, Field(description="The memory whose history holds the event.")]
    event_id: Annotated[int, Field(ge=1, le=MAX_COUNT, description="A consolidation_* event of that memory.")]


class MemoryPage(Output):
    memories: list[MemoryRecord]
    count: int
    next_cursor: str | None


class MemoryDetail(Output):
    memory: MemoryRecord
    relations: list[Relation]
    events: list[MemoryEvent]


class RelationAnswer(Output):
    relation: Relation


class ConsolidationUndone(Output):
    memory_id: str
    event_id: int
    changed: list[str] = Field(description="The memories the undo changed (restored, or given back their old values).")


def _statuses(names: list[str]) -> list[str]:
    statuses = names or ["active"]
    if statuses == ["all"]:
        return list(STATUSES)
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        raise InvalidInput(f"unknown status {unknown[0]!r}; known: {', '.join(STATUSES)}, all", code="invalid_status")
    return statuses


@use_case("memories.list", MEMORY_READ)
async def list_memories(runtime: Runtime, _: Principal, query: MemoryQuery) -> MemoryPage:
    """Memories newest first, by type and status; page with the cursor."""
    memories, next_cursor = await runtime.writer.store.page(
        query.namespace,
        types=known_types(query.types),
        statuses=_statuses(query.statuses),
        layers=query.layers,
        limit=query.limit,
        cursor=query.cursor,
    )
    return MemoryPage(memories=[MemoryRecord.of(m) for m in memories], count=len(memories), next_cursor=next_cursor)


@use_case("memories.get", MEMORY_READ)
async def get_memory(runtime: Runtime, _: Principal, target: MemoryId) -> MemoryDetail:
    """One memory with its relations and its history of events."""
    store = runtime.writer.store
    memory = await store.get(target.id)
    if memory is None:
        raise NotFound(f"memory {target.id} not found")
    return MemoryDetail.model_validate(
        {
            "memory": MemoryRecord.of(memory),
            "relations": await store.relations(target.id),
            "events": await store.events(target.id),
        },
        from_attributes=True,
    )


@use_case("memories.upsert", MEMORY_WRITE)
async def upsert_memory(runtime: Runtime, principal: Principal, write: MemoryUpsert) -> WriteAnswer:
    """Upsert by fact key: a new key creates, a known key updates in place."""
    return WriteAnswer.of(await runtime.writer.upsert(write.namespace, write.draft(principal), principal.actor))


@use_case("memories.edit", MEMORY_WRITE)
async def edit_memory(runtime: Runtime, principal: Principal, edit: MemoryEdit) -> WriteAnswer:
    """Change a memory in place (content, fields, or active/archived)."""
    result = await runtime.writer.edit(edit.id, edit.draft(principal), principal.actor, status=edit.status)
    return WriteAnswer.of(result)


@use_case("memories.supersede", MEMORY_WRITE)
async def supersede_memory(runtime: Runtime, principal: Principal, write: MemorySupersede) -> WriteAnswer:
    """Write a new version; the old one becomes history (superseded)."""
    result = await runtime.writer.supersede(write.namespace, write.old_id, write.draft(principal), principal.actor)
    return WriteAnswer.of(result)


@use_case("memories.archive", MEMORY_WRITE)
async def archive_memory(runtime: Runtime, principal: Principal, target: MemoryId) -> WriteAnswer:
    """Keep a memory that no longer matters, but never recall it."""
    return WriteAnswer.of(await runtime.writer.archive(target.id, principal.actor))


@use_case("memories.delete", MEMORY_WRITE)
async def delete_memory(runtime: Runtime, principal: Principal, target: MemoryDelete) -> WriteAnswer:
    """Stop recalling a memory; with ``hard`` (owner only) remove the row too."""
    if target.hard:
        principal.require(OWNER)
    return WriteAnswer.of(await runtime.writer.delete(target.id, principal.actor, hard=target.hard))


@use_case("memories.relate", MEMORY_WRITE)
async def relate_memories(runtime: Runtime, principal: Principal, edge: RelationAdd) -> RelationAnswer:
    """A typed, weighted edge from one memory to another (recall follows it one hop); an
    existing one is refreshed with this weight."""
    relation = await runtime.writer.relate(edge.source_id, edge.target_id, edge.relation, edge.weight, principal.actor)
    return RelationAnswer.model_validate({"relation": relation}, from_attributes=True)


@use_case("memories.unrelate", MEMORY_WRITE)
async def unrelate_memories(runtime: Runtime, principal: Principal, edge: RelationRemove) -> Deleted:
    """Remove an edge."""
    await runtime.writer.unrelate(edge.memory_id, edge.relation_id, principal.actor)
    return Deleted(id=edge.relation_id)


@use_case("memories.undo_consolidation", MEMORY_WRITE)
async def undo_consolidation(runtime: Runtime, principal: Principal, undo: ConsolidationUndo) -> ConsolidationUndone:
    """Put back what a night's consolidation did: an archived duplicate is live again (and
    the evidence it gave the kept one is taken back), a strengthened rule gets its old
    importance and type, a dropped edge returns."""
    changed = await runtime.consolidation.undo(undo.memory_id, undo.event_id, principal.actor)
    return ConsolidationUndone(memory_id=undo.memory_id, event_id=undo.event_id, changed=changed)
