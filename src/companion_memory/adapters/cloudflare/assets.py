"""The admin panel in the Worker: its files are Workers static assets (the ``admin/``
folder, ``[assets]`` in wrangler.toml), which serve them at their own root. The Worker
runs first, so it hands GET requests under the panel's paths to ``env.ASSETS`` with the
prefix taken off; everything else there (``POST /admin/monthly-rollup``) is the API's."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from ...domain.endpoints import PANEL_PREFIXES


def panel_asset_url(method: str, url: str) -> str | None:
    """The asset URL for a request to one of the panel's files, or None."""
    if method.upper() not in ("GET", "HEAD"):
        return None
    parts = urlsplit(url)
    for prefix in PANEL_PREFIXES:
        if parts.path.startswith(prefix + "/"):
            return urlunsplit(parts._replace(path=parts.path[len(prefix) :]))
    return None
