"""The Reranker port over a ``/rerank`` endpoint: Cohere (``/v1`` or ``/v2``), Jina, vLLM,
llama.cpp's ``llama-server --rerank`` and Hugging Face TEI.

``POST {base_url}/rerank`` with ``{"model", "query", "documents": [str, ...], "top_n"}``
answers ``{"results": [{"index", "relevance_score", ...}], ...}``. Cohere refuses unknown
fields with a 422 ("unknown field: parameter 'top_k' is not a valid field"), so nothing
else is sent. TEI speaks its own dialect, ``{"query", "texts"}`` → ``[{"index", "score"}]``,
and answers the Cohere body with 422 "missing field `texts`"; after that answer this client
speaks TEI to the endpoint.

Scores: Cohere, Jina, vLLM and TEI (without ``raw_scores``) answer in [0, 1]; llama.cpp
answers raw logits (e.g. 7.74, -11.02), which are mapped with a sigmoid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from ...ports import RerankScore
from ..model_io import ModelAPIError, relevance_scores, rerank_documents
from .http import post_json

# TEI's --max-client-batch-size defaults to 32 (a 413 beyond it); scores are per pair, so
# batching changes nothing else.
DEFAULT_BATCH = 32


class RerankAPI:
    """Implements ``ports.Reranker`` on a Cohere-style (or TEI) ``/rerank`` endpoint."""

    def __init__(
        self, http: httpx.AsyncClient, base_url: str, api_key: str, model: str, *, batch_size: int = DEFAULT_BATCH
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self._http = http
        self._url = base_url.rstrip("/") + "/rerank"
        self._api_key = api_key
        self.model = model.strip()
        self.batch_size = batch_size
        self._tei = False

    def _body(self, query: str, documents: list[str]) -> dict[str, Any]:
        if self._tei:
            return {"query": query, "texts": documents}
        body: dict[str, Any] = {"query": query, "documents": documents, "top_n": len(documents)}
        if self.model:
            body["model"] = self.model
        return body

    async def _post(self, query: str, documents: list[str]) -> Any:
        what = f"rerank {self.model or '(no model)'} at {self._url}"
        try:
            return await post_json(
                self._http, self._url, self._body(query, documents), api_key=self._api_key, what=what
            )
        except ModelAPIError as error:
            if self._tei or error.status != 422 or "texts" not in str(error):
                raise
        self._tei = True
        return await self._post(query, documents)

    def _rows(self, payload: Any) -> list[tuple[Any, Any]]:
        rows = payload.get("results") if isinstance(payload, dict) else payload
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ModelAPIError(
                f"{self.model}: expected {{'results': [{{'index', 'relevance_score'}}]}} or "
                f"[{{'index', 'score'}}], got {str(payload)[:200]}"
            )
        return [(row.get("index"), row.get("relevance_score", row.get("score"))) for row in rows]

    async def rerank(self, query: str, documents: Sequence[str]) -> list[RerankScore]:
        documents = rerank_documents(query, documents)
        if not documents:
            return []
        pairs: list[tuple[Any, Any]] = []
        for start in range(0, len(documents), self.batch_size):
            chunk = list(documents[start : start + self.batch_size])
            rows = self._rows(await self._post(query, chunk))
            pairs.extend((index + start if type(index) is int else index, score) for index, score in rows)
        try:
            return relevance_scores(pairs, len(documents))
        except ValueError as error:
            raise ModelAPIError(f"{self.model}: {error}") from None
