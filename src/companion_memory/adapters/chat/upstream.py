"""Provider failures, turned into UpstreamError with the status the client should see."""

from __future__ import annotations

import json

import httpx

from ...ports import UpstreamError

# Upstream statuses that mean the same to our client; anything else upstream is a 502.
_PASSED_THROUGH = {400, 401, 403, 404, 408, 413, 422, 429}


def _message(body: bytes) -> str:
    try:
        payload = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace").strip() or "no details"
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or error)
    if isinstance(payload, dict) and payload.get("message"):
        return str(payload["message"])
    return str(error or payload)[:200]


def raise_for_upstream(provider: str, status: int, body: bytes) -> None:
    if status < 400:
        return
    message = f"{provider} answered {status}: {_message(body)}"
    if status in _PASSED_THROUGH:
        raise UpstreamError(message, status=status, code="upstream_rejected")
    raise UpstreamError(message, status=502, code="upstream_error")


def upstream_failure(provider: str, error: httpx.HTTPError) -> UpstreamError:
    if isinstance(error, httpx.TimeoutException):
        return UpstreamError(f"{provider} did not answer in time", status=504, code="upstream_timeout")
    return UpstreamError(
        f"cannot reach {provider}: {type(error).__name__}: {error}", status=502, code="upstream_unreachable"
    )


def event_json(provider: str, payload: str, event: str = "") -> dict:
    """One stream event's JSON object, or the 502 a malformed event deserves."""
    try:
        data = json.loads(payload)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        where = f" ({event})" if event else ""
        raise UpstreamError(f"{provider} sent a malformed stream event{where}", status=502)
    return data
