"""Her night dreams (梦境): made after the nightly job from recent, emotional memories about
people, written by DREAM_MODEL or as a template dream, kept with a mood and the ids of
their material; off by default; never recalled, searched or booted as a memory."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx

from companion_memory.clock import FixedClock
from companion_memory.domain.night_dream import Material
from companion_memory.memory.tasks import MirrorTask
from companion_memory.nightly.night_dreams import template_dream
from companion_memory.runtime import Runtime
from tests.conftest import auth
from tests.upstreams import RecordingUpstream

NIGHT = "2026-11-29"  # the test clock reads 2026-11-30 20:00 in Singapore: last night followed the 29th


def dreams_on(runtime: Runtime, **settings: Any) -> Runtime:
    runtime.settings = runtime.settings.model_copy(update={"NIGHT_DREAMS_ENABLED": True, **settings})
    for cached in ("night_dreams", "nightly"):
        runtime.__dict__.pop(cached, None)
    return runtime


async def remember(client: httpx.AsyncClient, key: str, content: str, *tags: str, type: str = "note") -> str:
    body = {"fact_key": key, "content": content, "tags": list(tags), "type": type}
    response = await client.post("/v1/memories", json=body, headers=auth())
    assert response.status_code in (200, 201), response.text
    memory_id: str = response.json()["memory"]["id"]
    return memory_id


async def sister_and_cat(client: httpx.AsyncClient) -> dict[str, str]:
    assert (await client.post("/v1/people", json={"name": "Lin", "relation": "sister"}, headers=auth())).is_success
    return {
        "sea": await remember(client, "trip.sea", "Went to the sea with Lin on Saturday", "emotion:happy"),
        "cat": await remember(client, "pet.cat", "Her cat Mochi is afraid of the vacuum cleaner"),
        "exam": await remember(client, "exam", "Failed the driving test again", "emotion:难过"),
        "tea": await remember(client, "drink.tea", "Drinks jasmine tea in the evening"),
        "rule": await remember(client, "rule.calls", "Never call after 11pm", type="boundary"),
    }


async def test_off_by_default(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await sister_and_cat(client)
    report = await runtime.nightly.run("manual")
    assert report.steps[-1].name == "night_dreams" and report.steps[-1].result == {"enabled": False, "written": 0}
    assert await runtime.db.all("SELECT id FROM night_dreams") == []


async def test_a_template_dream_of_the_weightiest_memories(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await sister_and_cat(client)
    dreams_on(runtime, NIGHT_DREAMS_PER_NIGHT=2)
    report = await runtime.nightly.run("manual")
    assert report.ok and report.steps[-1].result == {"enabled": True, "written": 2}
    first, second = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"]
    # Emotional, and about someone, first; no rule is material; no memory twice in a night.
    assert first["material_ids"][:2] == [ids["sea"], ids["exam"]] and ids["rule"] not in first["material_ids"]
    assert (first["date"], first["seq"], second["seq"], first["writer"]) == (NIGHT, 1, 2, "template")
    assert not set(first["material_ids"]) & set(second["material_ids"]) and second["material_ids"]
    assert first["mood"] == "happy" and first["language"] == "en"  # the first emotion said, on a tie
    assert "Lin was there too" in first["text"] and "Went to the sea with Lin on Saturday" in first["text"]
    assert first["text"].startswith("I dreamt I was ") and first["text"].endswith("I woke up smiling.")
    assert second["mood"] == "calm" and "Lin" not in second["text"]

    again = await runtime.nightly.run("manual")  # the same night again: it has its dreams
    assert again.steps[-1].result == {"enabled": True, "written": 0}
    assert len(await runtime.db.all("SELECT id FROM night_dreams")) == 2


async def test_material_is_recent_and_chinese_material_dreams_in_chinese(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    await remember(client, "old", "An old memory from last month")
    clock.advance(days=10)
    dreams_on(runtime)
    assert (await runtime.night_dreams.night())["written"] == 0  # nothing written in the last 7 days
    await remember(client, "exam", "考试没过，心情很低落", "emotion:sad")
    await remember(client, "walk", "晚上一起去江边散步")
    await runtime.night_dreams.night()
    (dream,) = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"]
    assert dream["language"] == "zh" and dream["mood"] == "sad" and dream["text"].startswith("我梦见自己")
    assert "「考试没过，心情很低落」" in dream["text"] and dream["text"].endswith("醒来时，枕头有一点湿。")
    assert dream["date"] == "2026-12-09" and len(dream["material_ids"]) == 2


async def test_a_dream_without_an_emotion_takes_the_mood_of_those_days(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await remember(client, "tea", "Drinks jasmine tea in the evening")
    await client.post("/v1/moods", json={"label": "tired", "whose": "owner"}, headers=auth())
    await client.post("/v1/moods", json={"label": "lonely"}, headers=auth())
    await dreams_on(runtime).night_dreams.night()
    (dream,) = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"]
    assert dream["mood"] == "lonely"  # hers before the owner's


def test_template_dreams_are_deterministic_and_varied_by_their_material() -> None:
    def material(*ids: str) -> list[Material]:
        return [Material(id=i, content=f"memory {i}", tags=(), people=(), importance=0.5, updated_at="") for i in ids]

    same = template_dream(material("a", "b"), "warm", "en")
    assert same == template_dream(material("a", "b"), "warm", "en")
    assert '"memory a"' in same and '"memory b"' in same and same.endswith(". I woke up feeling warm all over.")
    texts = {template_dream(material(str(n)), "warm", "en") for n in range(30)}
    places = {text.split(". ")[0] for text in texts}
    assert len(places) >= 4  # other memories, another dream
    assert template_dream(material("a"), "no-such-mood", "zh").endswith("醒来时，一切都很安静。")
    two = [dataclasses.replace(m, people=(name,)) for m, name in zip(material("a", "b"), ("Lin", "Ana"), strict=True)]
    assert "Lin and Ana were there too" in template_dream(two, "warm", "en")
    assert "Lin和Ana也在那里" in template_dream(two, "warm", "zh")


async def test_dream_model_writes_it_and_a_failure_leaves_a_template_dream(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    ids = await sister_and_cat(client)
    await dreaming.people.relink()  # as the night does before it dreams: the sea is about Lin
    upstream.reply_text = "  I dreamt Lin and I were swimming in a sea of jasmine tea.  "
    await dreams_on(dreaming).night_dreams.night()
    sent = upstream.requests[-1].json
    assert sent["model"] == "dreamer" and "Went to the sea with Lin on Saturday" in sent["messages"][1]["content"]
    assert "English" in sent["messages"][0]["content"] and "happy" in sent["messages"][0]["content"]
    (dream,) = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"]
    assert dream["text"] == "I dreamt Lin and I were swimming in a sea of jasmine tea."
    assert dream["writer"] == "model:dreamer" and dream["material_ids"][0] == ids["sea"]

    upstream.fail_with(400)
    dreams_on(dreaming, NIGHT_DREAMS_PER_NIGHT=2)
    await dreaming.night_dreams.night()
    second = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"][1]
    assert second["writer"] == "template" and second["seq"] == 2 and second["text"].startswith("I dreamt I was")


async def test_a_night_dream_is_never_recalled_searched_or_booted_as_a_memory(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await remember(client, "tea", "Drinks jasmine tea in the evening")
    await dreams_on(runtime).night_dreams.night()
    (dream,) = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"]
    words = dream["text"]
    for path in ("/v1/memory/recall", "/v1/memory/search"):
        found = (await client.post(path, json={"query": words, "min_score": 0}, headers=auth())).json()
        assert dream["id"] not in {hit["id"] for hit in found["hits"]}
        assert all("I dreamt" not in hit["content"] for hit in found["hits"]), path
    boot = (await client.get("/v1/memory_boot", headers=auth())).json()
    assert "I dreamt" not in str(boot) and boot["counts"] == {"note": 1}
    listed = (await client.get("/v1/memories", headers=auth())).json()["memories"]
    assert [m["content"] for m in listed] == ["Drinks jasmine tea in the evening"]
    assert await runtime.vectors.get([dream["id"]]) == []


async def test_export_and_import_carry_night_dreams(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await remember(client, "tea", "Drinks jasmine tea in the evening")
    await dreams_on(runtime).night_dreams.night()
    (dream,) = (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"]
    exported = (await client.get("/api/memories/export", headers=auth())).json()
    assert exported["night_dreams"] == [dream]
    await runtime.db.run("DELETE FROM night_dreams")
    imported = (await client.post("/api/memories/import", json=exported, headers=auth())).json()
    assert imported["imported"]["night_dreams"] == 1
    assert (await client.get("/v1/night_dreams", headers=auth())).json()["night_dreams"] == [dream]

    exported["night_dreams"][0]["mood"] = "dreamy"
    refused = await client.post("/api/memories/import", json=exported, headers=auth())
    assert refused.status_code == 400 and "night_dreams[0].mood" in refused.json()["error"]["message"]
    exported["night_dreams"][0] |= {"mood": "calm", "id": "another"}  # the night's first place is taken
    assert (await client.post("/api/memories/import", json=exported, headers=auth())).json()["refused"] == {
        "night_dreams": 1
    }


async def test_a_dream_goes_when_a_memory_it_was_made_of_is_deleted_for_good(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    tea = await remember(client, "tea", "Drinks jasmine tea in the evening")
    walk = {"fact_key": "walk", "content": "Walks by the river at night", "namespace": "family"}
    assert (await client.post("/v1/memories", json=walk, headers=auth())).is_success
    assert (await dreams_on(runtime).night_dreams.night())["written"] == 2

    async def dreams(namespace: str) -> list[dict[str, Any]]:
        found = await client.get("/v1/night_dreams", params={"namespace": namespace}, headers=auth())
        listed: list[dict[str, Any]] = found.json()["night_dreams"]
        return listed

    assert [d["material_ids"] for d in await dreams("default")] == [[tea]]
    assert (await client.delete(f"/v1/memories/{tea}", headers=auth())).is_success
    await runtime.tasks.run(MirrorTask())
    assert len(await dreams("default")) == 1  # deleted, not yet for good: it could be restored
    assert (await client.delete(f"/v1/memories/{tea}", params={"hard": "true"}, headers=auth())).is_success
    await runtime.tasks.run(MirrorTask())
    assert await dreams("default") == [] and len(await dreams("family")) == 1
