"""A fake of the Worker's global ``fetch`` that really goes over the network (to a local
server), answering the way the Workers runtime does.

``fetch(url, init)`` takes ``init`` as a JS object: ``method``, ``headers`` (an array of
``[name, value]`` pairs, or an object), ``body`` (a byte array), ``signal`` and
``redirect`` (``follow``, the default, or ``manual``: the 3xx itself is the answer). It
resolves to a ``Response`` with ``status``, ``headers`` (``entries()`` yields pairs, names
lower-cased) and ``body``, a ``ReadableStream`` whose reader's ``read()`` gives
``{done, value}`` with ``value`` a ``Uint8Array`` as chunks arrive; ``cancel()`` stops it.
Like fetch, it undoes a ``Content-Encoding`` (gzip, br, deflate) but still reports the
header. A refused connection rejects with ``TypeError: Network connection lost``; a
signal that fires rejects with ``TimeoutError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from tests.fakes.d1 import FakeJsException, FakeJsProxy


class FakeUint8Array:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def to_bytes(self) -> bytes:
        return self._data


class FakeTimeoutSignal:
    """``AbortSignal.timeout(ms)``: the fake applies it as the request's timeout."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


class _Reader:
    def __init__(
        self,
        chunks: AsyncIterator[bytes],
        response: httpx.Response,
        call: dict[str, Any] | None = None,
        on_chunk: Callable[[], None] | None = None,
    ) -> None:
        self._chunks = chunks
        self._response = response
        self._call = call if call is not None else {}
        self._on_chunk = on_chunk
        self.cancelled = False

    async def read(self) -> FakeJsProxy:
        try:
            chunk = await self._chunks.__anext__()
        except StopAsyncIteration:
            await self._response.aclose()
            return FakeJsProxy({"done": True})
        except httpx.TimeoutException:
            raise FakeJsException("The operation was aborted due to timeout", name="TimeoutError") from None
        except httpx.HTTPError as error:
            raise FakeJsException(f"Network connection lost ({error})", name="TypeError") from None
        self._call["chunks"] = self._call.get("chunks", 0) + 1
        if self._on_chunk is not None:
            self._on_chunk()
        return _Chunk(FakeUint8Array(chunk))

    async def cancel(self) -> None:
        self.cancelled = True
        await self._response.aclose()


class _Chunk:
    done = False

    def __init__(self, value: FakeUint8Array) -> None:
        self.value = value


class _Stream:
    def __init__(self, reader: _Reader) -> None:
        self._reader = reader

    def getReader(self) -> _Reader:
        return self._reader


class _Headers:
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._pairs = [(name.lower(), value) for name, value in pairs]

    def entries(self) -> list[list[str]]:
        return [[name, value] for name, value in self._pairs]


class FakeFetchResponse:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: _Stream | None) -> None:
        self.status = status
        self.headers = _Headers(headers)
        self.body = body


class FakeFetch:
    def __init__(self) -> None:
        self.client = httpx.AsyncClient(timeout=None)
        self.calls: list[dict[str, Any]] = []
        # Called after each chunk of a body is read: a test may let a held-back provider send its next event.
        self.on_chunk: Callable[[], None] | None = None

    async def __call__(self, url: str, init: Any = None) -> FakeFetchResponse:
        init = init.to_py() if isinstance(init, FakeJsProxy) else dict(init or {})
        headers = init.get("headers") or []
        pairs = list(headers.items()) if isinstance(headers, dict) else [tuple(pair) for pair in headers]
        if not all(isinstance(n, str) and isinstance(v, str) for n, v in pairs):
            raise FakeJsException("Failed to execute 'fetch': invalid header", name="TypeError")
        body = init.get("body")
        if body is not None and not isinstance(body, (bytes, str)):
            raise FakeJsException(f"Failed to execute 'fetch': body of type {type(body).__name__}", name="TypeError")
        signal = init.get("signal")
        call = {"url": url, "method": init.get("method", "GET"), "headers": pairs, "body": body, "chunks": 0}
        self.calls.append(call)
        request = self.client.build_request(
            init.get("method", "GET"),
            url,
            headers=pairs,
            content=body,
            timeout=signal.seconds if isinstance(signal, FakeTimeoutSignal) else None,
        )
        try:
            # fetch follows redirects unless told otherwise.
            follow = init.get("redirect", "follow") == "follow"
            response = await self.client.send(request, stream=True, follow_redirects=follow)
        except httpx.TimeoutException:
            raise FakeJsException("The operation was aborted due to timeout", name="TimeoutError") from None
        except httpx.HTTPError:
            raise FakeJsException("Network connection lost.", name="TypeError") from None
        # aiter_bytes decodes the Content-Encoding, as fetch does; the raw headers stay.
        reader = _Reader(response.aiter_bytes().__aiter__(), response, call, self.on_chunk)
        return FakeFetchResponse(response.status_code, list(response.headers.multi_items()), _Stream(reader))

    async def aclose(self) -> None:
        await self.client.aclose()
