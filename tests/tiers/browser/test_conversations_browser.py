"""The admin panel's Conversations view in headless Chromium against the real local
server, at a phone and a desktop size: a day's conversations, the days around it, one
conversation's turns, and forgetting a message, a conversation and a day; in Chinese
too, every word from the catalogs and no serious accessibility finding.

Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.admin_browser import UNDO_MS, Panel, Rest, eventually
from tests.live_server import LiveServer

# In Singapore (the server's DREAM_TIME_ZONE): Sunday 29 November 2026, and Friday the 27th.
KYOTO = [
    ("user", "We land in Kyoto at noon.", "2026-11-29T01:00:00Z"),
    ("assistant", "Shall I book the ryokan by the river?", "2026-11-29T01:00:05Z"),
    ("user", "Yes please, two nights.", "2026-11-29T01:01:00Z"),
]
CHAT = [("user", "早上好，今天去爬山", "2026-11-29T10:00:00Z"), ("assistant", "好呀，记得带水", "2026-11-29T10:00:03Z")]
PACKING = [("user", "Packed the big suitcase", "2026-11-27T04:00:00Z")]


def said(rest: Rest, turns: list[tuple[str, str, str]], conversation: str | None, source: str = "ingest") -> list[str]:
    body: dict[str, Any] = {
        "source": source,
        "messages": [{"role": role, "content": content, "created_at": at} for role, content, at in turns],
    }
    if conversation:
        body["conversation_id"] = conversation
    return [m["id"] for m in rest.post("/v1/ingest/messages", body)["messages"]]


def seed(rest: Rest) -> list[str]:
    """The Kyoto conversation's ids; the chat's turns (no conversation) and Friday's too."""
    kyoto = said(rest, KYOTO, "kyoto")
    said(rest, CHAT, None, "chat")
    said(rest, PACKING, "packing")
    return kyoto


def day(rest: Rest, date: str) -> dict[str, Any]:
    answer: dict[str, Any] = rest.get("/v1/conversations", day=date)
    return answer


def test_a_day_is_read_its_neighbours_visited_and_a_message_a_conversation_and_the_day_forgotten(
    panel: Panel, rest: Rest
) -> None:
    k1, k2, _ = seed(rest)
    panel.sign_in()
    page = panel.page
    page.locator("#today-messages a[href='#/conversations']").click()
    expect(page.locator(".tab[data-tab=conversations]")).to_have_attribute("aria-current", "page")
    expect(page.locator("#conversation-list")).to_contain_text("Nothing was said on")  # today
    panel.go("conversations?day=2026-11-29")
    cards = page.locator("#conversation-list .conversation:visible")
    expect(cards).to_have_count(2)
    expect(page.locator("#day-heading")).to_have_text("Sunday, November 29, 2026")
    expect(page.locator("#day-summary")).to_have_text("2 conversations, 5 messages")
    expect(cards.first).to_contain_text("kyoto")
    expect(cards.first).to_contain_text("We land in Kyoto at noon.")
    expect(cards.first).to_contain_text("3 messages")
    expect(cards.nth(1)).to_contain_text("Without a conversation")
    expect(cards.nth(1)).to_contain_text("早上好，今天去爬山")
    expect(page.locator("#next-day")).to_be_disabled()
    panel.shoot("conversations-day")

    # The days around it: only days when something was said.
    page.click("#previous-day")
    expect(page.locator("#day-heading")).to_have_text("Friday, November 27, 2026")
    expect(cards).to_have_count(1)
    expect(page.locator("#previous-day")).to_be_disabled()
    page.click("#next-day")
    expect(page.locator("#day-heading")).to_have_text("Sunday, November 29, 2026")

    # Open a conversation; forget one message, undo forgetting another.
    cards.first.click()
    sheet = page.locator(".sheet")
    rows = sheet.locator("#conversation-turns .turn:visible")
    expect(rows).to_have_count(3)
    expect(rows.nth(1)).to_contain_text("Shall I book the ryokan by the river?")
    panel.shoot("conversations-open")
    rows.nth(1).locator(".turn-forget").click()
    expect(rows).to_have_count(2)
    panel.pass_time(UNDO_MS)
    eventually(lambda: rest.http.get(f"/v1/conversations/messages/{k2}").status_code == 404)
    rows.first.locator(".turn-forget").click()
    expect(rows).to_have_count(1)
    page.locator("[data-undo] .toast-action").click()
    expect(rows).to_have_count(2)
    panel.pass_time(UNDO_MS)
    shown = [t["content"] for t in rest.get(f"/v1/conversations/messages/{k1}", after=5)["turns"]]
    assert shown == ["We land in Kyoto at noon.", "Yes please, two nights."]

    # Forget the whole conversation: the sheet closes, its card goes.
    sheet.locator("[data-action=forget-conversation]").click()
    expect(page.locator(".sheet")).to_have_count(0)
    expect(cards).to_have_count(1)
    panel.pass_time(UNDO_MS)
    eventually(lambda: day(rest, "2026-11-29")["count"] == 1)
    expect(page.locator("#day-summary")).to_have_text("1 conversation, 2 messages")

    # Forget the day, once confirmed.
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.click("#forget-day")
    expect(cards).to_have_count(1)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#forget-day")
    expect(cards).to_have_count(0)
    panel.pass_time(UNDO_MS)
    eventually(lambda: day(rest, "2026-11-29")["messages"] == 0)
    expect(page.locator("#conversation-list")).to_contain_text("Nothing was said on Sunday, November 29, 2026")
    expect(page.locator(".toast-ok")).to_contain_text("2 messages forgotten.")
    assert day(rest, "2026-11-27")["messages"] == 1


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_view_speaks_chinese_and_passes_the_audits(browser: Browser, server: LiveServer, theme: str) -> None:
    rest = Rest(server.url)
    seed(rest)
    rest.close()
    for viewport in ("phone", "desktop"):
        panel = Panel(browser, server.url, viewport, locale="zh-CN", theme=theme)
        try:
            panel.sign_in_quietly()
            page = panel.go("conversations?day=2026-11-29")
            expect(page.locator("#conversation-list .conversation")).to_have_count(2)
            expect(page.locator(".tab[data-tab=conversations]")).to_have_text("对话")
            expect(page.locator("#day-summary")).to_have_text("2 段对话，5 条消息")
            expect(page.locator("#conversation-list")).to_contain_text("未归入对话")
            panel.settle()
            assert panel.untranslated() + panel.accessibility_violations() == []
            panel.shoot(f"zh-CN-{theme}-conversations")
            page.locator("#conversation-list .conversation").first.click()
            expect(page.locator(".sheet .turn")).to_have_count(3)
            expect(page.locator(".sheet .turn-forget").first).to_have_text("遗忘")
            panel.settle()
            assert panel.untranslated() + panel.accessibility_violations() == []
            panel.shoot(f"zh-CN-{theme}-conversation-open")
            page.keyboard.press("Escape")
            page.fill("input[name=q]", "爬山")
            page.click("form[role=search] button[type=submit]")
            expect(page.locator("#conversation-list .conversation-hit").first).to_contain_text("早上好，今天去爬山")
            panel.settle()
            assert panel.untranslated() + panel.accessibility_violations() == []
        finally:
            panel.close()
        assert panel.errors == [], panel.errors


def test_what_was_said_is_searched_and_a_found_message_opened_in_its_conversation(panel: Panel, rest: Rest) -> None:
    seed(rest)
    panel.sign_in()
    page = panel.go("conversations?day=2026-11-27")
    expect(page.locator("#conversation-list .conversation")).to_have_count(1)
    page.fill("input[name=q]", "book the ryokan")
    page.click("form[role=search] button[type=submit]")
    hits = page.locator("#conversation-list .conversation-hit:visible")
    expect(hits.first).to_contain_text("Shall I book the ryokan by the river?")
    expect(hits.first).to_contain_text("kyoto")
    expect(page.locator("#day-summary")).to_contain_text("“book the ryokan”")
    panel.shoot("conversations-search")
    hits.first.click()
    sheet = page.locator(".sheet")
    # The found message, marked, with the turn before it and those after.
    expect(sheet.locator(".turn-anchor")).to_contain_text("Shall I book the ryokan by the river?")
    expect(sheet.locator(".turn")).to_have_count(3)
    sheet.locator(".turn-anchor .turn-forget").click()
    page.keyboard.press("Escape")
    expect(hits.filter(has_text="Shall I book the ryokan")).to_have_count(0)
    panel.pass_time(UNDO_MS)
    eventually(lambda: day(rest, "2026-11-29")["conversations"][0]["messages"] == 2)
    page.click("#back-to-day")
    expect(page.locator("#conversation-list .conversation")).to_have_count(1)
    expect(page.locator("#day-heading")).to_have_text("Friday, November 27, 2026")
