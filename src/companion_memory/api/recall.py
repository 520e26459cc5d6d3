"""/v1/memory/recall (every chat turn, hooks) and /v1/memory/search (raw search)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter
from pydantic import Field

from ..domain.types import normalise_type
from ..memory.recall import RecallMeta, RecallResult
from .auth import MEMORY_READ, Principal, requires
from .deps import RuntimeDep
from .json_body import JsonRoute
from .schemas import Namespace, Request, Score, ShortText
from .views import recall_view

router = APIRouter(tags=["recall"], route_class=JsonRoute)
Reader = Annotated[Principal, requires(MEMORY_READ)]


class RecallRequest(Request):
    # Long input is accepted and cut by the pipeline: a pasted page must not be an error.
    query: str = ""
    namespace: Namespace = "default"
    k: int | None = None
    top_k: int | None = None
    min_score: Score | None = None
    types: Annotated[list[ShortText], Field(default_factory=list, max_length=20)]
    include_prompt: bool = False


class SearchRequest(RecallRequest):
    # false skips the reranker (the raw fused order)
    filter: bool = True


def _types(names: list[str], notes: list[str]) -> list[str]:
    known = []
    for name in names:
        canonical = normalise_type(name)
        if canonical is None:
            notes.append(f"unknown type {name!r} ignored")
        elif canonical not in known:
            known.append(canonical)
    return known


def _meta(meta: RecallMeta, notes: list[str]) -> dict[str, Any]:
    answer = {**asdict(meta), "notes": notes + meta.notes}
    for optional in ("reranker", "precious_overlap"):
        if not answer[optional]:
            del answer[optional]
    return answer


def _answer(result: RecallResult, include_prompt: bool, notes: list[str]) -> dict[str, Any]:
    return {**recall_view(result, prompt=include_prompt), "meta": _meta(result.meta, notes)}


def _k(body: RecallRequest) -> int | None:
    k = body.k if body.k is not None else body.top_k
    return None if k is None else max(1, min(100, k))


@router.post("/v1/memory/recall")
async def recall(body: RecallRequest, runtime: RuntimeDep, _: Reader) -> dict[str, Any]:
    """The memories to inject for this message; records them as injected."""
    notes: list[str] = []
    result = await runtime.recall.run(
        body.query,
        namespace=body.namespace,
        k=_k(body),
        min_score=body.min_score,
        types=_types(body.types, notes),
        account=True,
    )
    return _answer(result, body.include_prompt, notes)


@router.post("/v1/memory/search")
@router.post("/v1/search/memories", include_in_schema=False)
async def search(body: SearchRequest, runtime: RuntimeDep, _: Reader) -> dict[str, Any]:
    """Raw search: the same pipeline, no injection bookkeeping."""
    notes: list[str] = []
    k = _k(body) or 10
    result = await runtime.recall.run(
        body.query,
        namespace=body.namespace,
        k=k,
        min_score=body.min_score,
        types=_types(body.types, notes),
        rerank=body.filter,
    )
    return _answer(result, body.include_prompt, notes)
