"""The glossary: the owner's own words (term, aliases, definition), set by term."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..clock import iso
from ..domain.scopes import MEMORY_READ, MEMORY_WRITE
from ..errors import Conflict, InvalidInput, NotFound
from ..ports import ConstraintError
from ..runtime import Runtime
from ..store.glossary import GlossaryStore, distinct_aliases
from .fields import CutPrivate, GlossaryRef, GlossaryTerm, Namespace
from .principal import Principal
from .records import Deleted, GlossaryEntry
from .use_case import Input, Output, use_case

Aliases = Annotated[list[GlossaryTerm], Field(max_length=50, description="Other names for the term.")]
Definition = Annotated[str, Field(max_length=5_000), CutPrivate]


class GlossaryWrite(Input):
    namespace: Namespace = "default"
    term: GlossaryTerm
    aliases: Annotated[Aliases, Field(default_factory=list)]
    definition: Definition = ""


class GlossaryPatch(Input):
    term: GlossaryTerm | None = None
    aliases: Aliases | None = None
    definition: Definition | None = None


class GlossaryEdit(GlossaryPatch):
    id: GlossaryRef


class GlossaryId(Input):
    id: GlossaryRef


class GlossaryQuery(Input):
    namespace: Namespace = "default"


class GlossaryList(Output):
    glossary: list[GlossaryEntry]
    count: int


class GlossaryAnswer(Output):
    entry: GlossaryEntry


class GlossarySetAnswer(GlossaryAnswer):
    created: bool


@use_case("glossary.list", MEMORY_READ)
async def list_glossary(runtime: Runtime, _: Principal, query: GlossaryQuery) -> GlossaryList:
    """Every term of a namespace, alphabetically."""
    entries = await GlossaryStore(runtime.db).entries(query.namespace)
    return GlossaryList.model_validate({"glossary": entries, "count": len(entries)}, from_attributes=True)


@use_case("glossary.set", MEMORY_WRITE)
async def set_glossary(runtime: Runtime, _: Principal, write: GlossaryWrite) -> GlossarySetAnswer:
    """Create a term, or replace an existing term's aliases and definition."""
    entry, created = await GlossaryStore(runtime.db).set(
        write.namespace,
        write.term,
        distinct_aliases(write.term, write.aliases),
        write.definition,
        iso(runtime.clock.now()),
    )
    return GlossarySetAnswer.model_validate({"entry": entry, "created": created}, from_attributes=True)


async def _existing(store: GlossaryStore, entry_id: str) -> GlossaryAnswer:
    entry = await store.get(entry_id)
    if entry is None:
        raise NotFound(f"glossary entry {entry_id} not found")
    return GlossaryAnswer.model_validate({"entry": entry}, from_attributes=True)


@use_case("glossary.get", MEMORY_READ)
async def get_glossary(runtime: Runtime, _: Principal, target: GlossaryId) -> GlossaryAnswer:
    """One term."""
    return await _existing(GlossaryStore(runtime.db), target.id)


@use_case("glossary.edit", MEMORY_WRITE)
async def edit_glossary(runtime: Runtime, _: Principal, edit: GlossaryEdit) -> GlossaryAnswer:
    """Rename a term, or change its aliases or definition."""
    store = GlossaryStore(runtime.db)
    entry = (await _existing(store, edit.id)).entry
    if edit.term is None and edit.aliases is None and edit.definition is None:
        raise InvalidInput("nothing to change: send term, aliases or definition", code="empty_patch")
    term = entry.term if edit.term is None else edit.term
    aliases = None if edit.aliases is None else distinct_aliases(term, edit.aliases)
    try:
        await store.update(
            edit.id, iso(runtime.clock.now()), term=edit.term, aliases=aliases, definition=edit.definition
        )
    except ConstraintError:
        raise Conflict(f"the term {edit.term!r} already exists", code="term_taken") from None
    return await _existing(store, edit.id)


@use_case("glossary.delete", MEMORY_WRITE)
async def delete_glossary(runtime: Runtime, _: Principal, target: GlossaryId) -> Deleted:
    """Remove a term."""
    if not await GlossaryStore(runtime.db).delete(target.id):
        raise NotFound(f"glossary entry {target.id} not found")
    return Deleted(id=target.id)
