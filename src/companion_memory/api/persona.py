"""/v1/persona: her persona knobs, their summary, tuning (the owner), revert and history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ..application import persona
from ..application.fields import LongPageLimit
from ..application.persona import (
    KnobName,
    Language,
    PersonaAnswer,
    PersonaHistory,
    PersonaHistoryQuery,
    PersonaRevert,
    PersonaScope,
    PersonaState,
    PersonaTune,
)
from ..application.principal import Principal
from .auth import allowed
from .deps import NamespaceQuery, RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["persona"], route_class=JsonRoute)


@router.get("/v1/persona")
async def get_persona(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(persona.get_persona)],
    namespace: NamespaceQuery = "default",
    language: Annotated[Language, Query()] = None,
) -> PersonaState:
    return await persona.get_persona(runtime, principal, PersonaScope(namespace=namespace, language=language))


@router.post("/v1/persona/tune")
async def tune_persona(
    body: PersonaTune, runtime: RuntimeDep, principal: Annotated[Principal, allowed(persona.tune_persona)]
) -> PersonaAnswer:
    return await persona.tune_persona(runtime, principal, body)


@router.post("/v1/persona/revert")
async def revert_persona(
    body: PersonaRevert, runtime: RuntimeDep, principal: Annotated[Principal, allowed(persona.revert_persona)]
) -> PersonaAnswer:
    return await persona.revert_persona(runtime, principal, body)


@router.get("/v1/persona/history")
async def persona_history(
    runtime: RuntimeDep,
    principal: Annotated[Principal, allowed(persona.persona_history)],
    namespace: NamespaceQuery = "default",
    knob: Annotated[KnobName | None, Query()] = None,
    limit: Annotated[LongPageLimit, Query()] = 100,
) -> PersonaHistory:
    query = PersonaHistoryQuery(namespace=namespace, knob=knob, limit=limit)
    return await persona.persona_history(runtime, principal, query)
