"""An httpx transport over the Worker's ``fetch``: how model providers, the GitHub API
and every other outbound call leave a Python Worker.

httpx's own transport opens sockets, which a Worker does not have. This one hands the
request to JS ``fetch`` and reads the answer's ``ReadableStream`` chunk by chunk, so a
provider's SSE stream reaches the client as it arrives. ``fetch`` has already undone
any ``Content-Encoding``, so that header (and the length of the encoded body) is
dropped before httpx sees the response. A timeout becomes an ``AbortSignal``; a redirect
is answered as it came (``redirect: "manual"``), never followed by ``fetch``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from . import ffi

# Headers describing the body as it came over the wire, not as fetch hands it to us.
_WIRE_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


def _abort_signal(seconds: float) -> Any:  # pragma: no cover - only inside Pyodide
    from js import AbortSignal

    return AbortSignal.timeout(int(seconds * 1000))


class _BodyStream(httpx.AsyncByteStream):
    def __init__(self, body: Any) -> None:
        self._chunks = None if ffi.is_js_nullish(body) else ffi.stream_chunks(body)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._chunks is None:
            return
        try:
            async for chunk in self._chunks:
                yield chunk
        except Exception as error:  # broad on purpose: a JS stream may throw anything; httpx expects its errors
            raise _http_error(error, None) from error

    async def aclose(self) -> None:
        if self._chunks is not None:
            chunks, self._chunks = self._chunks, None
            await chunks.aclose()


def _http_error(error: Exception, request: httpx.Request | None) -> httpx.TransportError:
    text = str(error)
    if "TimeoutError" in text or "AbortError" in text:
        return httpx.ReadTimeout(f"the request timed out ({text})", request=request)
    return httpx.ConnectError(f"fetch failed: {text}", request=request)


class FetchTransport(httpx.AsyncBaseTransport):
    def __init__(self, fetch: Callable[..., Any], timeout_signal: Callable[[float], Any] | None = None) -> None:
        self._fetch = fetch
        # Makes the signal that aborts a request after its timeout: AbortSignal.timeout
        # inside a Worker; given by tests elsewhere.
        self._timeout_signal = timeout_signal or (_abort_signal if ffi.IN_PYODIDE else None)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        init: dict[str, Any] = {
            "method": request.method,
            "headers": [[name, value] for name, value in request.headers.multi_items()],
            # A transport answers the redirect itself, as httpx's own do: the client
            # follows it if it was asked to, and a caller that checks every address it
            # is sent to (a Client ID Metadata Document's) sees each one.
            "redirect": "manual",
        }
        if body:
            init["body"] = body
        timeouts = request.extensions.get("timeout") or {}
        longest = max((t for t in timeouts.values() if t), default=None)
        if longest and self._timeout_signal is not None:
            init["signal"] = self._timeout_signal(longest)
        try:
            response = await self._fetch(str(request.url), ffi.to_js(init))
        except Exception as error:  # broad on purpose: JS fetch may throw anything; httpx expects its errors
            raise _http_error(error, request) from error
        headers = [(str(pair[0]), str(pair[1])) for pair in response.headers.entries()]
        return httpx.Response(
            int(response.status),
            headers=[(name, value) for name, value in headers if name.lower() not in _WIRE_HEADERS],
            stream=_BodyStream(response.body),
            request=request,
        )
