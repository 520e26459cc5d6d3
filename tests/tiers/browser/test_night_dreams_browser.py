"""Her night dreams in the admin panel, in headless Chromium against the real local server,
at a phone and a desktop size: last night's dream on Today with its mood and the memories
it came from (each opens; no card without one), under its day in the diary, and every dream in the diary's
Night dreams view; in Chinese too, every word from the catalogs.

Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, expect

from companion_memory.clock import iso
from companion_memory.domain.night_dream import NightDream
from companion_memory.store.night_dreams import NightDreamStore
from tests.admin_browser import Panel, Rest
from tests.live_server import LiveServer

ZONE = ZoneInfo("Asia/Singapore")  # the server's DREAM_TIME_ZONE
EN_DREAM = 'I dreamt I was on a beach in a warm rain. Someone kept talking about "the sea with Lin". I woke up smiling.'
ZH_DREAM = "我梦见自己在一家只在半夜开门的小书店里。梦里有人说起「江边散步」。醒来以后，心里一直暖暖的。"


def dreamt(server: LiveServer, night: str, text: str, mood: str, language: str, material: list[str]) -> None:
    """A dream as the nightly job keeps it (its making is tests/nightly/test_night_dreams.py's)."""
    dream = NightDream(
        id=str(uuid.uuid4()),
        namespace="default",
        date=night,
        seq=1,
        text=text,
        mood=mood,
        language=language,
        material_ids=tuple(material),
        writer="template",
        created_at=iso(datetime.now(ZONE)),
    )
    statement = NightDreamStore.insert(dream)
    with sqlite3.connect(server.runtime.db.path) as db:  # type: ignore[attr-defined]
        db.execute(statement.sql, statement.params)


def seed(server: LiveServer, rest: Rest) -> tuple[str, str, str]:
    """Yesterday's diary with last night's dream, and a Chinese dream three nights ago."""
    yesterday = datetime.now(ZONE).date() - timedelta(days=1)
    noon = datetime.combine(yesterday, time(12), tzinfo=ZONE)
    rest.post(
        "/v1/ingest/messages",
        {"messages": [{"role": "user", "content": "We went to the sea", "created_at": iso(noon)}]},
    )
    rest.post("/v1/dream/run", {})
    sea = rest.remember("trip.sea", "Went to the sea with Lin", tags=["emotion:happy"])
    walk = rest.remember("walk", "晚上一起去江边散步")
    dreamt(server, yesterday.isoformat(), EN_DREAM, "happy", "en", [sea, walk])
    dreamt(server, (yesterday - timedelta(days=3)).isoformat(), ZH_DREAM, "warm", "zh", [walk])
    return yesterday.isoformat(), sea, walk


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
def test_last_nights_dream_on_today_under_its_day_and_in_the_list(
    browser: Browser, server: LiveServer, rest: Rest, viewport: str
) -> None:
    panel = Panel(browser, server.url, viewport)
    try:
        panel.sign_in()
        page = panel.page
        expect(page.locator("#counts-by-type")).to_be_visible()
        expect(page.locator("#night-dreams")).to_have_count(0)  # no dream last night (they are off by default)
        yesterday, sea, _ = seed(server, rest)
        page.reload()
        card = page.locator("#night-dreams")
        expect(card.locator("h2")).to_have_text("Her dream last night")
        expect(card.locator(".night-dream")).to_have_count(1)  # three nights ago is not last night
        expect(card).to_contain_text(EN_DREAM)
        expect(card).to_contain_text("Mood: happy")
        expect(card).to_contain_text("dreamt from 2 memories:")
        card.locator(f".chip[data-memory='{sea}']").click()
        expect(page.locator("#modal-root")).to_contain_text("Went to the sea with Lin")
        page.keyboard.press("Escape")
        panel.shoot("night-dreams-today")

        card.get_by_role("link", name="All dreams").click()
        expect(page.locator("#night-dream-list .night-dream")).to_have_count(2)
        expect(page.locator("#night-dream-list .night-dream").nth(1)).to_contain_text(ZH_DREAM)
        panel.go("more/diary")
        day = page.locator(f".diary-entry[data-date='{yesterday}']")
        expect(day.locator(".diary-dreams")).to_contain_text("That night she dreamt")
        expect(day.locator(".diary-dreams")).to_contain_text(EN_DREAM)
        panel.settle()
        assert panel.untranslated() == [] and panel.accessibility_violations() == []
        panel.shoot("night-dreams-diary")
    finally:
        panel.close()
    assert panel.errors == [], panel.errors


def test_in_chinese_every_word_is_from_the_catalogs(browser: Browser, server: LiveServer, rest: Rest) -> None:
    seed(server, rest)
    panel = Panel(browser, server.url, "phone", locale="zh-CN")
    try:
        panel.sign_in_quietly()
        page = panel.page
        expect(page.locator("#night-dreams h2")).to_have_text("她昨晚的梦境")
        expect(page.locator("#night-dreams")).to_contain_text("心情：开心")
        assert panel.untranslated() == []
        panel.go("more/diary?period=dreams")
        expect(page.locator("#more-diary .segment[aria-selected=true]")).to_have_text("梦境")
        expect(page.locator("#night-dream-list .night-dream")).to_have_count(2)
        expect(page.locator("#night-dream-list")).to_contain_text("心情：温暖")
        panel.settle()
        assert panel.untranslated() == []
        panel.shoot("zh-night-dreams-diary")
    finally:
        panel.close()
    assert panel.errors == [], panel.errors
