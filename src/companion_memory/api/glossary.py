"""/v1/glossary: the owner's own words (term, aliases, definition), set by term."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response

from ..application import glossary
from ..application.glossary import (
    GlossaryAnswer,
    GlossaryEdit,
    GlossaryId,
    GlossaryList,
    GlossaryPatch,
    GlossaryQuery,
    GlossarySetAnswer,
    GlossaryWrite,
)
from ..application.principal import Principal
from ..application.records import Deleted
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["glossary"], route_class=JsonRoute)


@router.get("/v1/glossary")
async def list_glossary(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(glossary.list_glossary)],
    namespace: NamespaceQuery = "default",
) -> GlossaryList:
    return await glossary.list_glossary(runtime, principal, GlossaryQuery(namespace=namespace))


@router.post("/v1/glossary", status_code=201)
async def set_glossary(
    body: GlossaryWrite,
    response: Response,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(glossary.set_glossary)],
) -> GlossarySetAnswer:
    """Create a term (201) or replace an existing term's aliases and definition (200)."""
    answer = await glossary.set_glossary(runtime, principal, body)
    if not answer.created:
        response.status_code = 200
    return answer


@router.get("/v1/glossary/{entry_id}")
async def get_glossary(
    entry_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(glossary.get_glossary)]
) -> GlossaryAnswer:
    return await glossary.get_glossary(runtime, principal, GlossaryId(id=entry_id))


@router.patch("/v1/glossary/{entry_id}")
async def edit_glossary(
    entry_id: str,
    body: GlossaryPatch,
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(glossary.edit_glossary)],
) -> GlossaryAnswer:
    edit = GlossaryEdit(**body.model_dump(exclude_unset=True), id=entry_id)
    return await glossary.edit_glossary(runtime, principal, edit)


@router.delete("/v1/glossary/{entry_id}")
async def delete_glossary(
    entry_id: str, runtime: RuntimeDep, principal: Annotated[Principal, allowed(glossary.delete_glossary)]
) -> Deleted:
    return await glossary.delete_glossary(runtime, principal, GlossaryId(id=entry_id))
