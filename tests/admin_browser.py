"""Helpers for the admin panel's browser tests: Debian's Chromium driven by Playwright,
the real local server, and a REST client to seed and check what the panel did."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect, sync_playwright

from companion_memory.ports import Embedder
from companion_memory.settings import Settings
from tests.conftest import OWNER_KEY
from tests.live_server import LiveServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}


@contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless. CI installs it (.ci/run); without it the browser tests
    fail, never skip, and never run `playwright install`."""
    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: apt-get install chromium"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@contextmanager
def owner_server(data_dir: Path, embedder: Embedder) -> Iterator[LiveServer]:
    """The real local server (the panel's files included) with the owner key set."""
    running = LiveServer(Settings(CHATBOX_API_KEY=OWNER_KEY), data_dir, embedder, local_app=True)
    yield running
    running.stop()


ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
# axe-core, vendored (tests/vendor/README.md): the accessibility audit run in the page.
AXE = ROOT / "tests" / "vendor" / "axe-4.14.1.min.js"

# Every visible text node, accessible name and placeholder must be a string the panel's
# i18n module produced in the current language (a catalog message, a formatted number or
# date) or hold no letters at all, unless it sits in data marked translate="no" (a memory's
# words, an id). A string typed into a page's code, or a key missing from the catalog
# (i18n.js records those), fails.
AUDIT_TEXT = """() => {
  const audit = window.__i18n;
  const problems = [...audit.missing].map((key) => `missing key ${key}`);
  const ok = (text) => !/\\p{L}/u.test(text) || audit.produced.has(text);
  const shown = (element) => element.getClientRects().length > 0 && getComputedStyle(element).visibility !== "hidden";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue.trim();
    const element = node.parentElement;
    if (!text || !element || element.closest('[translate="no"], noscript, script, style')) continue;
    const inSelect = element.closest("select");
    if (!(inSelect ? shown(inSelect) : shown(element))) continue;
    if (!ok(text)) problems.push(`text "${text}" in <${element.localName} class="${element.className.baseVal ?? element.className}">`);
  }
  for (const element of document.querySelectorAll("[aria-label], [placeholder]")) {
    if (element.closest('[translate="no"]') || !shown(element)) continue;
    for (const name of ["aria-label", "placeholder"]) {
      const value = (element.getAttribute(name) || "").trim();
      if (value && !ok(value)) problems.push(`${name} "${value}" on <${element.localName}>`);
    }
  }
  if (!ok(document.title)) problems.push(`title "${document.title}"`);
  return problems;
}"""


def _ui_js_number(pattern: str) -> int:
    found = re.search(pattern, (ROOT / "admin" / "js" / "ui.js").read_text())
    assert found, f"admin/js/ui.js no longer matches {pattern}"
    return int(found[1])


# How long the panel waits for an undo, and how long a toast stays.
UNDO_MS = _ui_js_number(r"UNDO_MS = (\d+)")
TOAST_MS = _ui_js_number(r"function toast\(.*ms = (\d+)")
# Assertions wait longer than Playwright's 5 s: a loaded CI machine embeds slowly.
expect.set_options(timeout=15_000)


class Rest:
    """The REST API with the owner key, for seeding and for checking results."""

    def __init__(self, base_url: str, key: str = OWNER_KEY) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60)

    def get(self, path: str, **params: Any) -> Any:
        answer = self.http.get(path, params=params)
        answer.raise_for_status()
        return answer.json()

    def post(self, path: str, body: Any = None) -> Any:
        answer = self.http.post(path, json={} if body is None else body)
        assert answer.is_success, answer.text
        return answer.json()

    def remember(self, fact_key: str, content: str, **fields: Any) -> str:
        return self.post("/v1/memories", {"fact_key": fact_key, "content": content, **fields})["memory"]["id"]

    def say(self, *texts: str, conversation: str = "browser-test") -> None:
        self.post(
            "/v1/ingest/messages",
            {"conversation_id": conversation, "messages": [{"role": "user", "content": t} for t in texts]},
        )

    def memories(self, status: str = "active") -> list[dict[str, Any]]:
        return self.get("/v1/memories", status=status, limit=200)["memories"]

    def candidates(self, status: str = "pending") -> list[dict[str, Any]]:
        return self.get("/v1/candidates", status=status, limit=200)["candidates"]

    def close(self) -> None:
        self.http.close()


def eventually(check: Callable[[], Any], timeout: float = 15.0, message: str = "condition not met") -> Any:
    """Poll ``check`` until it returns something truthy (actions with undo are sent late)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, message
        time.sleep(0.2)


class Panel:
    """One browser page on the panel, with the problems it logged."""

    def __init__(
        self,
        browser: Browser,
        base_url: str,
        viewport: str,
        *,
        theme: str = "light",
        locale: str = "en-US",
        timezone_id: str | None = None,
        profile: Path | None = None,
    ) -> None:
        """``profile``: a Chromium of its own with a user profile in that folder, as a person's
        browser is (the shared ``browser``'s contexts are incognito, where nothing installs)."""
        self.base_url = base_url
        self.viewport = viewport
        options: dict[str, Any] = {
            "viewport": VIEWPORTS[viewport],
            "color_scheme": "light" if theme == "light" else "dark",
            "locale": locale,
            "timezone_id": timezone_id,
        }
        self.context = (
            browser.browser_type.launch_persistent_context(
                str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, **options
            )
            if profile
            else browser.new_context(**options)
        )
        # The page's timers run on Playwright's clock (in real time unless told otherwise), so that
        # a test can let an undo window or a toast run out at once: see pass_time().
        self.context.clock.install()
        self.page: Page = self.context.pages[0] if profile else self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        # An expected 4xx answer is logged by Chromium as "Failed to load resource"; anything else is a fault.
        self.page.on(
            "console",
            lambda m: (
                m.type == "error" and not m.text.startswith("Failed to load resource") and self.errors.append(m.text)
            ),
        )
        self.page.on("request", lambda r: self.requests.append((r.url, r.headers)))
        self.page.set_default_timeout(20_000)

        self.page.context.set_default_navigation_timeout(30_000)

    def open(self, route: str = "", prefix: str = "/admin/") -> Page:
        self.page.goto(f"{self.base_url}{prefix}{'#/' + route if route else ''}")
        return self.page

    def sign_in(self, key: str = OWNER_KEY) -> None:
        """As a new user: the panel asks for the key, the user types it and lands on Today."""
        page = self.open()
        expect(page.locator("#settings-reason")).to_contain_text("Enter the API key")
        page.fill("input[name=apiKey]", key)
        page.click("button[type=submit]")
        expect(page.locator(".page[data-page=today] h1")).to_have_text("Today")
        # The "Connected" toast covers buttons at the bottom of a phone until it goes.
        self.pass_time(TOAST_MS)

    def sign_in_quietly(self, key: str = OWNER_KEY) -> None:
        """As a returning user whose key this browser keeps (in any language): straight to Today."""
        self.open()
        self.page.evaluate(
            "key => localStorage.setItem('companion-memory.admin', JSON.stringify({ apiKey: key }))", key
        )
        self.open("today")
        self.page.reload()
        expect(self.page.locator(".page[data-page=today] h1")).to_be_visible()
        self.settle()

    def pass_time(self, ms: int) -> None:
        """The user waits ``ms``: the page's due timers fire now instead of the test sleeping through them."""
        self.page.clock.fast_forward(ms)

    def go(self, route: str) -> Page:
        self.page.evaluate("route => { location.hash = route }", f"#/{route}")
        return self.page

    def shoot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.viewport}-{name}.png"
        # Sheets and transitions shown as they end (the panel draws nothing in animation frames).
        self.page.screenshot(path=str(path), animations="disabled")
        return path

    def settle(self) -> None:
        """Every spinner gone: the page shows what it loaded."""
        expect(self.page.locator(".loading")).to_have_count(0)

    def untranslated(self) -> list[str]:
        """What the page shows that did not come from the catalogs of its language (AUDIT_TEXT)."""
        problems: list[str] = self.page.evaluate(AUDIT_TEXT)
        return problems

    def accessibility_violations(self) -> list[str]:
        """axe-core's serious and critical findings on the page as it is (WCAG 2.1 A and AA rules)."""
        if not self.page.evaluate("typeof window.axe === 'object'"):
            # Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
            self.page.evaluate(AXE.read_text())
        results = self.page.evaluate(
            # A sheet still sliding or fading in blends its colours: axe would measure a frame.
            """async () => (await Promise.race([
                  Promise.allSettled(document.getAnimations().map((a) => a.finished)),
                  new Promise((done) => setTimeout(done, 2000)),  // an endless one never finishes
                ]),
                await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] } }))
              .violations.filter((v) => ["serious", "critical"].includes(v.impact))
              .map((v) => `${v.id}: ${v.help} -- ${v.nodes.slice(0, 4).map((n) => n.target.join(" ") + " " + (n.failureSummary || "").replaceAll("\\n", " ")).join(" | ")}`)"""
        )
        return list(results)

    def close(self) -> None:
        self.context.close()
