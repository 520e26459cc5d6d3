"""The ``HttpClient`` port over ``httpx``, for the local server and the Worker alike."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from ...ports import HttpResponse, HttpUnanswered


class HttpxClient:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def get(self, url: str, *, headers: Mapping[str, str], timeout_seconds: float) -> HttpResponse:
        try:
            response = await self.http.get(url, headers=dict(headers), timeout=timeout_seconds)
        except httpx.HTTPError as error:
            raise HttpUnanswered(f"{type(error).__name__}: {error}") from error
        return HttpResponse(
            response.status_code, {name.lower(): value for name, value in response.headers.items()}, response.content
        )
