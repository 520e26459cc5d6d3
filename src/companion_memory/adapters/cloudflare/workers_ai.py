"""The Embedder port over the Workers AI binding (``env.AI``).

``env.AI.run("@cf/baai/bge-m3", {"text": [...]})`` answers ``{"shape": [n, 1024],
"data": [[...], ...], "pooling": "cls"}`` (the model's output schema; the same model
answers ``{"response": [[...]], "shape": ...}`` when given ``{"contexts": [...]}``
without a query, so both spellings are read). The input schema allows at most 100
strings per call (``"maxItems": 100``) and refuses empty strings (``"minLength": 1``);
a refused input fails the call with ``AiError: 5006: Error: oneOf at '/' not met ...``.

bge-m3 needs no instruction on queries ("the BGE-M3 model no longer requires adding
instructions to the queries", FlagEmbedding BGE_M3 README), so ``kind`` changes nothing
for it. The English bge v1.5 models recommend prefixing short retrieval queries with
"Represent this sentence for searching relevant passages: "; that is applied to
``kind="query"`` for them. Vectors are normalised to unit length here, whatever the model
returns, because the port promises unit vectors.

For local use the same models answer over REST (``POST https://api.cloudflare.com/client/
v4/accounts/{account_id}/ai/run/{model}`` with ``Authorization: Bearer <token>``) wrapped
in ``{"result": {...}, "success": true, "errors": [], "messages": []}``; a binding that
returns that envelope unchanged is accepted too.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn, Sequence

from ...ports import EmbeddingKind
from . import ffi

WORKERS_AI_PREFIX = "workers-ai/"
# "maxItems": 100 on the "text" array of the bge embedding models' input schema.
MAX_BATCH = 100

_BGE_V15_QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: "

# Output widths of the Workers AI text-embedding models we know, to fail at start-up
# rather than at the first upsert when EMBEDDING_DIMENSIONS does not match the model.
KNOWN_DIMENSIONS: dict[str, int] = {
    "@cf/baai/bge-m3": 1024,
    "@cf/baai/bge-small-en-v1.5": 384,
    "@cf/baai/bge-base-en-v1.5": 768,
    "@cf/baai/bge-large-en-v1.5": 1024,
}
QUERY_INSTRUCTIONS: dict[str, str] = {
    "@cf/baai/bge-small-en-v1.5": _BGE_V15_QUERY_INSTRUCTION,
    "@cf/baai/bge-base-en-v1.5": _BGE_V15_QUERY_INSTRUCTION,
    "@cf/baai/bge-large-en-v1.5": _BGE_V15_QUERY_INSTRUCTION,
}
# Models whose input schema has ``truncate_inputs``: over-long memories are cut to the
# model's window instead of failing the whole batch.
TRUNCATING_MODELS = frozenset({"@cf/baai/bge-m3"})


class WorkersAIError(Exception):
    """Workers AI refused or failed an embedding call."""


def workers_ai_model_name(configured: str) -> str:
    """``workers-ai/@cf/baai/bge-m3`` → ``@cf/baai/bge-m3``; refuse anything not on Workers AI."""
    model = configured.strip().removeprefix(WORKERS_AI_PREFIX)
    if not model.startswith(("@cf/", "@hf/")):
        raise ValueError(f"{configured!r} is not a Workers AI model (expected '@cf/...' or 'workers-ai/@cf/...')")
    return model


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0 or not math.isfinite(norm):
        raise WorkersAIError("the model returned a zero or non-finite embedding")
    return [v / norm for v in vector]


class WorkersAIEmbedder:
    """Implements ``ports.Embedder`` on a Workers AI binding (``self.env.AI``)."""

    def __init__(self, binding: Any, model: str, *, dimensions: int, batch_size: int = MAX_BATCH) -> None:
        self._binding = binding
        self.model = workers_ai_model_name(model)
        known = KNOWN_DIMENSIONS.get(self.model)
        if known is not None and known != dimensions:
            raise ValueError(
                f"{self.model} makes {known}-d vectors but EMBEDDING_DIMENSIONS is {dimensions}; "
                "set EMBEDDING_DIMENSIONS to match (and a Vectorize index of that width)"
            )
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size must be between 1 and {MAX_BATCH}")
        self.dimensions = dimensions
        self.batch_size = batch_size

    def _inputs(self, texts: Sequence[str]) -> dict[str, Any]:
        inputs: dict[str, Any] = {"text": list(texts)}
        if self.model in TRUNCATING_MODELS:
            inputs["truncate_inputs"] = True
        return inputs

    def _fail(self, error: Exception) -> NoReturn:
        raise WorkersAIError(f"{self.model}: {error}") from error

    def _vectors(self, result: Any, expected: int) -> list[list[float]]:
        if isinstance(result, dict) and "data" not in result and isinstance(result.get("result"), dict):
            if result.get("success") is False:
                raise WorkersAIError(f"{self.model}: {result.get('errors')}")
            result = result["result"]  # the REST envelope
        data = result.get("data") if isinstance(result, dict) else None
        if data is None and isinstance(result, dict):
            data = result.get("response")
        if not isinstance(data, list) or len(data) != expected or not all(isinstance(row, list) for row in data):
            raise WorkersAIError(f"{self.model}: expected {expected} embeddings, got {str(result)[:200]}")
        vectors = []
        for row in data:
            if len(row) != self.dimensions:
                raise WorkersAIError(f"{self.model} returned {len(row)}-d vectors; expected {self.dimensions}")
            vectors.append(_unit([float(v) for v in row]))
        return vectors

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        if kind not in ("query", "passage"):
            raise ValueError(f"kind must be 'query' or 'passage', got {kind!r}")
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        if not texts:
            return []
        for text in texts:
            if not isinstance(text, str) or not text.strip():
                raise ValueError("Workers AI refuses empty texts; got an empty or non-string input")
        prefix = QUERY_INSTRUCTIONS.get(self.model, "") if kind == "query" else ""
        prepared = [prefix + text for text in texts]
        vectors: list[list[float]] = []
        for start in range(0, len(prepared), self.batch_size):
            chunk = prepared[start : start + self.batch_size]
            try:
                result = ffi.to_py(await self._binding.run(self.model, ffi.to_js(self._inputs(chunk))))
            except Exception as error:
                self._fail(error)
            vectors.extend(self._vectors(result, len(chunk)))
        return vectors
