"""The headers every file of the admin panel (the consent page among them) is sent with:
no other site may frame it (clickjacking the consent's *Approve*), no file is sniffed as
another type, and no URL leaks in a Referer. The pages' own policies (their ``<meta>``
Content-Security-Policy and referrer) stay as they are; ``frame-ancestors`` only works
as a header.

The local server adds them (hosts/local_server.py); on the Worker, Workers static
assets read the same from ``admin/_headers`` (tests keep the two equal)."""

from __future__ import annotations

# The file in admin/ that tells Workers static assets these headers.
WORKER_HEADERS_FILE = "_headers"
FRAME_ANCESTORS = "frame-ancestors 'none'"
PANEL_HEADERS = {
    "Content-Security-Policy": FRAME_ANCESTORS,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def merged_policy(policy: str | None) -> str:
    """A Content-Security-Policy that keeps ``policy`` and forbids framing, unless it
    already says who may frame."""
    directives = [part.strip() for part in (policy or "").split(";") if part.strip()]
    if any(part.split()[0].lower() == "frame-ancestors" for part in directives):
        return "; ".join(directives)
    return "; ".join([*directives, FRAME_ANCESTORS])


def panel_headers(policy: str | None = None) -> dict[str, str]:
    """The headers to set on a panel file whose Content-Security-Policy header (if any)
    is ``policy``."""
    return {**PANEL_HEADERS, "Content-Security-Policy": merged_policy(policy)}
