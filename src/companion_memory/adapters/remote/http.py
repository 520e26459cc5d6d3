"""One JSON POST with the error handling every remote model client needs."""

from __future__ import annotations

from typing import Any

import httpx

from . import ModelAPIError

_SHOWN = 300  # characters of a provider's error or odd body kept in a message


def _cloudflare_error(item: Any) -> str:
    if isinstance(item, dict):
        message = str(item.get("message", ""))
        return f"{item['code']}: {message}" if "code" in item else message
    return str(item)


def provider_message(payload: Any, text: str) -> str:
    """The error text a provider put in its body, whichever dialect it speaks."""
    if isinstance(payload, dict):
        errors = payload.get("errors")
        if isinstance(errors, list) and errors:  # Cloudflare API: [{"code", "message"}]
            return "; ".join(_cloudflare_error(item) for item in errors)[:_SHOWN]
        error = payload.get("error")
        if isinstance(error, dict) and error.get("message"):  # OpenAI, llama.cpp, vLLM
            return str(error["message"])[:_SHOWN]
        if isinstance(error, str) and error:  # TEI, Ollama
            return error[:_SHOWN]
        for key in ("message", "detail"):  # Cohere, older vLLM; FastAPI-based servers
            if payload.get(key):
                return str(payload[key])[:_SHOWN]
    return text.strip()[:_SHOWN] or "(empty body)"


async def post_json(
    http: httpx.AsyncClient,
    url: str,
    body: Any,
    *,
    api_key: str,
    what: str,
    error: type[ModelAPIError] = ModelAPIError,
) -> Any:
    """POST ``body`` as JSON and return the decoded answer; anything else raises ``error``.

    ``what`` names the call in messages (never the key).
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = await http.post(url, json=body, headers=headers)
    except httpx.HTTPError as failure:
        raise error(f"{what}: {type(failure).__name__}: {str(failure) or 'no detail'}") from failure
    status = response.status_code
    try:
        payload: Any = response.json()
    except ValueError:
        if response.is_success:
            raise error(
                f"{what}: HTTP {status} with a body that is not JSON: {response.text[:_SHOWN]!r}", status=status
            ) from None
        raise error(f"{what}: HTTP {status}: {provider_message(None, response.text)}", status=status) from None
    if not response.is_success:
        raise error(f"{what}: HTTP {status}: {provider_message(payload, response.text)}", status=status)
    return payload
