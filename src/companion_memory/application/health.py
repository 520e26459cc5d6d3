"""Whether the service is up, and the vector mirror's health and rebuild."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from .. import __version__
from ..domain.scopes import DEBUG
from ..runtime import Runtime
from ..store.episodes import EpisodeStore
from .principal import Principal
from .use_case import Input, Nothing, Output, use_case

# Counting rows missing from the mirror reads the index in pages; stop after this many.
MISSING_COUNT_LIMIT = 5000
# Memories embedded per reindex call: one call must end well within a request's time.
MAX_BATCH = 500


class Health(BaseModel):
    ok: bool
    service: str
    version: str
    time_zone: str = Field(
        description="DREAM_TIME_ZONE: where the dream's days begin (the panel shows its dates and times there)."
    )


async def liveness(runtime: Runtime) -> Health:
    """Up, and the database answers. No use case: /health is for load balancers and
    uptime checks, which hold no key, so there is no principal to check a scope of."""
    await runtime.db.first("SELECT 1 AS ok")
    return Health(ok=True, service="companion-memory", version=__version__, time_zone=runtime.settings.DREAM_TIME_ZONE)


class IndexState(BaseModel):
    model: str
    dimensions: int
    text_form: str = Field(description="The form of the text the vectors were made from (see domain/search_text.py).")
    updated_at: str


class OutboxStats(BaseModel):
    pending: int
    max_attempts: int | None
    oldest: str | None


class VectorHealth(Output):
    embedding_model: str
    dimensions: int
    index: IndexState | None = Field(description="The embedder that claimed the index; null before the first write.")
    mismatch: str | None = Field(description="Why the index cannot be used with this embedder, if it cannot.")
    indexed_vectors: int
    active_memories: int
    episodes: int
    missing_from_index: int = Field(description="Live memories and episodes the index lacks.")
    missing_count_complete: bool = Field(
        description=f"false: counting stopped after {MISSING_COUNT_LIMIT} memories and episodes."
    )
    outbox: OutboxStats
    vector_pass: str | None = Field(
        description="reindex, refresh (a new form of the embedded text) or sweep (rows the index lacks): the "
        "pass over every row under way in the background, a page at a time; null when none is."
    )
    task_queue: dict[str, int] | None = Field(description="Tasks by state, where the queue can tell.")


class ReindexRequest(Input):
    restart: Annotated[
        bool,
        Field(
            description="Start over: empty the index and queue every live memory and episode. Without it, a call "
            "continues the rebuild in progress (or starts one if the embedder changed)."
        ),
    ] = False
    batch: Annotated[int, Field(ge=1, le=MAX_BATCH)] = 100


class ReindexProgress(Output):
    queued: int | None = Field(None, description="Memories and episodes the rebuild this call started queues.")
    indexed_now: int
    failed_now: int
    active_memories: int
    episodes: int
    pending: int = Field(description="Memories and episodes still to index: queued, or not reached yet by the rebuild.")
    rebuilding: bool = Field(description="The rebuild is still going over the rows (a page at a time).")
    done: bool


@use_case("vectors.health", DEBUG)
async def vector_health(runtime: Runtime, _: Principal, __: Nothing) -> VectorHealth:
    """The embedder, the index it claimed, and how far the index is from the database."""
    missing, exact = await runtime.mirror.missing(MISSING_COUNT_LIMIT)
    return VectorHealth.model_validate(
        {
            "embedding_model": runtime.embedder.model,
            "dimensions": runtime.embedder.dimensions,
            "index": await runtime.mirror.state.get(),
            "mismatch": await runtime.mirror.mismatch(),
            "indexed_vectors": await runtime.vectors.count(),
            "active_memories": await runtime.writer.store.count_live(),
            "episodes": await EpisodeStore(runtime.db).count(),
            "missing_from_index": missing,
            "missing_count_complete": exact,
            "outbox": await runtime.mirror.outbox.stats(),
            "vector_pass": running.mode if (running := await runtime.mirror.passes.current()) else None,
            "task_queue": await runtime.queue.stats() if runtime.queue else None,
        },
        from_attributes=True,
    )


@use_case("vectors.reindex", DEBUG)
async def vector_reindex(runtime: Runtime, _: Principal, request: ReindexRequest) -> ReindexProgress:
    """Rebuild the vector index from the database, one batch per call: call again until
    ``done`` is true (the answer carries the progress)."""
    mirror = runtime.mirror
    queued = await mirror.rebuild(restart=request.restart)
    step = await mirror.drain(request.batch)
    pending = int((await mirror.outbox.stats())["pending"] or 0) + await mirror.passes.remaining()
    rebuilding = await mirror.passes.current() is not None
    return ReindexProgress.model_validate(
        {
            "queued": queued,
            "indexed_now": step.synced,
            "failed_now": step.failed,
            "active_memories": await runtime.writer.store.count_live(),
            "episodes": await EpisodeStore(runtime.db).count(),
            "pending": pending,
            "rebuilding": rebuilding,
            "done": pending == 0 and not rebuilding,
        }
    )
