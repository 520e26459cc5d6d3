"""The Embedder and Reranker ports on Workers AI: what each model is sent and how its answer
is read, once, over two transports — the Worker's ``env.AI`` binding
(``adapters/cloudflare/workers_ai.py``) and the REST API (``adapters/remote/workers_ai_rest.py``).

Embeddings. ``run("@cf/baai/bge-m3", {"text": [...]})`` answers ``{"shape": [n, 1024],
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

Reranking. ``@cf/baai/bge-reranker-base`` takes ``{"query": str (minLength 1), "contexts":
[{"text": str (minLength 1)}], "top_k"?: int (minimum 1)}`` (``query`` and ``contexts``
required; no ``maxItems``, so no batching) and answers ``{"response": [{"id", "score"}]}``,
``id`` being the context's position, best first and cut to ``top_k`` rows. The model card
says the score "can be mapped to a float value in [0,1] by sigmoid function"; what Workers
AI returns is already in [0, 1], but logits are mapped with a sigmoid should they appear.

Over REST the same models answer ``POST https://api.cloudflare.com/client/v4/accounts/
{account_id}/ai/run/{model}`` (``Authorization: Bearer <token>``) wrapped in ``{"result":
{...}, "success": true, "errors": [], "messages": []}``; a binding that returns that
envelope unchanged is accepted too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..ports import PLAIN_SIMILARITY, EmbeddingKind, RerankScore
from .model_io import ModelAPIError, embedding_texts, relevance_scores, rerank_documents, unit_vector

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


class WorkersAIError(ModelAPIError):
    """Workers AI refused or failed a call, through the binding or the REST API."""


def workers_ai_model_name(configured: str) -> str:
    """``workers-ai/@cf/baai/bge-m3`` → ``@cf/baai/bge-m3``; refuse anything not on Workers AI."""
    model = configured.strip().removeprefix(WORKERS_AI_PREFIX)
    if not model.startswith(("@cf/", "@hf/")):
        raise ValueError(f"{configured!r} is not a Workers AI model (expected '@cf/...' or 'workers-ai/@cf/...')")
    return model


class Transport(Protocol):
    async def run(self, model: str, inputs: dict[str, Any]) -> Any:
        """Run ``model`` on ``inputs``; its result as plain Python, or ``WorkersAIError``."""
        ...


class WorkersAIEmbedderCore:
    """``ports.Embedder`` for the Workers AI text-embedding models, over any transport."""

    similarity_range = PLAIN_SIMILARITY

    def __init__(self, transport: Transport, model: str, *, dimensions: int, batch_size: int = MAX_BATCH) -> None:
        self._transport = transport
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

    def _vectors(self, result: Any, expected: int) -> list[list[float]]:
        data = result.get("data") if isinstance(result, dict) else None
        if data is None and isinstance(result, dict):
            data = result.get("response")
        if not isinstance(data, list) or len(data) != expected or not all(isinstance(row, list) for row in data):
            raise WorkersAIError(f"{self.model}: expected {expected} embeddings, got {str(result)[:200]}")
        vectors = []
        for row in data:
            if len(row) != self.dimensions:
                raise WorkersAIError(f"{self.model} returned {len(row)}-d vectors; expected {self.dimensions}")
            vectors.append(unit_vector(row, self.model))
        return vectors

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        texts = embedding_texts(texts, kind)
        if not texts:
            return []
        prefix = QUERY_INSTRUCTIONS.get(self.model, "") if kind == "query" else ""
        prepared = [prefix + text for text in texts]
        vectors: list[list[float]] = []
        for start in range(0, len(prepared), self.batch_size):
            chunk = prepared[start : start + self.batch_size]
            result = await self._transport.run(self.model, self._inputs(chunk))
            vectors.extend(self._vectors(result, len(chunk)))
        return vectors


class WorkersAIRerankerCore:
    """``ports.Reranker`` for ``@cf/baai/bge-reranker-base``, over any transport."""

    def __init__(self, transport: Transport, model: str) -> None:
        self._transport = transport
        self.model = workers_ai_model_name(model)

    async def rerank(self, query: str, documents: Sequence[str]) -> list[RerankScore]:
        documents = rerank_documents(query, documents)
        if not documents:
            return []
        inputs = {
            "query": query,
            "contexts": [{"text": document} for document in documents],
            # The answer is cut to top_k rows: ask for all, or the tail goes unscored.
            "top_k": len(documents),
        }
        result = await self._transport.run(self.model, inputs)
        rows = result.get("response") if isinstance(result, dict) else None
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise WorkersAIError(
                f"{self.model}: expected {{'response': [{{'id', 'score'}}, ...]}}, got {str(result)[:200]}"
            )
        try:
            return relevance_scores([(row.get("id"), row.get("score")) for row in rows], len(documents))
        except ValueError as error:
            raise WorkersAIError(f"{self.model}: {error}") from None
