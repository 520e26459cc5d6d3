"""/v1/glossary: the owner's own words (term, aliases, definition), set by term."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Response

from ..errors import Conflict, InvalidInput, NotFound
from ..ports import ConstraintError
from ..store.glossary import GlossaryStore, distinct_aliases
from .auth import MEMORY_READ, MEMORY_WRITE, Principal, requires
from .deps import NamespaceQuery, RuntimeDep, now
from .json_body import JsonRoute
from .schemas import GlossaryPatch, GlossaryWrite

router = APIRouter(tags=["glossary"], route_class=JsonRoute)
Reader = Annotated[Principal, requires(MEMORY_READ)]
Writer = Annotated[Principal, requires(MEMORY_WRITE)]


@router.get("/v1/glossary")
async def list_glossary(runtime: RuntimeDep, _: Reader, namespace: NamespaceQuery = "default") -> dict[str, Any]:
    entries = await GlossaryStore(runtime.db).entries(namespace)
    return {"glossary": entries, "count": len(entries)}


@router.post("/v1/glossary", status_code=201)
async def set_glossary(body: GlossaryWrite, response: Response, runtime: RuntimeDep, _: Writer) -> dict[str, Any]:
    """Create a term (201) or replace an existing term's aliases and definition (200)."""
    entry, created = await GlossaryStore(runtime.db).set(
        body.namespace, body.term, distinct_aliases(body.term, body.aliases), body.definition, now(runtime)
    )
    if not created:
        response.status_code = 200
    return {"entry": entry, "created": created}


@router.get("/v1/glossary/{entry_id}")
async def get_glossary(entry_id: str, runtime: RuntimeDep, _: Reader) -> dict[str, Any]:
    entry = await GlossaryStore(runtime.db).get(entry_id)
    if entry is None:
        raise NotFound(f"glossary entry {entry_id} not found")
    return {"entry": entry}


@router.patch("/v1/glossary/{entry_id}")
async def edit_glossary(entry_id: str, body: GlossaryPatch, runtime: RuntimeDep, _: Writer) -> dict[str, Any]:
    store = GlossaryStore(runtime.db)
    entry = await store.get(entry_id)
    if entry is None:
        raise NotFound(f"glossary entry {entry_id} not found")
    changes = body.model_dump(exclude_none=True)
    if not changes:
        raise InvalidInput("nothing to change: send term, aliases or definition", code="empty_patch")
    if "aliases" in changes:
        changes["aliases"] = distinct_aliases(changes.get("term", entry["term"]), changes["aliases"])
    try:
        await store.update(entry_id, changes, now(runtime))
    except ConstraintError:
        raise Conflict(f"the term {changes['term']!r} already exists", code="term_taken") from None
    return {"entry": await store.get(entry_id)}


@router.delete("/v1/glossary/{entry_id}")
async def delete_glossary(entry_id: str, runtime: RuntimeDep, _: Writer) -> dict[str, Any]:
    if not await GlossaryStore(runtime.db).delete(entry_id):
        raise NotFound(f"glossary entry {entry_id} not found")
    return {"deleted": True, "id": entry_id}
