"""The ``HttpClient`` port over ``httpx``, for the local server and the Worker alike."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx

from ...ports import HttpResponse, HttpUnanswered
from ...settings import Settings


def upstream_timeout(settings: Settings) -> httpx.Timeout:
    """For the one client of every call out: finite, so a stuck provider becomes an
    error instead of a hang."""
    return httpx.Timeout(settings.UPSTREAM_TIMEOUT_SECONDS, connect=10.0)


class HttpxClient:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def get(
        self, url: str, *, headers: Mapping[str, str], timeout_seconds: float, max_bytes: int | None = None
    ) -> HttpResponse:
        try:
            # httpx's timeout bounds each read; a server that trickles its answer is
            # bounded by the deadline around the whole exchange.
            async with asyncio.timeout(timeout_seconds):
                return await self._get(url, dict(headers), timeout_seconds, max_bytes)
        except TimeoutError:
            raise HttpUnanswered(f"Timeout: no whole answer within {timeout_seconds:g} s") from None
        except httpx.HTTPError as error:
            raise HttpUnanswered(f"{type(error).__name__}: {error}") from error
        except httpx.InvalidURL as error:
            raise HttpUnanswered(f"InvalidURL: {error}") from error

    async def _get(self, url: str, headers: dict[str, str], seconds: float, max_bytes: int | None) -> HttpResponse:
        async with self.http.stream("GET", url, headers=headers, timeout=seconds, follow_redirects=False) as response:
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if max_bytes is not None and len(body) > max_bytes:
                    raise HttpUnanswered(f"TooLarge: the body is longer than {max_bytes} bytes")
            return HttpResponse(
                response.status_code, {name.lower(): value for name, value in response.headers.items()}, bytes(body)
            )
