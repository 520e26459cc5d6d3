"""The vector index caught up from the command line, with a progress line: after an
import, a reindex, or a repair, while the server may not be running to do it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import Runtime


async def fill_index(runtime: Runtime, *, restart: bool = False) -> bool:
    """Catch the vector index up with the database (or, with ``restart``, rebuild it)
    batch by batch, with a progress line; says whether everything got indexed."""
    from ..application import health
    from ..application.principal import SYSTEM

    batch = health.MAX_BATCH
    progress = await health.vector_reindex(runtime, SYSTEM, health.ReindexRequest(restart=restart, batch=batch))
    if progress.queued is not None:
        print(f"rebuilding the vector index with {runtime.embedder.model}: {progress.queued} memories", file=sys.stderr)
    of = f"/{progress.queued}" if progress.queued else ""
    embedded = progress.indexed_now
    while not progress.done and (progress.indexed_now or progress.rebuilding):
        print(f"\rindexing vectors: {embedded}{of}", end="", file=sys.stderr, flush=True)
        progress = await health.vector_reindex(runtime, SYSTEM, health.ReindexRequest(batch=batch))
        embedded += progress.indexed_now
    left = progress.pending
    print(f"\rindexed {embedded} vectors" + (f", {left} left to retry" if left else ""), file=sys.stderr)
    return progress.done
