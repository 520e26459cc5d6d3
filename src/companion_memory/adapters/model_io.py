"""What every model adapter checks on the way in and out, whatever its transport."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..ports import EmbeddingKind, ModelError, RerankScore


class ModelAPIError(ModelError):
    """A model API refused a call, could not be reached (a timeout included), or answered
    something unusable: the ``ModelError`` of every embedder and reranker over an API.

    ``status`` is the HTTP status the provider answered, when there was a response, else
    ``None``. It is the provider's, not ours: these failures never reach a client as such
    (recall does without the model), unlike ``UpstreamError.status``.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def embedding_texts(texts: Sequence[str], kind: EmbeddingKind) -> list[str]:
    """The texts to embed; refuses what every embedding API refuses (empty text)."""
    if kind not in ("query", "passage"):
        raise ValueError(f"kind must be 'query' or 'passage', got {kind!r}")
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of texts, not a single string")
    if any(not isinstance(text, str) or not text.strip() for text in texts):
        raise ValueError("embedding models refuse empty texts; got an empty or non-string input")
    return list(texts)


def rerank_documents(query: str, documents: Sequence[str]) -> list[str]:
    if isinstance(documents, str):
        raise TypeError("rerank() takes a sequence of documents, not a single string")
    if documents and not query.strip():
        raise ValueError("the reranker needs a non-empty query")
    if any(not isinstance(document, str) or not document.strip() for document in documents):
        raise ValueError("rerankers refuse empty documents; got an empty or non-string document")
    return list(documents)


def unit_vector(vector: Sequence[Any], model: str) -> list[float]:
    """``vector`` scaled to length 1; refuses non-numbers and zero or non-finite vectors."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vector):
        raise ModelAPIError(f"{model} returned an embedding that is not a list of numbers")
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0 or not math.isfinite(norm):
        raise ModelAPIError(f"{model} returned a zero or non-finite embedding")
    return [float(v) / norm for v in vector]


def relevance_scores(pairs: Sequence[tuple[Any, Any]], count: int) -> list[RerankScore]:
    """One score per document, in document order, from a reranker's ``(index, score)`` pairs.

    Raises ``ValueError`` unless every index in ``range(count)`` is scored exactly once.
    """
    scores: dict[int, float] = {}
    for index, score in pairs:
        if type(index) is not int or not 0 <= index < count or index in scores:
            raise ValueError(f"bad or repeated document index {index!r} for {count} documents")
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise ValueError(f"score {score!r} of document {index} is not a finite number")
        scores[index] = float(score)
    if len(scores) != count:
        raise ValueError(f"scored {len(scores)} of {count} documents")
    values = [scores[index] for index in range(count)]
    # Cross-encoders emit logits and servers differ on applying the sigmoid; a value outside
    # [0, 1] can only be a logit, so then all are mapped (monotone: the order is kept).
    if any(not 0.0 <= value <= 1.0 for value in values):
        values = [0.5 * (1.0 + math.tanh(value / 2.0)) for value in values]  # sigmoid that cannot overflow
    return [RerankScore(index, value) for index, value in enumerate(values)]
