"""A small deterministic embedder: another model than the bundled one, for switching tests."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence


class HashEmbedder:
    similarity_range = (0.0, 1.0)

    def __init__(self, dimensions: int = 16, model: str = "test-hash") -> None:
        self.dimensions = dimensions
        self.model = model

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        vectors = []
        for text in texts:
            vector = [0.0] * self.dimensions
            for word in re.findall(r"\w+", text.lower()) or [""]:
                vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions] += 1.0
            norm = math.sqrt(sum(v * v for v in vector))
            vectors.append([v / norm for v in vector])
        return vectors
