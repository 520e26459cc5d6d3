"""Outbound GETs that reach public addresses only, for the URLs a stranger names (a Client
ID Metadata Document's client_id).

The host is resolved here, every address it resolves to is checked
(``domain/addresses.py``), and the connection goes to the checked address itself, so no
second DNS answer (rebinding) decides where it lands. TLS still verifies, and SNI still
names, the URL's host. Proxies from the environment are not used: a proxy would connect
wherever it was asked.

The Worker needs none of this: ``fetch`` there cannot reach a private address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence

import httpcore
import httpx

from ...domain.addresses import IPAddress, IPNetwork, is_public_address
from ..remote.http_client import HttpxClient

# host, port -> the addresses to connect to, as text.
Resolve = Callable[[str, int], Awaitable[Sequence[str]]]


async def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives ``host`` (getaddrinfo, in a thread)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class PublicAddressBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to public addresses. ``also_allow``
    lets tests reach their own loopback server."""

    def __init__(
        self,
        resolve: Resolve = system_resolve,
        *,
        also_allow: Iterable[IPNetwork] = (),
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._resolve = resolve
        self._also_allow = tuple(also_allow)
        self._inner = inner or httpcore.AnyIOBackend()

    def allowed(self, address: IPAddress) -> bool:
        return is_public_address(address) or any(address in network for network in self._also_allow)

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = [ipaddress.ip_address(text) for text in await self._resolve(host, port)]
        except (OSError, ValueError) as error:
            raise httpcore.ConnectError(f"{host} did not resolve: {error}") from None
        refused = [address for address in addresses if not self.allowed(address)]
        if refused or not addresses:
            # One address that is not public is enough: a name that answers with a
            # private one among public ones is not a public server's.
            raise httpcore.ConnectError(f"{host} resolves to {refused[0] if refused else 'nothing'}, not public")
        failure: httpcore.ConnectError | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                failure = httpcore.ConnectError(str(error))
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("a public address is never a local socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PublicTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport over a :class:`PublicAddressBackend`: httpx takes no network
    backend, the connection pool under it (httpcore's) does."""

    def __init__(self, backend: PublicAddressBackend, *, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(verify=verify, trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False), network_backend=backend
        )


def public_http_client(
    resolve: Resolve = system_resolve, *, also_allow: Iterable[IPNetwork] = (), verify: ssl.SSLContext | bool = True
) -> HttpxClient:
    """The ``HttpClient`` for URLs a stranger names: public addresses only."""
    backend = PublicAddressBackend(resolve, also_allow=also_allow)
    return HttpxClient(httpx.AsyncClient(transport=PublicTransport(backend, verify=verify), trust_env=False))
