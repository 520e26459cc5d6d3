"""The admin panel in headless Chromium (Debian's /usr/bin/chromium, driven by
Playwright) against the real local server, at a phone and a desktop size.

Screenshots of every tab go to test-artifacts/screenshots/."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Response, expect

from companion_memory.ports import Embedder
from companion_memory.settings import Settings
from tests.admin_browser import TOAST_MS, UNDO_MS, Panel, Rest, eventually
from tests.conftest import OWNER_KEY
from tests.live_server import LiveServer

XSS_IMG = '<img src=x onerror="window.__xss=1">'
XSS_SCRIPT = "<script>window.__xss=2</script>"
# The dream's quotes end at a full stop, so this one has none.
XSS_MESSAGE = "<img src=x onerror=\"window['__xss']=3\">"


def test_a_new_user_enters_the_key_and_sees_today(panel: Panel, rest: Rest) -> None:
    rest.remember("drink.tea", "Drinks jasmine tea in the afternoon", type="preference")
    rest.remember("pet.cat", "Has a grey cat called Miso", type="fact")
    rest.post("/v1/people", {"name": "Ana", "relation": "sister"})
    rest.say("I walked to the market this morning")

    page = panel.open()
    expect(page).to_have_url(re.compile(r"/admin/#/settings\?reason=welcome$"))
    page.fill("input[name=apiKey]", "not-the-key")
    page.click("button[type=submit]")
    expect(page.locator("#settings-reason")).to_contain_text("refused the API key (401")

    page.fill("input[name=apiKey]", OWNER_KEY)
    page.click("button[type=submit]")
    expect(page.locator(".page[data-page=today] h1")).to_have_text("Today")
    expect(page.locator(".stat").first).to_contain_text("2")
    expect(page.locator("#counts-by-type")).to_contain_text("preference")
    expect(page.locator("#counts-by-type")).to_contain_text("fact")
    expect(page.locator("#today-messages")).to_contain_text("I walked to the market this morning")
    expect(page.locator("#yesterday-diary")).to_contain_text("No diary for yesterday yet")
    # The people as the boot package tells the model about them, familiarity as a word.
    ana = page.locator("#familiar-people .person-row", has_text="Ana")
    expect(ana).to_contain_text("sister")
    expect(ana.locator(".chip-familiarity")).to_have_text("distant")
    assert page.evaluate("JSON.parse(localStorage.getItem('companion-memory.admin')).apiKey") == OWNER_KEY
    panel.shoot("flow-today-first-visit")


def test_the_review_loop_from_messages_to_an_approved_memory(panel: Panel, rest: Rest) -> None:
    rest.say(
        "Please remember that my sister's birthday is on 12 March.",
        "Also, never call me by my full name.",
        "remember that the spare key is under the blue flowerpot",
    )
    panel.sign_in()
    page = panel.go("more/maintenance")
    expect(page.locator("input[name=dream-date]")).not_to_have_value("")
    page.click("#dream-dry-run")
    expect(page.locator("#dream-report")).to_contain_text("would propose 3 candidates; nothing was written")
    assert rest.candidates() == []
    page.click("#dream-run")
    expect(page.locator("#dream-report")).to_contain_text("3 new candidates in the review queue")
    expect(page.locator("#pending-badge")).to_have_text("3")
    page.click("#dream-report >> text=Review them")

    cards = page.locator("article.candidate:visible")
    expect(cards).to_have_count(3)
    birthday = cards.filter(has_text="my sister's birthday is on 12 March")
    expect(birthday.locator(".candidate-quote")).to_have_text(
        "Please remember that my sister's birthday is on 12 March"
    )
    panel.shoot("flow-review-after-dream")
    birthday.locator("[data-action=approve]").click()
    expect(page.locator(".toast-ok", has_text="Approved")).to_contain_text("Approved: created a new memory")
    expect(cards).to_have_count(2)
    memory = next(m for m in rest.memories() if m["content"] == "My sister's birthday is on 12 March")
    assert memory["evidence"][0]["quote"] == "Please remember that my sister's birthday is on 12 March"
    panel.pass_time(TOAST_MS)  # the toast covers the cards' buttons on a phone until it goes

    # Discard waits a few seconds for an undo: undone, it stays pending.
    name = cards.filter(has_text="never call me by my full name")
    name.locator("[data-action=discard]").click()
    expect(cards).to_have_count(1)
    page.locator("[data-undo] .toast-action").click()
    expect(cards).to_have_count(2)
    panel.pass_time(UNDO_MS)  # past the undo window: still nothing sent
    assert len(rest.candidates()) == 2
    # Not undone, it is sent.
    name.locator("[data-action=discard]").click()
    expect(cards).to_have_count(1)
    panel.pass_time(UNDO_MS)
    eventually(lambda: [c["content"] for c in rest.candidates("discarded")] == ["Never call me by my full name"])

    # The last one merges into the memory just approved, chosen in the picker.
    key = cards.filter(has_text="the spare key is under the blue flowerpot")
    key.locator("[data-action=merge]").click()
    picker = page.locator(".sheet")
    picker.locator("input[type=search]").fill("sister birthday")
    picker.locator("button[type=submit]").click()
    picker.locator(".item", has_text="my sister's birthday is on 12 March").click()
    expect(page.locator("#review-summary")).to_have_text("0 candidates waiting for you.")
    panel.pass_time(UNDO_MS)
    # Marked merged first, then given the memory it went into (two writes).
    merged = eventually(lambda: [c for c in rest.candidates("merged") if c["result_memory_id"]])
    assert merged[0]["result_memory_id"] == memory["id"]
    expect(page.locator("#candidate-list")).to_contain_text("All caught up")


def test_a_contradiction_asks_which_memory_stands(panel: Panel, rest: Rest) -> None:
    rest.remember("home.city", "Lives in Paris")
    newer = rest.remember("home.move", "Moved to Berlin")
    panel.sign_in()
    page = panel.go("review")
    card = page.locator("article.candidate:visible")
    expect(card).to_have_count(1)
    expect(card.locator(".contradiction-question")).to_have_text("Which one stands?")
    expect(card.locator(".target-content")).to_have_text(["Lives in Paris", "Moved to Berlin"])
    panel.shoot("review-contradiction")
    card.locator("[data-action=approve]").click()
    expect(page.locator(".toast-ok", has_text="Approved")).to_contain_text("replaced the old version")
    assert [m["id"] for m in rest.memories()] == [newer]

    # A pair the rules got wrong: both stand, and the question is closed.
    rest.remember("drink.coffee", "Likes coffee")
    rest.remember("drink.coffee.evening", "Doesn't like coffee after 6pm")
    page.locator("button", has_text="Refresh").click()
    expect(card).to_have_count(1)
    card.locator("[data-action=both]").click()
    expect(card).to_have_count(0)
    eventually(lambda: rest.candidates() == [] and len(rest.memories()) == 3)


def test_create_find_edit_supersede_and_delete_a_memory(panel: Panel, rest: Rest) -> None:
    panel.sign_in()
    page = panel.go("memories")
    page.get_by_role("button", name="New memory").click()
    sheet = page.locator(".sheet")
    sheet.locator("textarea[name=content]").fill("Her favourite hiking trail is the MacRitchie loop")
    sheet.locator("select[name=type]").select_option("preference")
    sheet.locator("button[type=submit]").click()
    expect(page.locator(".toast-ok", has_text="Memory saved")).to_be_visible()
    created = next(m for m in rest.memories() if m["content"] == "Her favourite hiking trail is the MacRitchie loop")
    assert created["type"] == "preference" and created["fact_key"] == "preference.her-favourite-hiking-trail"

    rest.remember("drink.coffee", "Takes her coffee with oat milk", type="preference")
    page.fill("input[name=q]", "hiking trail")
    page.click("form[role=search] button[type=submit]")
    hits = page.locator("#memory-list .memory-item")
    expect(hits.first).to_contain_text("MacRitchie loop")
    panel.shoot("flow-memories-search")

    hits.first.click()
    sheet = page.locator(".sheet")
    expect(sheet.locator("#memory-content")).to_have_text("Her favourite hiking trail is the MacRitchie loop")
    panel.shoot("flow-memory-sheet")
    panel.pass_time(TOAST_MS)  # "Memory saved" covers the sheet's buttons on a phone until it goes
    sheet.get_by_role("button", name="Edit").click()
    sheet.locator("textarea[name=content]").fill("Her favourite hiking trail is the Southern Ridges")
    sheet.locator("button[type=submit]").click()
    expect(sheet.locator("#memory-content")).to_have_text("Her favourite hiking trail is the Southern Ridges")
    expect(sheet.locator("#memory-events")).to_contain_text("updated (content")
    panel.pass_time(TOAST_MS)
    assert (
        rest.get(f"/v1/memories/{created['id']}")["memory"]["content"]
        == "Her favourite hiking trail is the Southern Ridges"
    )

    sheet.get_by_role("button", name="New version").click()
    sheet.locator("textarea[name=content]").fill("She now prefers the Coast-to-Coast trail")
    sheet.locator("button[type=submit]").click()
    expect(sheet.locator("#memory-content")).to_have_text("She now prefers the Coast-to-Coast trail")
    expect(sheet.locator(".target").filter(has_text="Earlier version")).to_contain_text("Southern Ridges")
    old = rest.get(f"/v1/memories/{created['id']}")["memory"]
    assert old["status"] == "superseded" and old["superseded_by"]
    newest = rest.get(f"/v1/memories/{old['superseded_by']}")["memory"]
    assert newest["fact_key"] == created["fact_key"] and newest["status"] == "active"

    sheet.get_by_role("button", name="Delete").click()
    expect(page.locator("[data-undo]")).to_contain_text("Memory deleted")
    panel.pass_time(UNDO_MS)
    eventually(lambda: rest.get(f"/v1/memories/{newest['id']}")["memory"]["status"] == "deleted")

    # Archive and restore, from the list.
    page.fill("input[name=q]", "")
    page.click("form[role=search] button[type=submit]")
    oat = page.locator("#memory-list .memory-item", has_text="oat milk")
    expect(oat).to_be_visible()
    oat.click()
    page.locator(".sheet").get_by_role("button", name="Archive").click()
    expect(page.locator(".sheet .chip-status")).to_have_text("archived")
    page.locator(".sheet").get_by_role("button", name="Restore").click()
    expect(page.locator(".sheet .chip-status")).to_have_text("active")


def test_a_shared_memory_is_approved_recalled_with_its_namespace_and_revoked(panel: Panel, rest: Rest) -> None:
    bot = rest.remember("pet.fear", "Mochi the cat hides under the bed during thunderstorms", namespace="bot.kiki")
    proposed = rest.post(
        "/v1/shares", {"memory_id": bot, "target_namespace": "default", "note": "the family should know"}
    )
    mine = rest.remember("drink.tea", "Drinks jasmine tea in the afternoon", type="preference")
    panel.sign_in()
    page = panel.page
    expect(page.locator("#pending-badge")).to_have_text("1")  # the proposal waits for the owner
    panel.go("review")
    card = page.locator("#shares article.share")
    expect(page.locator("#shares h2")).to_have_text("Shared memories · 1 waiting")
    expect(card.locator(".share-content")).to_have_text("Mochi the cat hides under the bed during thunderstorms")
    expect(card).to_contain_text("bot.kiki → default")
    panel.shoot("review-share")
    card.locator("[data-action=approve]").click()
    expect(page.locator(".toast-ok", has_text="Shared into default")).to_be_visible()
    expect(card).to_have_attribute("data-status", "approved")
    expect(page.locator("#pending-badge")).to_be_hidden()

    # Recalled in default, saying where it lives.
    panel.go("memories")
    page.fill("input[name=q]", "thunderstorms")
    page.click("form[role=search] button[type=submit]")
    hit = page.locator("#memory-list .memory-item", has_text="Mochi")
    expect(hit.locator(".chip-namespace")).to_have_text("shared from bot.kiki")

    panel.go("review")
    page.locator("#shares article.share [data-action=revoke]").click()
    expect(page.locator(".toast-ok", has_text="No longer shared")).to_be_visible()
    eventually(lambda: rest.get(f"/v1/shares/{proposed['id']}")["status"] == "revoked")
    expect(page.locator("#shares")).to_be_hidden()

    # "Share to…" from a memory's sheet, approved at once from the toast.
    panel.go("memories")
    page.locator("#memory-list .memory-item", has_text="jasmine").click()
    panel.pass_time(TOAST_MS)
    page.locator(".sheet").get_by_role("button", name="Share to…").click()
    page.locator(".sheet input[name=target]").fill("family")
    page.locator(".sheet button[type=submit]").click()
    page.locator(".toast-ok .toast-action", has_text="Approve now").click()
    eventually(lambda: [s["memory_id"] for s in rest.get("/v1/shares", status="approved")["shares"]] == [mine])


def test_plans_show_their_day_and_are_marked_done_or_abandoned(panel: Panel, rest: Rest) -> None:
    rest.remember("plan.sea", "周末去看海", type="plan", valid_days=5)
    rest.remember("plan.call", "Call grandma", type="plan", valid_days=1)
    panel.sign_in()
    page = panel.go("today")
    plans = page.locator("#upcoming-plans .plan-row")
    expect(plans).to_have_count(2)
    expect(plans.first).to_contain_text("Call grandma")  # the soonest end first
    expect(plans.first.locator(".chip-plan")).to_contain_text("active · until")
    panel.shoot("flow-today-plans")
    plans.first.locator("[data-plan-action=done]").click()
    expect(page.locator(".toast-ok", has_text="Plan done")).to_be_visible()
    expect(plans).to_have_count(1)
    assert [p["content"] for p in rest.get("/v1/plans", status="done")["plans"]] == ["Call grandma"]

    page = panel.go("memories")
    expect(page.locator("#memory-list .memory-item", has_text="Call grandma").locator(".chip-plan")).to_contain_text(
        "done"
    )
    page.locator("#memory-list .memory-item", has_text="周末去看海").click()
    sheet = page.locator(".sheet")
    expect(sheet.locator(".chip-plan")).to_contain_text("active · until")
    sheet.locator("[data-plan-action=abandoned]").click()
    expect(sheet.locator(".chip-plan")).to_contain_text("abandoned")
    expect(sheet.locator("[data-plan-action]")).to_have_count(0)
    assert rest.get("/v1/plans")["plans"] == []

    # A plan written in the panel, with its last day.
    page.keyboard.press("Escape")
    page.get_by_role("button", name="New memory").click()
    sheet = page.locator(".sheet")
    expect(sheet.locator("input[name=valid_to]")).to_be_hidden()
    sheet.locator("textarea[name=content]").fill("Visit my sister")
    sheet.locator("select[name=type]").select_option("plan")
    sheet.locator("input[name=valid_to]").fill("2099-12-31")
    sheet.locator("button[type=submit]").click()
    expect(page.locator(".toast-ok", has_text="Memory saved")).to_be_visible()
    assert [(p["content"], p["valid_to"]) for p in rest.get("/v1/plans")["plans"]] == [
        ("Visit my sister", "2099-12-31")
    ]

    # A plan the dream found waits for review with its day.
    rest.say("I'm flying to Osaka tomorrow")
    page = panel.go("more/maintenance")
    expect(page.locator("input[name=dream-date]")).not_to_have_value("")  # today, from the boot package
    page.click("#dream-run")
    expect(page.locator("#dream-report")).to_contain_text("1 new candidate")
    page = panel.go("review")
    card = page.locator("article.candidate:visible", has_text="I'm flying to Osaka tomorrow")
    expect(card.locator(".chip-plan")).to_contain_text("until")
    card.locator("[data-action=approve]").click()
    expect(page.locator(".toast-ok", has_text="Approved")).to_be_visible()
    assert "I'm flying to Osaka tomorrow" in [p["content"] for p in rest.get("/v1/plans")["plans"]]


def test_today_shows_the_moods_and_her_todos_are_added_done_and_abandoned(panel: Panel, rest: Rest) -> None:
    rest.post("/v1/moods", {"label": "开心", "reason": "被夸了一句", "intensity": 0.8})
    rest.post("/v1/moods", {"label": "tired", "whose": "owner", "reason": "加班"})
    rest.post("/v1/moods", {"label": "happy", "intensity": 0.4})
    rest.post("/v1/todos", {"text": "Sort the star map"})
    panel.sign_in()
    page = panel.go("today")
    moods = page.locator("#moods")
    expect(moods.locator(".mood-today[data-whose=companion]")).to_contain_text("happy")
    expect(moods.locator(".mood-today[data-whose=companion]")).to_contain_text("40%")  # the latest of today
    expect(moods.locator(".mood-today[data-whose=owner]")).to_contain_text("tired")
    expect(moods.locator(".mood-today[data-whose=owner]")).to_contain_text("加班")
    expect(moods.locator(".mood-week[data-whose=companion] .bar-row")).to_have_text(["😊 happy2"])
    expect(moods.locator("#mood-timeline .mood-entry")).to_have_count(3)

    todos = page.locator("#her-todos .todo-row")
    expect(todos).to_have_count(1)
    page.fill("input[name=todoText]", "Answer the letter")
    page.select_option("select[name=todoPriority]", "5")
    page.click("#todo-form button[type=submit]")
    expect(page.locator(".toast-ok", has_text="Todo added")).to_be_visible()
    expect(todos).to_have_count(2)
    expect(todos.first).to_contain_text("Answer the letter")  # the highest priority comes next
    expect(todos.first).to_contain_text("priority 5")
    panel.shoot("flow-today-moods-todos")
    todos.first.locator("[data-todo-action=done]").click()
    expect(todos).to_have_count(1)
    expect(page.locator("#todo-counts")).to_have_text("1 open · 1 done this week")
    todos.first.locator("[data-todo-action=abandoned]").click()
    expect(page.locator("#her-todos")).to_contain_text("Nothing on her list")
    assert [t["text"] for t in rest.get("/v1/todos", status="done")["todos"]] == ["Answer the letter"]
    assert [t["text"] for t in rest.get("/v1/todos", status="abandoned")["todos"]] == ["Sort the star map"]


def test_the_companion_is_explained_once_and_called_by_her_name_when_she_has_one(
    browser: Browser, server: LiveServer, tmp_path: Path, embedder: Embedder
) -> None:
    # No COMPANION_NAME: "she", and Settings' About card says who she is.
    panel = Panel(browser, server.url, "desktop")
    try:
        panel.sign_in_quietly()
        expect(panel.page.locator("#her-todos h2")).to_have_text("Her todos")
        expect(panel.page.locator("#moods .mood-today[data-whose=owner]")).to_contain_text("Yours, as she sees it")
        panel.go("settings")
        expect(panel.page.locator("#about-her")).to_contain_text("“She”, in this panel, is your companion")
        expect(panel.page.locator("#about-her")).to_contain_text("COMPANION_NAME")
    finally:
        panel.close()
    assert panel.errors == [], panel.errors

    named = LiveServer(
        Settings(CHATBOX_API_KEY=OWNER_KEY, COMPANION_NAME=" Mei "), tmp_path / "named", embedder, local_app=True
    )
    rest = Rest(named.url)
    try:
        rest.post("/v1/moods", {"label": "happy", "reason": "a good walk"})
        assert rest.get("/v1/memory_boot")["companion_name"] == "Mei"
        for locale, shown in [
            (
                "en-US",
                ["Mei's todos", "Mei's", "Yours, as Mei sees it", "What Mei means to do", "Nothing on Mei's list"],
            ),
            ("zh-CN", ["Mei的待办", "Mei的", "你的（Mei眼中的）", "Mei打算做的事", "Mei的清单是空的"]),
        ]:
            panel = Panel(browser, named.url, "phone", locale=locale)
            try:
                panel.sign_in_quietly()
                page = panel.page
                title, hers, yours, placeholder, empty = shown
                expect(page.locator("#her-todos h2")).to_have_text(title)
                expect(page.locator("#her-todos")).to_contain_text(empty)
                expect(page.locator("input[name=todoText]")).to_have_attribute("placeholder", placeholder)
                expect(page.locator("#moods .mood-today[data-whose=companion] p").first).to_have_text(hers)
                expect(page.locator("#moods .mood-today[data-whose=owner] p").first).to_have_text(yours)
                expect(page.locator("#mood-timeline .chip[data-whose=companion]")).to_have_text("Mei")
                assert panel.untranslated() == []
                page.locator("#moods").scroll_into_view_if_needed()
                panel.shoot(f"today-named-{locale}")
            finally:
                panel.close()
            assert panel.errors == [], panel.errors
    finally:
        rest.close()
        named.stop()


def test_people_are_added_edited_and_a_merge_is_approved(panel: Panel, rest: Rest) -> None:
    ana = rest.post("/v1/people", {"name": "Ana", "relation": "sister"})["person"]["id"]
    sister = rest.post("/v1/people", {"name": "安娜", "aliases": ["我姐姐"], "notes": "Has two cats"})["person"]["id"]
    rest.remember("sister.cats", "我姐姐养了两只猫")
    rest.post("/v1/person_proposals", {"person_id": ana, "other_id": sister, "reason": "the same sister"})
    panel.sign_in()
    page = panel.go("review")
    expect(page.locator("#pending-badge")).to_have_text("1")  # the merge waits in the owner's queue
    expect(page.locator("#people-proposals .proposal")).to_contain_text("the same sister")
    page = panel.go("more/people")
    people = page.locator("#people-list .person")
    expect(people).to_have_count(2)
    proposal = page.locator("#people-proposals .proposal")
    expect(proposal).to_have_text(re.compile("“安娜” is “Ana”"))

    page.get_by_role("button", name="New person").click()
    page.fill("input[name=personName]", "Tom")
    page.fill("input[name=personAliases]", "Tommy, 汤姆")
    page.fill("input[name=personRelation]", "colleague")
    page.click("#person-form button[type=submit]")
    expect(page.locator(".toast-ok", has_text="Saved")).to_be_visible()
    expect(people).to_have_count(3)
    tom = page.locator("#people-list .person", has_text="Tom")
    expect(tom.locator(".chip-alias")).to_have_text(["Tommy", "汤姆"])
    expect(tom.locator(".familiarity-value")).to_have_text("0%")

    tom.locator("[data-person-action=edit]").click()
    page.fill("input[name=personAliases]", "Tommy")
    page.fill("textarea[name=personNotes]", "Sits by the window")
    page.click("#person-form button[type=submit]")
    expect(tom.locator(".chip-alias")).to_have_text(["Tommy"])
    expect(tom).to_contain_text("Sits by the window")
    panel.shoot("flow-people")

    proposal.locator("[data-proposal-action=approve]").click()
    expect(page.locator(".toast-ok", has_text="Approved")).to_be_visible()
    expect(proposal).to_have_count(0)
    expect(people).to_have_count(2)
    merged = page.locator(f"#people-list .person[data-id='{ana}']")
    expect(merged.locator(".chip-alias")).to_have_text(["安娜", "我姐姐"])
    expect(merged).to_contain_text("1 memory")
    assert rest.get(f"/v1/people/{sister}")["person"]["merged_into"] == ana

    # On the star map a person is a star of their own kind, with a line to the memory about them.
    page = panel.go("starmap")
    expect(page.locator("#starmap .map-person")).to_have_count(2)
    expect(page.locator("#starmap .map-edge.about")).to_have_count(1)
    expect(page.locator("#map-status")).to_have_text("1 memory · 0 relations · 2 people")
    page.locator(f"#starmap .map-person[data-id='{ana}']").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"#/more/people$"))


def test_a_nights_consolidation_is_undone_from_the_memory_history(panel: Panel, rest: Rest, server: LiveServer) -> None:
    memory_id = rest.remember("nickname", "以后不要叫我小名", importance=0.3)
    # No route starts the nightly job, so the pass runs here (in a thread: Playwright holds this loop).
    night = threading.Thread(target=lambda: asyncio.run(server.runtime.consolidation.run()))
    night.start()
    night.join()
    assert rest.get(f"/v1/memories/{memory_id}")["memory"]["importance"] == 0.8
    panel.sign_in()
    page = panel.go("memories")
    page.locator("#memory-list .memory-item", has_text="以后不要叫我小名").click()
    events = page.locator(".sheet #memory-events")
    expect(events).to_contain_text("consolidation_strengthened (a standing rule or promise")
    events.get_by_role("button", name="Undo").click()
    expect(page.locator(".toast-ok", has_text="Undone")).to_be_visible()
    expect(events).to_contain_text("consolidation_undone")
    expect(events.get_by_role("button", name="Undo")).to_have_count(0)
    memory = rest.get(f"/v1/memories/{memory_id}")["memory"]
    assert (memory["importance"], memory["type"]) == (0.3, "note")


def test_memories_are_paginated_and_filtered_by_type(panel: Panel, rest: Rest) -> None:
    for n in range(23):
        rest.remember(f"fact.{n}", f"Numbered fact {n:02d}", type="fact")
    rest.remember("habit.run", "Runs before breakfast", type="habit")
    panel.sign_in()
    page = panel.go("memories")
    items = page.locator("#memory-list .memory-item")
    expect(items).to_have_count(20)
    page.get_by_role("button", name="Older").click()
    expect(page.locator("#page-number")).to_have_text("Page 2")
    expect(items).to_have_count(4)
    page.locator("button.chip[data-type=habit]").click()
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Runs before breakfast")


def test_layers_show_with_their_reason_and_a_cold_memory_is_brought_back(panel: Panel, rest: Rest) -> None:
    rest.remember("user.name", "Her name is Mei", type="identity")
    rest.remember("user.lamp", "The study lamp is brass", layer="cold")
    panel.sign_in()
    page = panel.go("memories")
    items = page.locator("#memory-list .memory-item")
    expect(items.filter(has_text="Her name is Mei").locator(".chip-layer")).to_have_text("permanent")
    page.select_option("select[name=layer]", "cold")
    expect(items).to_have_count(1)
    items.first.click()
    sheet = page.locator(".sheet")
    expect(sheet.locator("#memory-layer")).to_contain_text("cold: written as cold by")
    panel.shoot("flow-memory-layer")
    sheet.get_by_role("button", name="Bring back").click()
    expect(sheet.locator(".chip-layer")).to_have_text("long")
    expect(sheet.locator("#memory-layer")).to_contain_text("long: moved to long by")
    assert [m["layer"] for m in rest.memories() if m["fact_key"] == "user.lamp"] == ["long"]


def test_script_and_img_memories_show_as_text_and_run_nothing(panel: Panel, rest: Rest) -> None:
    img = rest.remember("xss.img", f"{XSS_IMG} an image tag")
    script = rest.remember("xss.script", f"{XSS_SCRIPT} a script tag")
    rest.post(f"/v1/memories/{img}/relations", {"target_id": script, "relation": "supports"})
    rest.post("/v1/precious", {"content": f"{XSS_IMG} precious"})
    rest.post("/v1/glossary", {"term": "<b>bold</b>", "aliases": [XSS_IMG], "definition": XSS_SCRIPT})
    rest.say(f"remember that {XSS_MESSAGE} is how the test writes tags")
    rest.post("/v1/dream/run", {"date": rest.get("/v1/memory_boot")["date"]})

    panel.sign_in()
    page = panel.page
    expect(page.locator("#today-messages")).to_contain_text(f"remember that {XSS_MESSAGE} is how the test writes tags")
    panel.go("memories")
    expect(page.locator("#memory-list")).to_contain_text(f"{XSS_IMG} an image tag")
    expect(page.locator("#memory-list")).to_contain_text(f"{XSS_SCRIPT} a script tag")
    page.locator("#memory-list .memory-item", has_text="an image tag").click()
    expect(page.locator("#memory-content")).to_have_text(f"{XSS_IMG} an image tag")
    page.keyboard.press("Escape")
    panel.go("review")
    expect(page.locator("article.candidate .candidate-content")).to_have_text(
        f"{XSS_MESSAGE} is how the test writes tags"
    )
    expect(page.locator("article.candidate .candidate-quote")).to_have_text(
        f"remember that {XSS_MESSAGE} is how the test writes tags"
    )
    panel.go("more/precious")
    expect(page.locator("#precious-list")).to_contain_text(f"{XSS_IMG} precious")
    panel.go("more/glossary")
    expect(page.locator("#glossary-list")).to_contain_text("<b>bold</b>")
    expect(page.locator("#glossary-list")).to_contain_text(XSS_SCRIPT)
    panel.go("starmap")
    expect(page.locator("#starmap .map-node")).to_have_count(2)
    expect(page.locator("#starmap")).to_contain_text("<img src=x")

    assert page.evaluate("window.__xss") is None
    assert page.locator("main img").count() == 0 and page.locator("main script, main b").count() == 0


def test_reindex_shows_progress_until_done(panel: Panel, rest: Rest) -> None:
    for n in range(45):
        rest.remember(f"note.{n}", f"Reindex test memory number {n}", type="note")
    panel.sign_in()
    page = panel.go("more/maintenance")
    expect(page.locator("#vector-status")).to_be_visible()
    page.evaluate("""() => {
        window.__progress = [];
        const bar = document.getElementById('reindex-progress');
        new MutationObserver(() => window.__progress.push(Number(bar.getAttribute('aria-valuenow'))))
            .observe(bar, { attributes: true, attributeFilter: ['aria-valuenow'] });
    }""")
    page.click("#reindex-start")
    expect(page.locator("#reindex-label")).to_have_text("Done: 45 memories indexed.", timeout=60_000)
    expect(page.locator("#reindex-progress")).to_have_attribute("aria-valuenow", "100")
    expect(page.locator("#reindex-progress")).to_have_attribute("data-done", "true")
    seen = page.evaluate("window.__progress")
    assert seen[-1] == 100 and any(0 < value < 100 for value in seen), seen
    # The bar starts from empty and only ever moves forward.
    assert seen[0] == 0 and seen == sorted(seen), seen
    health = rest.get("/v1/debug/vector_health")
    assert health["indexed_vectors"] == 45 and health["missing_from_index"] == 0
    panel.shoot("flow-reindex-done")


def test_the_star_map_draws_memories_and_relations_and_opens_one(panel: Panel, rest: Rest) -> None:
    lena = rest.remember("friend.lena", "Lena is her closest friend", type="relationship", importance=0.9)
    kyoto = rest.remember("trip.kyoto", "Went to Kyoto with Lena in April", type="event")
    tea = rest.remember("drink.tea", "Drinks jasmine tea", type="preference")
    rest.post(f"/v1/memories/{lena}/relations", {"target_id": kyoto, "relation": "same_thread"})
    rest.post(f"/v1/memories/{tea}/relations", {"target_id": kyoto, "relation": "contradicts", "weight": 0.5})
    panel.sign_in()
    page = panel.go("memories")
    page.get_by_role("link", name="Star map").click()
    nodes = page.locator("#starmap .map-node")
    expect(nodes).to_have_count(3)
    expect(page.locator("#starmap .map-edge")).to_have_count(2)
    expect(page.locator("#starmap .map-edge.contradicts")).to_have_count(1)
    assert page.locator(f"#starmap .map-node[data-id='{lena}']").get_attribute("fill") != page.locator(
        f"#starmap .map-node[data-id='{tea}']"
    ).get_attribute("fill")
    expect(page.locator("#map-status")).to_have_text("3 memories · 2 relations")
    panel.shoot("flow-starmap-relations")

    page.fill("#map-search", "kyoto")
    expect(page.locator("#map-status")).to_contain_text("1 match")
    expect(page.locator(f"#starmap .map-node[data-id='{kyoto}']")).to_have_class(re.compile(r"\bmatch\b"))
    expect(page.locator(f"#starmap .map-node[data-id='{tea}']")).to_have_class(re.compile(r"\bdim\b"))
    page.fill("#map-search", "")
    page.locator(".map-filter[data-type=preference]").click()
    expect(page.locator(f"#starmap .map-node[data-id='{tea}']")).to_be_hidden()
    expect(page.locator("#map-status")).to_contain_text("2 memories")

    transform = page.locator("#starmap > g").get_attribute("transform")
    page.get_by_role("button", name="Zoom in").click()
    assert page.locator("#starmap > g").get_attribute("transform") != transform
    box = page.locator("#starmap").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 60, box["y"] + box["height"] - 80)
    page.mouse.down()
    page.mouse.move(box["x"] + 120, box["y"] + box["height"] - 60, steps=5)
    page.mouse.up()
    page.get_by_role("button", name="Fit to screen").click()

    page.locator(f"#starmap .map-node[data-id='{lena}']").click()
    expect(page.locator(".sheet #memory-content")).to_have_text("Lena is her closest friend")


def test_a_refused_key_goes_back_to_settings_with_a_message(panel: Panel) -> None:
    panel.sign_in()
    page = panel.page
    page.evaluate("""() => {
        const saved = JSON.parse(localStorage.getItem('companion-memory.admin'));
        localStorage.setItem('companion-memory.admin', JSON.stringify({ ...saved, apiKey: 'revoked-key' }));
    }""")
    panel.go("memories")
    expect(page).to_have_url(re.compile(r"#/settings\?reason=unauthorized$"))
    expect(page.locator("#settings-reason")).to_have_text(
        "The server refused the API key (401 Unauthorized). Check the key below and save it again."
    )
    expect(page.locator(".tab[data-tab=settings]")).to_have_attribute("aria-current", "page")


def test_every_tab_at_phone_and_desktop_size_in_both_languages_and_themes(panel: Panel, rest: Rest) -> None:
    """Screenshots of every tab (and the star map) in Chinese and English, light and dark,
    served under /memory-admin/ too; on each, no text outside the catalogs and no serious
    accessibility finding (axe-core: names, contrast, roles)."""
    seed_chinese(rest)
    rest.remember("pet.dog", "Walks the neighbour's dog Biscuit on Sundays", type="habit", importance=0.5)
    rest.say("Always book the window seat for me.")

    panel.sign_in()
    page = panel.page
    # Every page's findings, reported together.
    problems: list[tuple[str, str, str, str]] = []
    for language, theme in [("zh-CN", "light"), ("zh-CN", "dark"), ("en", "light"), ("en", "dark")]:
        panel.go("settings")
        page.locator(f"#language .segment[data-value={language}]").click()
        expect(page.locator("html")).to_have_attribute("lang", language)
        page.locator(f".segment[data-value={theme}]").click()
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == ("rgb(246, 247, 251)" if theme == "light" else "rgb(15, 17, 23)")
        for route, name, ready in [
            ("today", "today", "#today-messages"),
            ("review", "review", "article.candidate"),
            ("memories", "memories", ".memory-item"),
            ("conversations", "conversations", "#conversation-list > :not(.loading)"),
            ("more/people", "more-people", "#people-proposals .proposal"),
            ("more/precious", "more", "#precious-list .item"),
            ("more/diary", "more-diary", "#diary-list .diary-entry"),
            ("more/maintenance", "more-maintenance", "#vector-status"),
            ("more/import", "more-import", "#import-list > li"),
            ("settings", "settings", "input[name=apiKey]"),
            ("starmap", "starmap", "#starmap .map-node"),
        ]:
            panel.page.goto(f"{panel.base_url}/memory-admin/#/{route}")
            expect(page.locator(ready).first).to_be_visible()
            panel.settle()
            tabs = page.locator("#tabs")
            box = tabs.bounding_box()
            assert box is not None
            if panel.viewport == "phone":  # a bottom tab bar
                assert box["y"] + box["height"] == pytest.approx(844, abs=2) and box["width"] == pytest.approx(
                    390, abs=2
                )
            else:  # a side rail
                assert box["x"] == 0 and box["height"] == pytest.approx(800, abs=2) and box["width"] < 300
            panel.shoot(f"{language}-{theme}-{name}")
            found = panel.untranslated() + panel.accessibility_violations()
            problems += [(language, theme, route, problem) for problem in found]
    assert problems == [], "\n".join(" / ".join(p) for p in problems)
    # "System" follows the device, also when it changes while the panel is open.
    panel.go("settings")
    page.emulate_media(color_scheme="dark")
    page.locator(".segment[data-value=system]").click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.emulate_media(color_scheme="light")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")


def test_export_downloads_json_and_import_loads_it_back(panel: Panel, rest: Rest, tmp_path: Path) -> None:
    rest.remember("drink.tea", "Drinks jasmine tea", type="preference")
    panel.sign_in()
    page = panel.go("more/maintenance")
    with page.expect_download() as download:
        page.click("#export")
    saved = tmp_path / "export.json"
    download.value.save_as(saved)
    document = json.loads(saved.read_text())
    assert [m["content"] for m in document["memories"]] == ["Drinks jasmine tea"]
    expect(page.locator("#backup-status")).to_have_text("Export downloaded.")

    document["memories"][0]["content"] = "Drinks jasmine tea, no sugar"
    saved.write_text(json.dumps(document))
    page.locator("#backup input[type=file]").set_input_files(str(saved))
    expect(page.locator("#backup-status")).to_contain_text("Imported export.json")
    assert [m["content"] for m in rest.memories()] == ["Drinks jasmine tea, no sugar"]


def test_the_health_card_reports_repairs_and_lists_messages_no_memory_cites(
    panel: Panel, rest: Rest, tmp_path: Path
) -> None:
    rest.remember("drink.tea", "Drinks jasmine tea", type="preference")
    rest.remember("drink.tea.again", "drinks jasmine tea", type="preference")
    rest.remember("trip.sea", "Trip to the sea", type="plan", valid_to="2020-01-01")
    long_ago = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    rest.post("/v1/ingest/messages", {"messages": [{"role": "user", "content": XSS_MESSAGE, "created_at": long_ago}]})
    panel.sign_in()
    page = panel.go("more/maintenance")
    expect(page.locator("#health-status")).to_have_text("0 checks failed, 2 checks to look at.")
    expect(page.locator(".check[data-check=duplicates]")).to_have_attribute("data-status", "warn")
    expect(page.locator(".check[data-check=expired_plans] .chip-check")).to_have_text("warn")
    expect(page.locator("#unanchored-list .item")).to_have_count(1)
    expect(page.locator("#unanchored-list .item .content")).to_have_text(XSS_MESSAGE)
    panel.shoot("flow-health-report")

    page.click("#health-repair")
    expect(page.locator("#repair-backup")).to_contain_text(str(tmp_path / "data" / "backups"))
    expect(page.locator("#repair-status")).to_contain_text("1 plans past their end marked expired")
    expect(page.locator(".check[data-check=expired_plans]")).to_have_attribute("data-status", "ok")
    expect(page.locator("#health-status")).to_have_text("0 checks failed, 1 check to look at.")
    assert page.evaluate("window.__xss") is None


def test_the_star_map_downloads_as_svg_and_mermaid(panel: Panel, rest: Rest, tmp_path: Path) -> None:
    lena = rest.remember("friend.lena", XSS_SCRIPT, type="relationship")
    kyoto = rest.remember("trip.kyoto", "Went to Kyoto with Lena in April", type="event")
    rest.post(f"/v1/memories/{lena}/relations", {"target_id": kyoto, "relation": "same_thread"})
    panel.sign_in()
    page = panel.go("starmap")
    expect(page.locator("#starmap .map-node")).to_have_count(2)
    for format_, suffix, says in [("svg", ".svg", "<svg"), ("mermaid", ".mmd", "flowchart LR")]:
        with page.expect_download() as download:
            page.click(f"#map-download-{format_}")
        saved = tmp_path / f"map{suffix}"
        download.value.save_as(saved)
        assert download.value.suggested_filename.endswith(suffix)
        text = saved.read_text(encoding="utf-8")
        assert says in text and "<script" not in text


def seed_chinese(rest: Rest) -> None:
    """What a Chinese-speaking owner's panel holds: memories, precious words, a glossary term,
    a todo, two names for her sister waiting to be merged, and a day's messages dreamt into a diary entry and review candidates."""
    tea = rest.remember("drink.tea", "下午喜欢喝茉莉花茶，不加糖", type="preference", importance=0.8)
    cat = rest.remember("pet.cat", "养了一只叫年糕的灰猫，最怕吸尘器", type="fact", importance=0.6)
    rest.remember("boundary.diet", "不要提减肥和体重", type="boundary", importance=1.0)
    rest.remember("name", "她叫小梅，在新加坡做产品设计", type="identity", pinned=True, importance=1.0)
    rest.remember("plan.sea", "周末去看海", type="plan", valid_to="2099-06-01")
    rest.post(f"/v1/memories/{tea}/relations", {"target_id": cat, "relation": "same_thread"})
    rest.post("/v1/precious", {"content": "你不必完美，也值得被爱。", "note": "丽娜说的"})
    rest.post("/v1/glossary", {"term": "奶茶", "aliases": ["珍奶"], "definition": "珍珠奶茶，她周五的小奖励"})
    rest.post("/v1/todos", {"text": "整理星图的标签", "priority": 4})
    sister = rest.post(
        "/v1/people", {"name": "小雨", "aliases": ["我妹妹"], "relation": "妹妹", "notes": "生日三月十二日"}
    )
    other = rest.post("/v1/people", {"name": "雨雨", "aliases": ["小妹"]})
    rest.post(
        "/v1/person_proposals",
        {"person_id": sister["person"]["id"], "other_id": other["person"]["id"], "reason": "都是妹妹"},
    )
    rest.say("请记住我妹妹的生日是三月十二日。", "以后不要叫我小名。", "今天加班到很晚，我好累")
    rest.post("/v1/dream/run", {"date": rest.get("/v1/memory_boot")["date"]})


def walk_every_tab_and_dialog(panel: Panel) -> None:
    """Every tab, section and dialog, each checked for text that is not in the current
    language's catalog (Panel.untranslated), and the dialogs for accessibility findings
    (the tabs get theirs in every theme and size in the screenshots' test)."""
    page = panel.page

    def check(where: str, *, dialog: bool = True) -> None:
        panel.settle()
        assert panel.untranslated() == [], where
        if dialog:
            assert panel.accessibility_violations() == [], where

    for route, ready in [
        ("today", "#today-messages"),
        ("review", "article.candidate"),
        ("memories", ".memory-item"),
        ("starmap", "#starmap .map-node"),
        ("conversations", "#conversation-list > :not(.loading)"),
        ("more/people", "#people-proposals .proposal"),
        ("more/precious", "#precious-list .item"),
        ("more/glossary", "#glossary-list .item"),
        ("more/diary", "#diary-list .diary-entry"),
        ("more/maintenance", "#vector-status"),
        ("more/import", "#import-list > li"),
        ("settings", "input[name=apiKey]"),
    ]:
        panel.go(route)
        expect(page.locator(ready).first).to_be_visible()
        check(route, dialog=False)

    panel.go("review")
    page.locator("article.candidate [data-action=merge]").first.click()  # no target yet: pick one
    expect(page.locator(".sheet .list > *").first).to_be_visible()
    check("review: choose a memory to merge into")
    page.keyboard.press("Escape")
    for status in ("approved", "discarded"):
        page.locator(f".segment[data-value={status}]").click()
        check(f"review: {status}", dialog=False)

    panel.go("memories")
    page.locator(".page-head .button-primary").click()
    expect(page.locator(".sheet textarea[name=content]")).to_be_focused()
    check("new memory")
    page.locator(".sheet select[name=type]").select_option("plan")
    check("new plan")
    page.keyboard.press("Escape")
    page.locator(".memory-item", has_text="茉莉花茶").click()
    expect(page.locator("#memory-id")).to_be_visible()
    check("a memory's sheet")
    page.locator(".sheet [data-action=supersede]").click()
    expect(page.locator(".sheet textarea[name=content]")).to_be_visible()
    check("a memory's new version")
    page.keyboard.press("Escape")
    page.locator(".memory-item", has_text="茉莉花茶").click()
    page.locator(".sheet [data-action=share]").click()
    expect(page.locator(".sheet input[name=target]")).to_be_visible()
    check("share a memory")
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    expect(page.locator(".sheet")).to_have_count(0)

    panel.go("more/people")
    page.locator("#people-list .person", has_text="小雨").locator("[data-person-action=edit]").click()
    expect(page.locator(".sheet input[name=personName]")).to_have_value("小雨")
    check("edit a person")
    page.keyboard.press("Escape")
    page.click("#new-person")
    expect(page.locator(".sheet input[name=personName]")).to_be_focused()
    check("a new person")
    page.keyboard.press("Escape")

    panel.go("more/glossary")
    page.locator("#glossary-list .button").first.click()
    expect(page.locator(".sheet input[name=term]")).to_have_value("奶茶")
    check("edit a glossary term")
    page.keyboard.press("Escape")
    panel.go("more/diary")
    for period in ("week", "month"):
        page.locator(f".segment[data-value={period}]").click()
        check(f"diary by {period}", dialog=False)
    panel.go("more/maintenance")
    page.click("#dream-dry-run")
    expect(page.locator("#dream-report .notice")).to_be_visible()
    check("a dry run's report")


SAME_KEYS = """async () => {
  const { CATALOGS } = await import(new URL("js/i18n.js", location.href));
  const plural = (v) => Object.keys(v).every((k) => ["zero", "one", "two", "few", "many", "other"].includes(k)) && "other" in v;
  const keys = (o, p = "") => Object.entries(o).flatMap(([k, v]) => (typeof v === "object" && !plural(v) ? keys(v, `${p}${k}.`) : [`${p}${k}`]));
  const [zh, en] = [new Set(keys(CATALOGS["zh-CN"])), new Set(keys(CATALOGS.en))];
  return [...[...zh].filter((k) => !en.has(k)).map((k) => `only zh-CN: ${k}`), ...[...en].filter((k) => !zh.has(k)).map((k) => `only en: ${k}`)];
}"""


def test_chinese_follows_the_browser_every_word_is_in_the_catalogs_and_the_choice_is_remembered(
    browser: Browser, server: LiveServer, rest: Rest
) -> None:
    seed_chinese(rest)
    panel = Panel(browser, server.url, "phone", locale="zh-CN")
    try:
        page = panel.open()
        expect(page.locator("#settings-reason")).to_contain_text("请输入服务器首次启动时打印的 API 密钥")
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        page.fill("input[name=apiKey]", OWNER_KEY)
        page.get_by_role("button", name="保存并连接").click()
        expect(page.locator(".page[data-page=today] h1")).to_have_text("今天")
        expect(page.locator(".tab[data-tab=review]")).to_contain_text("审核")
        expect(page.locator("#counts-by-type")).to_contain_text("偏好")
        expect(page.locator("#today-messages")).to_contain_text("我好累")
        sister = page.locator("#familiar-people .person-row", has_text="小雨")
        expect(sister).to_contain_text("妹妹")
        expect(sister.locator(".chip-familiarity")).to_have_text("生疏")
        panel.pass_time(TOAST_MS)
        walk_every_tab_and_dialog(panel)
        assert page.evaluate(SAME_KEYS) == []

        # English, chosen in Settings, stays chosen after a reload...
        panel.go("settings")
        page.get_by_role("tab", name="English").click()
        expect(page.locator(".tab[data-tab=today]")).to_contain_text("Today")
        expect(page.locator(".page h1")).to_have_text("Settings")
        page.reload()
        expect(page.locator(".tab[data-tab=memories]")).to_contain_text("Memories")
        assert page.evaluate("document.documentElement.lang") == "en"
        walk_every_tab_and_dialog(panel)
        # ...until the browser's language is followed again.
        panel.go("settings")
        page.get_by_role("tab", name="As the browser").click()
        expect(page.locator(".tab[data-tab=memories]")).to_contain_text("记忆")
    finally:
        panel.close()
    assert panel.errors == [], panel.errors


def test_times_are_in_the_dreams_zone_with_numbers_plurals_and_relative_times_in_each_language(
    browser: Browser, server: LiveServer
) -> None:
    # The browser is in New York; the server dreams in Singapore (the default DREAM_TIME_ZONE).
    zone = httpx.get(f"{server.url}/health").json()["time_zone"]
    assert zone == "Asia/Singapore"
    for locale, expected in [
        (
            "zh-CN",
            {"at": "2026年1月1日 08:00", "ago": "3分钟前", "one": "1 条记忆", "many": "2 条记忆", "big": "12,345.5"},
        ),
        (
            "en-US",
            {
                "at": "Jan 1, 2026, 08:00 AM",
                "ago": "3 min. ago",
                "one": "1 memory",
                "many": "2 memories",
                "big": "12,345.5",
            },
        ),
    ]:
        panel = Panel(browser, server.url, "desktop", locale=locale, timezone_id="America/New_York")
        try:
            panel.sign_in_quietly()
            page = panel.page
            expect(page.locator(".page-head .subtitle")).to_contain_text(zone)
            shown = page.evaluate(
                """async () => {
                  const i18n = await import(new URL("js/i18n.js", location.href));
                  return {
                    zone: i18n.currentTimeZone(),
                    at: i18n.dateTime("2026-01-01T00:00:00Z"),
                    ago: i18n.ago(new Date(Date.now() - 3 * 60 * 1000)),
                    one: i18n.t("starmap.memories", { count: 1 }),
                    many: i18n.t("starmap.memories", { count: 2 }),
                    big: i18n.num(12345.5),
                  };
                }"""
            )
            assert shown == {"zone": zone, **expected}
        finally:
            panel.close()
        assert panel.errors == [], panel.errors


def test_the_panel_is_installable_and_its_service_worker_never_answers_the_api(
    browser: Browser, server: LiveServer, rest: Rest, tmp_path: Path
) -> None:
    rest.remember("drink.tea", "下午喜欢喝茉莉花茶", type="preference")
    panel = Panel(browser, server.url, "phone", locale="zh-CN", profile=tmp_path / "profile")
    try:
        panel.sign_in_quietly()
        page = panel.page
        assert page.evaluate("navigator.serviceWorker.ready.then((r) => r.active.state)") in ("activating", "activated")
        cdp = panel.context.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["errors"] == [], manifest["errors"]
        assert manifest["url"] == f"{server.url}/admin/manifest.webmanifest"
        parsed = json.loads(manifest["data"])
        assert parsed["display"] == "standalone"
        assert {icon["sizes"] for icon in parsed["icons"] if icon["type"] == "image/png"} == {"192x192", "512x512"}
        assert any(icon["purpose"] == "maskable" for icon in parsed["icons"])
        assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
        for icon in parsed["icons"]:
            answer = httpx.get(f"{server.url}/admin/{icon['src']}")
            assert answer.status_code == 200 and answer.headers["content-type"].startswith(icon["type"]), icon
        # The bar around the installed panel is the page's background: the device's theme, or the one chosen.
        colours = 'meta[name="theme-color"]', "metas => metas.map((m) => m.content)"
        assert page.eval_on_selector_all(*colours) == ["#f6f7fb", "#0f1117"]
        panel.go("settings")
        page.locator(".segment[data-value=dark]").click()
        assert page.eval_on_selector_all(*colours) == ["#0f1117", "#0f1117"]

        # With the worker running, every API answer still comes from the server.
        answers: list[Response] = []
        page.on("response", lambda answer: answers.append(answer))
        page.reload()
        panel.go("memories")
        expect(page.locator(".memory-item")).to_have_count(1)
        api = [a for a in answers if "/v1/" in a.url]
        assert api and not any(a.from_service_worker for a in api)
        # A phone with a notch: the tab bar stays above the home indicator, the page below the notch.
        cdp.send("Emulation.setSafeAreaInsetsOverride", {"insets": {"top": 47, "bottom": 34, "left": 0, "right": 0}})
        assert page.evaluate("getComputedStyle(document.getElementById('tabs')).paddingBottom") == "34px"
        assert page.evaluate("getComputedStyle(document.getElementById('main')).paddingTop") == "65px"

        # Offline: the worker's small page, in the panel's language, instead of the browser's error.
        panel.context.set_offline(True)
        page.reload()
        expect(page.locator(".offline h1")).to_have_text("离线")
        panel.context.set_offline(False)
        page.locator(".offline a").click()
        expect(page.locator(".page[data-page=today] h1")).to_have_text("今天")
    finally:
        panel.close()
    assert [e for e in panel.errors if "ERR_INTERNET_DISCONNECTED" not in e] == [], panel.errors


def test_the_tab_bar_and_sheets_work_by_keyboard(panel: Panel, rest: Rest) -> None:
    rest.remember("drink.tea", "Drinks jasmine tea", type="preference")
    panel.sign_in()
    page = panel.page
    page.locator(".tab[data-tab=today]").focus()
    for tab in ("review", "memories"):
        page.keyboard.press("Tab")
        expect(page.locator(f".tab[data-tab={tab}]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".tab[data-tab=memories]")).to_have_attribute("aria-current", "page")
    expect(page.locator(".memory-item")).to_have_count(1)
    # On into the page: past the tabs after Memories, the first control is the page's own.
    for _ in range(page.locator(".tab").count() - 3 + 1):
        page.keyboard.press("Tab")
    assert page.evaluate("document.getElementById('main').contains(document.activeElement)")

    opener = page.get_by_role("button", name="New memory")
    opener.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".sheet textarea[name=content]")).to_be_focused()
    for _ in range(12):  # round and round: focus never leaves the sheet
        page.keyboard.press("Tab")
        assert page.evaluate("document.querySelector('.sheet').contains(document.activeElement)")
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.querySelector('.sheet').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(page.locator(".sheet")).to_have_count(0)
    expect(opener).to_be_focused()


def test_the_memory_sheet_copies_its_id_and_dates_and_toasts_leave_the_zoom_buttons_free(
    panel: Panel, rest: Rest
) -> None:
    memory = rest.remember("drink.tea", "Drinks jasmine tea", type="preference")
    panel.context.grant_permissions(["clipboard-read", "clipboard-write"])
    panel.sign_in()
    page = panel.go("memories")
    page.locator(".memory-item").click()
    expect(page.locator("#memory-id")).to_contain_text(memory)
    page.locator("#memory-id .copy-button").click()
    expect(page.locator(".toast-ok", has_text="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == memory
    created = rest.get(f"/v1/memories/{memory}")["memory"]["created_at"]
    page.locator("#memory-created .copy-button").click()
    assert page.evaluate("navigator.clipboard.readText()") == created
    # Selecting the id by dragging out of the sheet leaves the sheet open.
    box = page.locator("#memory-id .mono").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(2, 2)
    page.mouse.up()
    expect(page.locator(".sheet")).to_be_visible()
    assert memory in page.evaluate("String(getSelection())")
    page.keyboard.press("Escape")

    panel.go("starmap")
    expect(page.locator("#starmap .map-node")).to_have_count(1)
    panel.pass_time(TOAST_MS)
    page.evaluate(
        "import(new URL('js/ui.js', location.href)).then((ui) => ui.toast('Connected. Your key is saved in this browser.'))"
    )
    toast = page.locator(".toast").bounding_box()
    assert toast is not None
    for button in page.locator(".map-zoom .icon-button").all():
        zoom = button.bounding_box()
        assert zoom is not None
        apart = (
            toast["x"] + toast["width"] <= zoom["x"]
            or zoom["x"] + zoom["width"] <= toast["x"]
            or toast["y"] + toast["height"] <= zoom["y"]
            or zoom["y"] + zoom["height"] <= toast["y"]
        )
        assert apart, (toast, zoom)
        button.click()  # and it can be pressed while the toast shows
