"""What every browser test here starts from: Debian's Chromium once per module, the real
local server with the owner key, a REST client to seed it, and the panel at phone and
desktop size, which fails a test on any page error, any request to another host, or the
key anywhere but the Authorization header."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from companion_memory.ports import Embedder
from tests.admin_browser import Panel, Rest, chromium, owner_server
from tests.conftest import OWNER_KEY
from tests.live_server import LiveServer


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def server(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    with owner_server(tmp_path / "data", embedder) as running:
        yield running


@pytest.fixture
def rest(server: LiveServer) -> Iterator[Rest]:
    client = Rest(server.url)
    yield client
    client.close()


@pytest.fixture(params=["phone", "desktop"])
def panel(request: pytest.FixtureRequest, browser: Browser, server: LiveServer) -> Iterator[Panel]:
    opened = Panel(browser, server.url, request.param)
    yield opened
    opened.close()
    assert opened.errors == [], opened.errors
    # Nothing but our own server was asked for anything, and the key never left the header.
    for url, headers in opened.requests:
        assert url.startswith(server.url), f"request to another host: {url}"
        assert OWNER_KEY not in url and "key=" not in url and "token=" not in url, url
        if "/v1/" in url or "/api/" in url:
            assert headers.get("authorization", "").startswith("Bearer "), url
