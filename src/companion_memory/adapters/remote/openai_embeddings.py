"""The Embedder port over any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Ollama's
``/v1``, llama.cpp's ``llama-server``, vLLM, TEI, ...).

``POST {base_url}/embeddings`` with ``{"model", "input": [str, ...], "encoding_format":
"float", "dimensions"?}`` answers ``{"object": "list", "data": [{"object": "embedding",
"index": i, "embedding": [...]}], "model", "usage"}``. OpenAI allows up to 2048 inputs,
none empty; smaller servers allow fewer (TEI's ``--max-client-batch-size`` defaults to 32),
hence batches of 32. Rows are put back in order by ``index``.

OpenAI refuses an input over 8192 tokens ("maximum context length is 8192 tokens"), and a
20,000-character memory in Chinese or emoji is well over. Without the provider's tokenizer
each input is cut to ``MAX_INPUT_BYTES`` bytes of UTF-8 (at a character boundary): no
byte-level BPE or SentencePiece tokenizer makes more tokens than bytes, so that fits, and
32 of them stay under OpenAI's 300,000 tokens a request. Servers with a smaller window
(TEI's 512 unless ``--auto-truncate``) still need their own truncation switched on.

``dimensions`` asks a Matryoshka model (text-embedding-3-*, Qwen3-Embedding, ...) for
shorter vectors. Other models refuse it with a 400 (OpenAI: "This model does not support
specifying dimensions"; vLLM: "... does not support matryoshka representation ..."), so
after such a refusal the call is repeated without it, and the width the model returns must
then equal ``dimensions`` by itself. ``kind`` changes nothing: the API has no query or
passage mode, and prefixes some models expect (e5's "query: ") are not added.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from ...ports import PLAIN_SIMILARITY, EmbeddingKind
from ..model_io import ModelAPIError, embedding_texts, unit_vector
from .http import post_json

DEFAULT_BATCH = 32
# OpenAI's per-input limit is 8192 tokens; a little room for special tokens.
MAX_INPUT_BYTES = 8000
_DIMENSIONS_REFUSALS = ("dimension", "matryoshka")


class OpenAIEmbedder:
    """Implements ``ports.Embedder`` on an OpenAI-compatible ``/embeddings`` endpoint."""

    similarity_range = PLAIN_SIMILARITY

    def __init__(
        self,
        http: httpx.AsyncClient,
        base_url: str,
        api_key: str,
        model: str,
        dimensions: int,
        *,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        if not model.strip():
            raise ValueError("an OpenAI-compatible embedder needs a model name (EMBEDDING_MODEL)")
        if dimensions < 1 or batch_size < 1:
            raise ValueError("dimensions and batch_size must be positive")
        self._http = http
        self._url = base_url.rstrip("/") + "/embeddings"
        self._api_key = api_key
        self.model = model.strip()
        self.dimensions = dimensions
        self.batch_size = batch_size
        self._send_dimensions = True

    async def _post(self, texts: list[str]) -> Any:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._send_dimensions:
            body["dimensions"] = self.dimensions
        what = f"embeddings {self.model} at {self._url}"
        try:
            return await post_json(self._http, self._url, body, api_key=self._api_key, what=what)
        except ModelAPIError as error:
            refused = error.status in (400, 422) and any(word in str(error).lower() for word in _DIMENSIONS_REFUSALS)
            if not (self._send_dimensions and refused):
                raise
        self._send_dimensions = False
        return await self._post(texts)

    def _vectors(self, payload: Any, expected: int) -> list[list[float]]:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
            raise ModelAPIError(
                f"{self.model}: expected {{'data': [{{'index', 'embedding'}}, ...]}}, got {str(payload)[:200]}"
            )
        if len(data) != expected:
            raise ModelAPIError(f"{self.model} returned {len(data)} embeddings for {expected} inputs")
        embeddings: list[Any] = [None] * expected
        for row in data:
            index = row.get("index")
            if type(index) is not int or not 0 <= index < expected or embeddings[index] is not None:
                raise ModelAPIError(f"{self.model}: bad or repeated embedding index {index!r}")
            embeddings[index] = row.get("embedding")
        vectors = []
        for embedding in embeddings:
            if not isinstance(embedding, list):
                raise ModelAPIError(f"{self.model}: an embedding is not a list of floats: {str(embedding)[:100]}")
            if len(embedding) != self.dimensions:
                raise ModelAPIError(
                    f"{self.model} returned {len(embedding)}-d vectors but EMBEDDING_DIMENSIONS is "
                    f"{self.dimensions}; set EMBEDDING_DIMENSIONS={len(embedding)}"
                )
            vectors.append(unit_vector(embedding, self.model))
        return vectors

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        texts = embedding_texts(texts, kind)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = [_cut(text) for text in texts[start : start + self.batch_size]]
            vectors.extend(self._vectors(await self._post(chunk), len(chunk)))
        return vectors


def _cut(text: str) -> str:
    """``text``, or its longest head of at most ``MAX_INPUT_BYTES`` bytes of UTF-8."""
    if len(text) * 4 <= MAX_INPUT_BYTES:  # no character takes more than 4 bytes
        return text
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) <= MAX_INPUT_BYTES:
        return text
    return encoded[:MAX_INPUT_BYTES].decode("utf-8", "ignore")
