"""The OAuth consent page and the connected apps in headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright) against the real local server: the browser
follows a client's link, the owner signs in, approves, is sent back to the client with a
code; later the owner revokes the app on the Settings page."""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import datetime
from urllib.parse import parse_qs, urlencode, urlsplit
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import Browser, Route, expect

from tests.admin_browser import VIEWPORTS, Panel
from tests.conftest import OWNER_KEY
from tests.live_server import LiveServer

REDIRECT = "http://localhost:3030/callback"


def authorization_url(server: LiveServer, http: httpx.Client, redirect: str = REDIRECT) -> tuple[str, str, str]:
    client_id = http.post("/oauth/register", json={"client_name": "Browser app", "redirect_uris": [redirect]}).json()[
        "client_id"
    ]
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "browser-state",
    }
    return f"{server.url}/oauth/authorize?{urlencode(params)}", client_id, verifier


def client_page(panel: Panel) -> list[str]:
    """The client's redirect URI answers inside the browser; what reached it is kept."""
    reached: list[str] = []

    def answer(route: Route) -> None:
        reached.append(route.request.url)
        route.fulfill(status=200, content_type="text/plain", body="back in the app")

    panel.page.route("http://localhost:3030/**", answer)
    return reached


def test_the_owner_approves_an_app_and_later_revokes_it(browser: Browser, server: LiveServer) -> None:
    panel = Panel(browser, server.url, "phone")
    with httpx.Client(base_url=server.url, timeout=30) as http:
        url, client_id, verifier = authorization_url(server, http)
        reached = client_page(panel)
        page = panel.page
        page.goto(url)
        expect(page).to_have_url(f"{server.url}/admin/authorize.html?request=" + page.url.rsplit("=", 1)[-1])
        page.fill("input[name=ownerKey]", "not-the-key")
        page.click("#sign-in button[type=submit]")
        expect(page.locator("[role=alert]")).to_contain_text("owner key")
        page.fill("input[name=ownerKey]", OWNER_KEY)
        page.check("input[name=remember]")
        page.click("#sign-in button[type=submit]")
        expect(page.locator("#client-name")).to_have_text("Browser app wants to use your memory")
        expect(page.locator("#redirect-uri")).to_have_text(REDIRECT)
        expect(page.locator("#scopes li")).to_have_count(2)
        page.click("#approve")
        page.wait_for_url(REDIRECT + "?**")
        answer = {k: v[0] for k, v in parse_qs(urlsplit(reached[-1]).query).items()}
        assert answer["state"] == "browser-state" and answer["iss"] == server.url
        tokens = http.post(
            "/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": answer["code"],
                "redirect_uri": REDIRECT,
                "client_id": client_id,
                "code_verifier": verifier,
            },
        ).json()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        assert http.post("/mcp", json=ping, headers=bearer).status_code == 200

        # The key was remembered: the panel opens on its own, and Settings lists the app.
        page.on("dialog", lambda dialog: dialog.accept())
        panel.open("settings")
        app = page.locator(".connected-app")
        expect(app).to_have_count(1)
        expect(app).to_contain_text("Browser app")
        expect(app).to_contain_text("Last used")
        app.get_by_role("button", name="Revoke").click()
        expect(page.locator("#connected-apps")).to_contain_text("No app is connected")
        assert http.post("/mcp", json=ping, headers=bearer).status_code == 401
    panel.close()
    assert panel.errors == [], panel.errors


def test_a_consent_opened_in_another_browser_cannot_be_approved(browser: Browser, server: LiveServer) -> None:
    started, elsewhere = Panel(browser, server.url, "desktop"), Panel(browser, server.url, "desktop")
    with httpx.Client(base_url=server.url, timeout=30) as http:
        url, _, _ = authorization_url(server, http)
        started.page.goto(url)
        expect(started.page.locator("input[name=ownerKey]")).to_be_visible()
        # The consent page's address reaches another browser (a link in a message): it has no cookie.
        page = elsewhere.page
        page.goto(started.page.url)
        page.fill("input[name=ownerKey]", OWNER_KEY)
        page.click("#sign-in button[type=submit]")
        page.click("#approve")
        expect(page.locator("#consent-status")).to_contain_text("started in another browser")
        # The browser that began it still may.
        started.page.fill("input[name=ownerKey]", OWNER_KEY)
        started.page.click("#sign-in button[type=submit]")
        reached = client_page(started)
        started.page.click("#deny")
        started.page.wait_for_url(REDIRECT + "?**")
        assert parse_qs(urlsplit(reached[-1]).query)["error"] == ["access_denied"]
    started.close()
    elsewhere.close()


def test_the_consent_page_speaks_the_panels_language(browser: Browser, server: LiveServer) -> None:
    """A browser in Chinese gets the whole page in Chinese, from the catalogs, with the app's
    own words left as data; a language chosen in the panel's Settings wins over the browser's."""
    panel = Panel(browser, server.url, "phone", locale="zh-CN")
    page = panel.page
    with httpx.Client(base_url=server.url, timeout=30) as http:
        url, _, _ = authorization_url(server, http)
        reached = client_page(panel)
        page.goto(url)
        expect(page.locator("#consent h1")).to_have_text("连接应用")
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        assert page.title() == "companion-memory · 连接应用"
        assert panel.untranslated() == []
        page.fill("input[name=ownerKey]", "not-the-key")
        page.get_by_role("button", name="继续").click()
        expect(page.locator("[role=alert]")).to_contain_text("请使用所有者密钥")
        page.fill("input[name=ownerKey]", OWNER_KEY)
        page.get_by_role("button", name="继续").click()
        expect(page.locator("#client-name")).to_have_text("Browser app 想要使用你的记忆")
        expect(page.locator("#client-name [translate=no]")).to_have_text("Browser app")
        expect(page.locator("#redirect-uri")).to_have_attribute("translate", "no")
        expect(page.locator("#scopes")).to_contain_text("搜索、回忆和查看你的记忆")
        expect(page.locator("#consent-card")).to_contain_text("此请求将于")
        assert panel.untranslated() == []
        page.get_by_role("button", name="拒绝").click()
        page.wait_for_url(REDIRECT + "?**")
        assert parse_qs(urlsplit(reached[-1]).query)["error"] == ["access_denied"]

        # English chosen in the panel's Settings (kept in this browser) outweighs the browser's Chinese.
        page.goto(f"{server.url}/admin/authorize.html")
        page.evaluate("localStorage.setItem('companion-memory.admin', JSON.stringify({ language: 'en' }))")
        page.goto(authorization_url(server, http)[0])
        expect(page.locator("#sign-in")).to_contain_text("Owner key")
        assert page.evaluate("document.documentElement.lang") == "en"
        assert panel.untranslated() == []
    panel.close()
    assert panel.errors == [], panel.errors


# A callback address with no place to break, as some apps register.
LONG_REDIRECT = "http://localhost:3030/oauth/callback/" + "x7Kp2Qm9" * 16 + "?tenant=companion-memory-desktop"


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_the_consent_page_fits_a_desktop_and_a_phone(browser: Browser, server: LiveServer, viewport: str) -> None:
    """At 1280 px the card is a readable column (not the side rail's 160 px), at 390 px it
    fills the screen; the callback address wraps inside it; the icon loads; the deadline is in
    the server's zone (Singapore, the default), not the browser's (New York)."""
    panel = Panel(browser, server.url, viewport, timezone_id="America/New_York")
    page = panel.page
    with httpx.Client(base_url=server.url, timeout=30) as http:
        url, _, _ = authorization_url(server, http, LONG_REDIRECT)
        page.goto(url)
        icon = page.evaluate("document.querySelector('link[rel=icon]').href")
        assert http.get(icon).status_code == 200, icon
        page.fill("input[name=ownerKey]", OWNER_KEY)
        page.click("#sign-in button[type=submit]")
        expect(page.locator("#redirect-uri")).to_have_text(LONG_REDIRECT)
        request_id = page.url.rsplit("=", 1)[-1]
        asked = http.get(f"/v1/oauth/requests/{request_id}", headers={"Authorization": f"Bearer {OWNER_KEY}"})
    panel.shoot("consent")
    card = page.locator("#consent-card").bounding_box()
    address = page.locator("#redirect-uri").bounding_box()
    assert card and address
    width = VIEWPORTS[viewport]["width"]
    if viewport == "desktop":
        assert 480 <= card["width"] <= 640, card
        # The app's name and the question on one line, not a word a line.
        assert page.locator("#client-name").bounding_box()["height"] < 40  # type: ignore[index]
    else:
        assert card["width"] >= width - 2 * 20, card
    assert card["x"] <= address["x"] and address["x"] + address["width"] <= card["x"] + card["width"], address
    assert page.evaluate("(e) => e.scrollWidth <= e.clientWidth", page.locator("#redirect-uri").element_handle())
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    until = datetime.fromisoformat(asked.json()["expires_at"].replace("Z", "+00:00"))
    expect(page.locator("#consent-card")).to_contain_text(
        until.astimezone(ZoneInfo("Asia/Singapore")).strftime("%I:%M %p")
    )
    expect(page.locator("#consent-card")).not_to_contain_text(
        until.astimezone(ZoneInfo("America/New_York")).strftime("%I:%M %p")
    )
    assert panel.untranslated() == []
    panel.close()
    assert panel.errors == [], panel.errors
