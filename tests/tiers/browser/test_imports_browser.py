"""More → Import history in headless Chromium against the real local server (its task
queue running, so an import goes on by itself as it does for a user), at a phone and a
desktop size: a ChatGPT export through the picker and its summary, the same file again
stored as duplicates, a broken file's error, a file of several parts (going on after a
lost answer and after a conflict), a dry run from a day on, and the page in Chinese with
every word from the catalogs.

Screenshots go to test-artifacts/screenshots/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.history_files import write_jsonl
from playwright.sync_api import Browser, Page, Route, expect

from companion_memory.memory.history_imports import PART_BYTES
from tests.admin_browser import Panel, Rest
from tests.live_server import LiveServer

IMPORTS = Path(__file__).resolve().parents[2] / "data" / "imports"
CHATGPT = IMPORTS / "chatgpt" / "conversations.json"
EXPECTED = json.loads((IMPORTS / "chatgpt" / "expected.json").read_text(encoding="utf-8"))["summary"]


def import_file(page: Page, path: Path) -> None:
    page.locator("#import-file").set_input_files(str(path))
    expect(page.locator("#import-chosen")).to_contain_text(path.name)
    page.click("#import-start")


def counts(page: Page) -> dict[str, str]:
    shown: dict[str, str] = page.eval_on_selector_all(
        "#import-summary [data-count]",
        "spans => Object.fromEntries(spans.map((s) => [s.dataset.count, s.textContent]))",
    )
    return shown


def job_shown(page: Page, status: str) -> str:
    """The import the page follows, once it reaches ``status``: its id."""
    card = page.locator(f"#import-job[data-status={status}]")
    expect(card).to_be_visible(timeout=60_000)
    return str(card.get_attribute("data-id"))


def test_a_chatgpt_export_imports_through_the_picker_and_again_stores_only_duplicates(panel: Panel, rest: Rest) -> None:
    panel.sign_in()
    page = panel.go("more/import")
    expect(page.locator("#import-list")).to_contain_text("No imports yet.")
    import_file(page, CHATGPT)
    first = job_shown(page, "done")
    expect(page.locator("#import-upload-progress")).to_have_attribute("aria-valuenow", "100")
    expect(page.locator("#import-progress")).to_have_attribute("aria-valuenow", "100")
    expect(page.locator("#import-line")).to_have_text(f"Done: {EXPECTED['messages']} messages stored.")
    assert counts(page) == {
        "conversations": str(EXPECTED["conversations"]),
        "messages": str(EXPECTED["messages"]),
        "stored": str(EXPECTED["messages"]),
        "duplicates": "0",
        "skipped": str(EXPECTED["skipped"]),
    }
    expect(page.locator("#import-summary")).to_contain_text("ChatGPT export")
    expect(page.locator("#import-summary")).to_contain_text("7 (other branches 1, system 2, tool 2, reasoning 2)")
    expect(page.locator("#import-dates")).to_contain_text("2025")
    # The page keeps asking until every imported episode is embedded.
    expect(page.locator("#import-embedding")).to_have_text(
        "Every episode is embedded: the history is found by its words and by its meaning."
    )
    job: dict[str, Any] = rest.get(f"/v1/imports/{first}")
    assert job["stored"] == EXPECTED["messages"] and job["embedding_left"] == 0
    panel.shoot("import-done")

    import_file(page, CHATGPT)
    expect(page.locator(f"#import-job:not([data-id='{first}'])[data-status=done]")).to_be_visible()
    expect(page.locator("#import-line")).to_have_text("Done: 0 messages stored.")
    assert counts(page)["stored"] == "0" and counts(page)["duplicates"] == str(EXPECTED["messages"])
    items = page.locator("#import-list .import-item")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text(f"{EXPECTED['messages']} messages · 0 stored · 10 already there")

    # A reload shows the newest import; the one before opens from the list.
    page.reload()
    expect(page.locator("#import-job[data-status=done]")).not_to_have_attribute("data-id", first)
    page.locator(f"#import-list .import-item[data-id='{first}']").click()
    expect(page.locator("#import-job")).to_have_attribute("data-id", first)
    assert counts(page)["stored"] == str(EXPECTED["messages"])


def test_a_broken_file_fails_with_the_error_naming_it_and_stores_nothing(
    panel: Panel, rest: Rest, tmp_path: Path
) -> None:
    text = CHATGPT.read_bytes()
    broken = tmp_path / "cut-short.json"
    broken.write_bytes(text[: len(text) // 2])
    panel.sign_in()
    page = panel.go("more/import")
    import_file(page, broken)
    job = job_shown(page, "failed")
    answer = rest.get(f"/v1/imports/{job}")
    assert answer["error"].startswith("cut-short.json") and answer["stored"] == 0
    expect(page.locator("#import-error")).to_have_text(answer["error"])
    expect(page.locator("#import-line")).to_have_text("The import failed and stored nothing more:")
    expect(page.locator("#import-list .import-item[data-status=failed]")).to_have_count(1)
    panel.shoot("import-failed")


def test_a_file_bigger_than_a_part_goes_up_in_parts_and_a_reload_follows_it_again(panel: Panel, tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    write_jsonl(history, 8_000)
    size = history.stat().st_size
    assert size > 2 * PART_BYTES
    lines = len(history.read_text(encoding="utf-8").splitlines())
    panel.sign_in()
    page = panel.go("more/import")
    expect(page.locator("#import-list")).to_contain_text("No imports yet.")
    parts: list[str] = []
    page.on("request", lambda r: r.method == "PUT" and parts.append(r.url.rsplit("/", 1)[1]))
    page.evaluate("""() => {
        window.__upload = [];
        const bar = document.getElementById('import-upload-progress');
        new MutationObserver(() => window.__upload.push(Number(bar.getAttribute('aria-valuenow'))))
            .observe(bar, { attributes: true, attributeFilter: ['aria-valuenow'] });
    }""")
    page.locator("select[name=format]").select_option("jsonl")
    import_file(page, history)
    expect(page.locator("#import-upload-progress")).to_have_attribute("aria-valuenow", "100", timeout=60_000)
    assert parts == [str(start) for start in range(0, size, PART_BYTES)]
    seen = page.evaluate("window.__upload")
    assert seen[-1] == 100 and any(0 < value < 100 for value in seen) and seen == sorted(seen), seen

    # Left while the server reads and stores it, and opened again: the page follows it to the end.
    page.reload()
    job_shown(page, "done")
    expect(page.locator("#import-progress")).to_have_attribute("aria-valuenow", "100")
    shown = counts(page)
    assert shown["messages"] == f"{lines:,}" and shown["stored"] == f"{lines:,}", shown
    expect(page.locator("#import-summary")).to_contain_text("JSONL")


def test_the_import_page_in_chinese_every_word_from_the_catalogs(browser: Browser, server: LiveServer) -> None:
    panel = Panel(browser, server.url, "phone", locale="zh-CN")
    try:
        panel.sign_in_quietly()
        page = panel.go("more/import")
        expect(page.locator(".segment[aria-selected=true]")).to_have_text("导入聊天记录")
        expect(page.locator("#import-list")).to_contain_text("还没有导入过。")
        assert panel.untranslated() == [] and panel.accessibility_violations() == []
        import_file(page, CHATGPT)
        job_shown(page, "done")
        expect(page.locator("#import-line")).to_have_text("完成：已保存 10 条消息。")
        expect(page.locator("#import-embedding")).to_contain_text("所有片段都已生成向量")
        panel.settle()
        assert panel.untranslated() == [] and panel.accessibility_violations() == []
        panel.shoot("zh-import-done")
    finally:
        panel.close()
    assert panel.errors == [], panel.errors


def test_an_upload_goes_on_after_a_lost_answer_and_from_where_the_server_says_after_a_conflict(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    history = tmp_path / "history.jsonl"
    write_jsonl(history, 4_000)
    assert PART_BYTES < history.stat().st_size < 2 * PART_BYTES
    panel = Panel(browser, server.url, "desktop")
    try:
        panel.sign_in()
        page = panel.go("more/import")
        expect(page.locator("#import-list")).to_contain_text("No imports yet.")
        parts: list[str] = []
        answers = iter(["lost", "conflict"])

        def second_part(route: Route) -> None:
            start = route.request.url.rsplit("/", 1)[1]
            parts.append(start)
            if start == str(PART_BYTES) and (answer := next(answers, None)):
                if answer == "lost":
                    route.abort()
                else:  # the server holds less than the page thought: it says from where to go on
                    error = {"message": "part ahead of the upload", "code": "conflict", "details": {"received": 0}}
                    route.fulfill(status=409, json={"error": error})
                return
            route.continue_()

        page.route("**/v1/imports/*/parts/*", second_part)
        import_file(page, history)
        job_shown(page, "done")
        assert parts == ["0", str(PART_BYTES), str(PART_BYTES), "0", str(PART_BYTES)]
        expect(page.locator("#import-upload-progress")).to_have_attribute("aria-valuenow", "100")
        lines = len(history.read_text(encoding="utf-8").splitlines())
        assert counts(page)["stored"] == f"{lines:,}"
        expect(page.locator("#import-problem")).to_be_empty()
    finally:
        panel.close()
    assert panel.errors == [], panel.errors


def test_a_dry_run_from_a_day_on_counts_what_it_would_store_and_stores_nothing(
    browser: Browser, server: LiveServer
) -> None:
    panel = Panel(browser, server.url, "desktop")
    try:
        panel.sign_in()
        page = panel.go("more/import")
        # The first conversation was on 14 March 2025 (4 messages), the second on the 15th (6).
        page.fill("input[name=since]", "2025-03-15")
        page.check("input[name=dryRun]")
        import_file(page, CHATGPT)
        job_shown(page, "done")
        expect(page.locator("#import-line")).to_have_text(
            "Dry run done: 6 messages would be stored; nothing was written."
        )
        expect(page.locator("#import-summary")).to_contain_text("Would be stored")
        shown = counts(page)
        assert (shown["stored"], shown["outside"], shown["messages"]) == ("6", "4", "10"), shown
        expect(page.locator("#import-embedding")).to_be_hidden()

        # Nothing was written: the file imported for real stores every message.
        page.fill("input[name=since]", "")
        page.uncheck("input[name=dryRun]")
        import_file(page, CHATGPT)
        expect(page.locator("#import-line")).to_have_text("Done: 10 messages stored.")
    finally:
        panel.close()
    assert panel.errors == [], panel.errors
