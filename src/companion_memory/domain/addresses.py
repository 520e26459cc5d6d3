"""Which network addresses are public, whatever the text that names them: the checks
behind fetching a URL a stranger names (a Client ID Metadata Document) and behind telling
one registering client from another.

A host is read the way the system resolver reads it: ``getaddrinfo`` (inet_aton) takes
``2130706433``, ``0x7f000001``, ``127.1`` and ``0177.0.0.1`` all for 127.0.0.1, so each of
those spellings is a number here too, not a name.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Names that public DNS never answers but a local resolver may (RFC 6761, RFC 6762,
# RFC 8375, ICANN's .internal).
_LOCAL_NAMES = ("localhost", "localhost.localdomain")
_LOCAL_SUFFIXES = (".localhost", ".local", ".localdomain", ".internal", ".home.arpa")
# Ranges Python's ipaddress counts global that still lead somewhere private: NAT64's
# local-use prefix (RFC 8215); the well-known one (64:ff9b::/96) is read through to the
# IPv4 address it carries instead.
_NOT_PUBLIC = (ipaddress.IPv6Network("64:ff9b:1::/48"),)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_HOST_CHARACTERS = re.compile(r"[a-z0-9._-]+")
# The last label of a host the URL standard (and inet_aton) reads as a number.
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]*|[0-9]+)")
# A rate limit counts an IPv6 client by its /64: one subscriber is given a whole /64.
IPV6_CLIENT_PREFIX = 64


def is_public_address(address: IPAddress) -> bool:
    """True for an address on the public internet: not loopback, private, link-local,
    multicast, reserved or unspecified, nor an IPv6 address that carries such an IPv4
    address (IPv4-mapped, 6to4, NAT64)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public_address(embedded)
        if address.is_site_local:
            return False
    if any(address in network for network in _NOT_PUBLIC):
        return False
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def _ipv4_number(labels: Sequence[str]) -> ipaddress.IPv4Address | None:
    """inet_aton's reading: up to four parts, each decimal, octal (a leading 0) or hex
    (0x); the last part fills the bytes the others leave. None when it is no address."""
    if not 1 <= len(labels) <= 4:
        return None
    values = []
    for label in labels:
        if not _NUMBER.fullmatch(label):
            return None
        if label[:2].lower() == "0x":
            values.append(int(label[2:] or "0", 16))
        elif len(label) > 1 and label.startswith("0"):
            if any(digit in "89" for digit in label):
                return None
            values.append(int(label, 8))
        else:
            values.append(int(label))
    *leading, last = values
    if any(value > 255 for value in leading) or last >= 256 ** (4 - len(leading)):
        return None
    number = last
    for index, value in enumerate(leading):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def host_address(host: str) -> IPAddress | None:
    """The address ``host`` spells as a number in any form a resolver takes, or None for
    a name. ``ValueError`` for a host that looks like a number but is none (the URL
    standard refuses such a host; a resolver might still make something of it)."""
    name = host.strip()
    name = name[:-1] if name.endswith(".") else name
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        pass
    labels = name.split(".")
    if not _NUMBER.fullmatch(labels[-1]):
        return None
    address = _ipv4_number(labels)
    if address is None:
        raise ValueError(f"{host!r} is neither a name nor an address")
    return address


def public_host(host: str) -> str | None:
    """``host`` in ASCII when it may name a public server, else None: a public address in
    any spelling, or a name with a dot that is not kept for local networks. A name is
    read as the URL standard reads it (full-width digits and dots are digits and dots),
    and must then be plain letters, digits, dots, hyphens and underscores. Whether a
    name *resolves* to a public address is for the one who connects to check."""
    name = host.strip().lower()
    if ":" not in name:  # an IPv6 literal has colons and is read as one below
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return None
        if not _HOST_CHARACTERS.fullmatch(name):
            return None
    try:
        address = host_address(name)
    except ValueError:
        return None
    if address is not None:
        return str(address) if is_public_address(address) else None
    bare = name.rstrip(".")
    # A name without a dot is looked up in the machine's search domains (GCP answers
    # "metadata" with its metadata server).
    if "." not in bare or bare in _LOCAL_NAMES or bare.endswith(_LOCAL_SUFFIXES):
        return None
    return name


def public_https_url(url: str) -> str | None:
    """``url`` rebuilt from the parts that were checked, when it is https, has no
    credentials and names a public host; else None. Fetch the rebuilt text: then no URL
    parser that reads the original otherwise (a backslash, a full-width dot) decides
    where the request goes."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() != "https" or "@" in parts.netloc or not parts.hostname:
        return None
    host = public_host(parts.hostname)
    if host is None:
        return None
    netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    return urlunsplit(("https", netloc, parts.path or "/", parts.query, ""))


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """``"127.0.0.1, 10.0.0.0/8, ::1"`` as networks; ``ValueError`` names a bad entry."""
    networks = []
    for part in text.replace(";", ",").split(","):
        if part.strip():
            try:
                networks.append(ipaddress.ip_network(part.strip(), strict=False))
            except ValueError:
                raise ValueError(f"{part.strip()!r} is not an IP address or CIDR network") from None
    return tuple(networks)


def _within(address: str, networks: Iterable[IPNetwork]) -> bool:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in networks)


def forwarded_client(peer: str, forwarded_for: Sequence[str], trusted: Sequence[IPNetwork]) -> str:
    """The address a request came from: the socket's peer, unless that is one of the
    ``trusted`` proxies; then, in ``X-Forwarded-For`` (``forwarded_for``: each header
    line), the nearest address that is not a trusted proxy. Each proxy appends the peer
    it saw, so only the entries to the right of the first untrusted one are vouched for:
    whatever a client wrote sits further left."""
    hops = [hop.strip() for line in forwarded_for for hop in line.split(",") if hop.strip()]
    address = peer
    while hops and _within(address, trusted):
        address = hops.pop()
    return address


def client_key(address: str) -> str:
    """What a per-client limit counts: the IPv4 address (IPv4-mapped included), an IPv6
    address's /64, or the text itself when it is no address."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address.strip()
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, IPV6_CLIENT_PREFIX), strict=False))
    return str(parsed)
