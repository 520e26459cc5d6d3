"""Context assembly: the <memories> block in sections (what I remember, what we are doing,
impressions, shared) under CONTEXT_BUDGET_TOKENS, each with its own cap, and meta saying
what was cut; in a chat turn (recall with include_prompt, over REST and MCP) and in the
boot package."""

from __future__ import annotations

from typing import Any

import httpx

from companion_memory.gateway.context import SECTIONS, assemble
from companion_memory.runtime import Runtime
from companion_memory.store.dream import DreamStore
from tests.conftest import auth
from tests.memory.test_plans import tool, write_plan


def test_a_long_section_cannot_starve_the_others() -> None:
    long_impressions = [f"Impression {n}: " + "a long day at the harbour " * 8 for n in range(30)]
    block = assemble({"remember": ["1. [fact, 2026-11-30] Likes tea"], "impressions": long_impressions}, 300)
    assert "Likes tea" in block.text and "What I remember" in block.text
    impressions = block.sections["impressions"]
    assert impressions.kept >= 1 and impressions.cut == 30 - impressions.kept
    remember = block.sections["remember"]
    assert (remember.cap, remember.kept, remember.cut) == (135, 1, 0) and 0 < remember.tokens <= remember.cap
    # What the others left unused went to the impressions, and the whole stays in the budget.
    assert impressions.tokens > impressions.cap
    assert sum(s.tokens for s in block.sections.values()) <= 300
    assert [name for name, _, _ in SECTIONS] == list(block.sections)


def test_nothing_to_say_is_no_block() -> None:
    block = assemble({}, 1000)
    assert block.text == "" and all(s.kept == 0 for s in block.sections.values())


async def seed(client: httpx.AsyncClient, runtime: Runtime) -> dict[str, Any]:
    async def write(fact_key: str, content: str, **fields: Any) -> dict[str, Any]:
        body = {"fact_key": fact_key, "content": content, **fields}
        response = await client.post("/v1/memories", json=body, headers=auth())
        assert response.status_code == 201, response.text
        memory: dict[str, Any] = response.json()["memory"]
        return memory

    name = await write("user.name", "Her name is Mei", type="identity")
    tea = await write("user.tea", "Drinks jasmine tea every afternoon", type="preference")
    plan = await write_plan(client, "plan.sea", "周末去看海", valid_days=5)
    todo = {"text": "Sort the star map", "priority": 4, "due": "2026-12-02"}
    assert (await client.post("/v1/todos", json=todo, headers=auth())).status_code == 201
    bot = await write("bot.note", "Mei's cat is called Mochi", namespace="bot")
    share = await client.post(
        "/v1/shares", json={"memory_id": bot["id"], "target_namespace": "default"}, headers=auth()
    )
    assert (await client.post(f"/v1/shares/{share.json()['id']}/approve", headers=auth())).status_code == 200
    # Yesterday's diary (the test clock's today is 2026-11-30), as the dream writes it.
    await runtime.db.batch(
        [DreamStore.upsert_daily("d1", "default", "2026-11-29", "Harbour walk", "A calm day by the sea", 3, "x")]
    )
    return {"name": name, "tea": tea, "plan": plan, "bot": bot}


async def test_a_turn_block_has_its_sections_and_says_what_it_cut(client: httpx.AsyncClient, runtime: Runtime) -> None:
    seeded = await seed(client, runtime)
    body = {"query": "what tea does she drink, and Mochi?", "min_score": 0}
    for answer in (
        (await client.post("/v1/memory/recall", json={**body, "include_prompt": True}, headers=auth())).json(),
        await tool(client, "memory_recall", body),  # the tool always answers the block
    ):
        prompt = answer["prompt"]
        assert prompt.startswith("<memories>\nWhat I remember") and prompt.endswith("</memories>")
        assert "Drinks jasmine tea" in prompt
        doing = prompt.split("What we are doing:\n")[1]
        assert doing.index("周末去看海") < doing.index("- [her todo] Sort the star map (due 2026-12-02, priority 4)")
        assert "Impressions:\nYesterday (2026-11-29): Harbour walk — A calm day by the sea" in prompt
        assert "Shared with me" in prompt and "Mochi" in prompt.split("Shared with me")[1]
        sections = answer["meta"]["context"]
        assert set(sections) == {"remember", "doing", "impressions", "shared"}
        assert sections["doing"]["kept"] == 2 and sections["shared"]["kept"] == 1
    assert seeded["plan"]["type"] == "plan"


async def test_the_budget_is_a_setting_and_cuts_show_in_meta(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await seed(client, runtime)
    for n in range(12):
        await write_plan(
            client, f"plan.{n}", f"Plan number {n}: " + "pack the bags and book the train " * 3, valid_days=3
        )
    runtime.settings = runtime.settings.model_copy(update={"CONTEXT_BUDGET_TOKENS": 200})
    for cached in ("context", "boot", "gateway"):
        runtime.__dict__.pop(cached, None)
    answer = (
        await client.post("/v1/memory/recall", json={"query": "tea", "include_prompt": True}, headers=auth())
    ).json()
    doing = answer["meta"]["context"]["doing"]
    assert doing["cut"] > 0 and doing["kept"] >= 1 and "Drinks jasmine tea" in answer["prompt"]


async def test_the_boot_package_assembles_who_she_is_what_is_planned_and_what_is_shared(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await seed(client, runtime)
    for boot in ((await client.get("/v1/memory_boot", headers=auth())).json(), await tool(client, "memory_boot", {})):
        text = boot["context"]["text"]
        assert "Her name is Mei" in text.split("What we are doing")[0]  # permanent: who she is
        assert "Drinks jasmine tea" not in text  # not permanent, and no message to recall for
        assert "周末去看海" in text and "Mochi" in text and "[her todo] Sort the star map" in text
        assert boot["context"]["sections"]["remember"]["kept"] == 1
