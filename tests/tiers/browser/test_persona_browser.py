"""The panel's More → Persona in headless Chromium against the real local server, at a
phone and a desktop size: the knobs at their baseline, a tune with its reason, the daily
brake's refusal in the panel's words, a revert, and the changes; in Chinese too, every
word from the catalogs and no serious accessibility finding.

Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.admin_browser import TOAST_MS, Panel, Rest
from tests.live_server import LiveServer


def test_a_knob_is_tuned_with_a_reason_held_by_the_daily_brake_and_reverted(panel: Panel, rest: Rest) -> None:
    panel.sign_in()
    page = panel.go("more/persona")
    summary = page.locator("#persona-summary")
    expect(summary).to_contain_text("Every knob is at its baseline")
    knobs = page.locator("#persona-knobs .persona-knob")
    expect(knobs).to_have_count(6)
    initiative = page.locator(".persona-knob[data-knob=initiative]")
    expect(initiative.locator(".persona-value")).to_have_text("0.50")

    initiative.locator("[data-tune=up]").click()  # no reason yet: nothing is sent
    expect(page.locator(".toast", has_text="Say why first")).to_be_visible()
    assert rest.get("/v1/persona/history")["count"] == 0
    panel.pass_time(TOAST_MS * 2)

    page.fill("input[name=personaReason]", "a little more initiative")
    initiative.locator("[data-tune=up]").click()
    expect(page.locator(".toast-ok", has_text="Tuned.")).to_be_visible()
    expect(initiative.locator(".persona-value")).to_have_text("0.55")
    expect(initiative).to_contain_text("+0.05 from the baseline")
    expect(initiative).to_contain_text("Next tune after")
    expect(page.locator("#persona-summary-text")).to_contain_text("initiative: a little high")
    expect(page.locator("#persona-history .persona-change")).to_have_count(1)
    expect(page.locator("#persona-history")).to_contain_text("a little more initiative")
    panel.pass_time(TOAST_MS * 2)
    assert panel.untranslated() + panel.accessibility_violations() == []
    panel.shoot("flow-persona-tuned")

    page.fill("input[name=personaReason]", "even more")
    initiative.locator("[data-tune=up]").click()
    expect(page.locator(".toast", has_text="Not tuned: one tune a day, the next after")).to_be_visible()
    assert rest.get("/v1/persona")["knobs"][2]["value"] == 0.55
    panel.pass_time(8000)

    page.locator("#persona-revert-all").click()
    expect(page.locator(".toast-ok", has_text="Back to the baseline.")).to_be_visible()
    expect(summary).to_contain_text("Every knob is at its baseline")
    expect(initiative.locator(".persona-value")).to_have_text("0.50")
    expect(page.locator("#persona-history .persona-change")).to_have_count(2)
    changes = rest.get("/v1/persona/history")["changes"]
    assert [(c["kind"], c["reason"]) for c in changes] == [
        ("revert", "even more"),
        ("tune", "a little more initiative"),
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_section_speaks_chinese_and_passes_the_audits(
    browser: Browser, server: LiveServer, rest: Rest, theme: str
) -> None:
    rest.post("/v1/persona/tune", {"knob": "initiative", "delta": 0.05, "reason": "希望更主动"})
    rest.post("/v1/persona/tune", {"knob": "snark", "delta": -0.05, "reason": "温柔一点"})
    panel = Panel(browser, server.url, "phone", locale="zh-CN", theme=theme)
    try:
        panel.sign_in_quietly()
        page = panel.go("more/persona")
        expect(page.locator("#persona-summary-text")).to_have_text(
            "傲娇 中等；爱玩 中等；主动 略高；温柔 中等；毒舌 略低；情绪起伏 中等"
        )
        expect(page.locator(".persona-knob[data-knob=snark] h3")).to_have_text("毒舌")
        expect(page.locator("#persona-history .persona-change")).to_have_count(2)
        panel.settle()
        assert panel.untranslated() + panel.accessibility_violations() == []
        panel.shoot(f"zh-CN-{theme}-more-persona")
        # Held by a brake, in the panel's words.
        page.fill("input[name=personaReason]", "再主动一点")
        page.locator(".persona-knob[data-knob=initiative] [data-tune=up]").click()
        expect(page.locator(".toast", has_text="没有调整：每天只能调一次")).to_be_visible()
    finally:
        panel.close()
    assert panel.errors == [], panel.errors
