"""The API's page (/docs) in headless Chromium against the local server as
`companion-memory serve` serves it, with every request to another host refused: it must
work on a machine with no network."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, Route, expect

from tests.admin_browser import VIEWPORTS
from tests.live_server import LiveServer


def test_the_api_page_renders_with_no_request_leaving_the_server(browser: Browser, server: LiveServer) -> None:
    context = browser.new_context(viewport=VIEWPORTS["desktop"])
    page = context.new_page()
    elsewhere: list[str] = []
    errors: list[str] = []

    def only_ours(route: Route) -> None:
        if route.request.url.startswith(server.url + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    context.route("**/*", only_ours)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(server.url + "/docs")
        # The operations list, from /openapi.json, with no key: both describe the API, not its data.
        expect(page.locator(".opblock").first).to_be_visible(timeout=30_000)
        assert page.locator(".opblock").count() > 50
        expect(page.get_by_text("/v1/memory/recall").first).to_be_attached()
        assert page.evaluate("[...document.images].every((image) => image.complete)")
    finally:
        context.close()
    assert elsewhere == [], elsewhere
    assert errors == [], errors
    assert httpx.get(server.url + "/openapi.json").status_code == 200
    assert httpx.get(server.url + "/redoc").status_code == 404
