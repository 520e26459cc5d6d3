"""Recall (every chat turn: counts as using the memories) and search (a plain look-up)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..domain.counts import MAX_COUNT
from ..domain.scopes import MEMORY_READ
from ..runtime import Runtime
from ..store.episode_search import EpisodeScope
from .fields import ExtraNamespaces, Id, Namespace, Score, TypeFilter
from .memories import known_types
from .principal import Principal
from .records import RecallAnswer
from .use_case import Input, use_case

# However many a caller asks for, recall answers at most this many hits.
MAX_HITS = 100
Hits = Annotated[int, Field(ge=1, le=MAX_HITS, description="How many memories to return.")]
MinScore = Annotated[Score, Field(description="Relevance floor, 0–1.")]


class RecallQuery(Input):
    # Long input is accepted and cut by the pipeline: a pasted page must not be an error.
    query: Annotated[str, Field(description="The user's message, or what to look for, in their words.")] = ""
    namespace: Namespace = "default"
    namespaces: ExtraNamespaces
    k: Annotated[int | None, Field(le=MAX_COUNT, description=f"How many memories to return (1–{MAX_HITS}).")] = None
    top_k: Annotated[int | None, Field(le=MAX_COUNT, description="Another name for k.")] = None
    min_score: MinScore | None = None
    types: Annotated[
        list[TypeFilter],
        Field(default_factory=list, max_length=20, description="Only these memory types (then no episodes)."),
    ]
    include_prompt: Annotated[bool, Field(description="Also answer the ready <memories> block.")] = False
    conversation_id: Annotated[
        Id | None,
        Field(description="The conversation the prompt holds (a session): its episodes are not returned."),
    ] = None
    in_prompt: Annotated[
        list[Annotated[str, Field(max_length=200_000)]],
        Field(
            default_factory=list,
            max_length=1000,
            description="The messages the prompt holds already: the episodes saying the same are not returned.",
        ),
    ]

    def count(self) -> int | None:
        k = self.k if self.k is not None else self.top_k
        return None if k is None else max(1, min(MAX_HITS, k))

    def episodes(self) -> EpisodeScope:
        return EpisodeScope(other_than=self.conversation_id)


class SearchQuery(RecallQuery):
    filter: Annotated[bool, Field(description="false skips the reranker (the raw fused order).")] = True


@use_case("recall.run", MEMORY_READ)
async def recall(runtime: Runtime, _: Principal, query: RecallQuery) -> RecallAnswer:
    """The memories and episodes to inject for this message; records them as injected."""
    result = await runtime.recall.run(
        query.query,
        namespace=query.namespace,
        namespaces=query.namespaces,
        k=query.count(),
        min_score=query.min_score,
        types=known_types(query.types),
        account=True,
        episodes=query.episodes(),
        in_prompt=query.in_prompt,
    )
    prompt = await runtime.context.for_turn(query.namespace, result) if query.include_prompt else None
    return RecallAnswer.of(result, prompt=prompt, time_zone=runtime.settings.DREAM_TIME_ZONE)


@use_case("recall.search", MEMORY_READ)
async def search(runtime: Runtime, _: Principal, query: SearchQuery) -> RecallAnswer:
    """Raw search: the same pipeline, no injection bookkeeping; archived episodes too."""
    result = await runtime.recall.run(
        query.query,
        namespace=query.namespace,
        namespaces=query.namespaces,
        k=query.count() or 10,
        min_score=query.min_score,
        types=known_types(query.types),
        rerank=query.filter,
        resting=True,
        episodes=query.episodes(),
        in_prompt=query.in_prompt,
    )
    prompt = await runtime.context.for_turn(query.namespace, result) if query.include_prompt else None
    return RecallAnswer.of(result, prompt=prompt, time_zone=runtime.settings.DREAM_TIME_ZONE)
