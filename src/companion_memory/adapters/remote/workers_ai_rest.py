"""Workers AI over its REST API, for a runtime without the ``env.AI`` binding.

``POST https://api.cloudflare.com/client/v4/accounts/{account_id}/ai/run/{model}`` with
``Authorization: Bearer <API token>`` and the model's own input as the JSON body; the
answer is the Cloudflare API envelope ``{"result": <the model's output>, "success": true,
"errors": [], "messages": []}``. Failures come as ``{"success": false, "errors": [{"code",
"message"}]}`` with an HTTP error status (the Workers AI errors table: 5007 "No such model"
is 400, 3036 "used up your daily free allocation" and 3040 "Out of capacity" are 429).

Request building and result parsing are the binding adapters' (``WorkersAIEmbedderCore``,
``WorkersAIRerankerCore``); only the transport is here.
"""

from __future__ import annotations

from typing import Any

import httpx

from ..workers_ai_format import MAX_BATCH, WorkersAIEmbedderCore, WorkersAIError, WorkersAIRerankerCore
from .http import post_json, provider_message

CLOUDFLARE_API = "https://api.cloudflare.com/client/v4"


class RestTransport:
    """Runs Workers AI models through the Cloudflare REST API."""

    def __init__(self, http: httpx.AsyncClient, account_id: str, api_token: str) -> None:
        if not account_id or not api_token:
            raise ValueError("Workers AI over REST needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN")
        self._http = http
        self._account_id = account_id
        self._api_token = api_token

    async def run(self, model: str, inputs: dict[str, Any]) -> Any:
        url = f"{CLOUDFLARE_API}/accounts/{self._account_id}/ai/run/{model}"
        what = f"Workers AI {model}"
        payload = await post_json(self._http, url, inputs, api_key=self._api_token, what=what, error=WorkersAIError)
        if not isinstance(payload, dict) or "result" not in payload:
            raise WorkersAIError(f"{what}: expected the Cloudflare API envelope, got {str(payload)[:200]}")
        if payload.get("success") is False:
            raise WorkersAIError(f"{what}: {provider_message(payload, '')}")
        return payload["result"]


class WorkersAIRestEmbedder(WorkersAIEmbedderCore):
    """Implements ``ports.Embedder`` with a Workers AI embedding model over REST."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        account_id: str,
        api_token: str,
        model: str,
        *,
        dimensions: int,
        batch_size: int = MAX_BATCH,
    ) -> None:
        transport = RestTransport(http, account_id, api_token)
        super().__init__(transport, model, dimensions=dimensions, batch_size=batch_size)


class WorkersAIRestReranker(WorkersAIRerankerCore):
    """Implements ``ports.Reranker`` with ``@cf/baai/bge-reranker-base`` over REST."""

    def __init__(self, http: httpx.AsyncClient, account_id: str, api_token: str, model: str) -> None:
        super().__init__(RestTransport(http, account_id, api_token), model)
