"""/health and /v1/debug/vector_health."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter

from .. import __version__
from .auth import DEBUG, Principal, requires
from .deps import RuntimeDep

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(runtime: RuntimeDep) -> dict[str, Any]:
    await runtime.db.first("SELECT 1 AS ok")
    return {"ok": True, "service": "companion-memory", "version": __version__}


@router.get("/v1/debug/vector_health")
async def vector_health(runtime: RuntimeDep, _: Annotated[Principal, requires(DEBUG)]) -> dict[str, Any]:
    row = await runtime.db.first(
        "SELECT COUNT(*) AS n FROM memories WHERE status = 'active' AND version_status = 'current'"
    )
    return {
        "embedding_model": runtime.embedder.model,
        "dimensions": runtime.vectors.dimensions,
        "indexed_vectors": await runtime.vectors.count(),
        "active_memories": row["n"] if row else 0,
        "outbox": await runtime.mirror.outbox.stats(),
    }
