"""Recall and search through HTTP, on both adapters. Tests about what texts mean run on
the real bundled embedder (``embedding_quality``); the rest on the word-hashing fake."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from companion_memory.adapters.model_io import ModelAPIError
from companion_memory.domain.memory import Memory
from companion_memory.domain.search_text import query_terms
from companion_memory.ports import Database, RerankScore, SqlValue
from companion_memory.runtime import Runtime
from companion_memory.store.memories import MemoryStore
from companion_memory.store.text_search import POSTINGS_BUDGET
from tests.conftest import MCP_KEY, auth

MEMORIES = {
    "drink.coffee": ("preference", "She takes her coffee with oat milk every morning"),
    "fear.dark": ("fact", "我一直很怕黑，晚上睡觉要开小夜灯"),
    "drink.cn": ("habit", "她每天早上喝咖啡"),
    "hobby.hiking": ("preference", "Loves hiking in the Alps in summer"),
    "pet.cat": ("fact", "Her cat is called Mochi and is afraid of the vacuum cleaner"),
    "work.job": ("fact", "Works as a night-shift nurse at the city hospital"),
    "food.cilantro": ("preference", "不吃香菜，也不太能吃辣"),
}


async def seed(client: httpx.AsyncClient, namespace: str = "default") -> dict[str, str]:
    ids = {}
    for key, (type_, content) in MEMORIES.items():
        response = await client.post(
            "/v1/memories",
            json={"fact_key": key, "type": type_, "content": content, "namespace": namespace},
            headers=auth(),
        )
        ids[key] = response.json()["memory"]["id"]
    return ids


async def recall(client: httpx.AsyncClient, query: str, path: str = "/v1/memory/recall", **body: object) -> dict:
    response = await client.post(path, json={"query": query, **body}, headers=auth())
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.embedding_quality
@pytest.mark.parametrize(
    "query, key",
    [
        ("what does she drink in the morning?", "drink.coffee"),
        ("怕黑", "fear.dark"),
        ("咖啡", "drink.cn"),
        ("她害怕黑暗吗", "fear.dark"),
        ("does she have any pets?", "pet.cat"),
        ("what is her job", "work.job"),
        ("她能吃辣的吗？", "food.cilantro"),
        ("mountain walks", "hobby.hiking"),
    ],
)
async def test_paraphrased_queries_in_both_languages(client: httpx.AsyncClient, query: str, key: str) -> None:
    ids = await seed(client)
    result = await recall(client, query, k=3)
    assert result["hits"], result
    assert result["hits"][0]["id"] == ids[key], [h["content"] for h in result["hits"]]


async def test_search_does_no_accounting_and_recall_does(client: httpx.AsyncClient) -> None:
    ids = await seed(client)
    searched = await recall(client, "hiking", path="/v1/memory/search")
    assert searched["hits"][0]["id"] == ids["hobby.hiking"] and searched["hits"][0]["last_injected_at"] is None
    assert (await recall(client, "hiking", path="/v1/search/memories"))["hits"][0]["recall_count"] == 0
    recalled = await recall(client, "hiking", k=1)
    assert recalled["hits"][0]["recall_count"] == 1 and recalled["hits"][0]["last_injected_at"]
    stored = (await client.get(f"/v1/memories/{ids['hobby.hiking']}", headers=auth())).json()["memory"]
    assert stored["recall_count"] == 1
    others = (await client.get(f"/v1/memories/{ids['pet.cat']}", headers=auth())).json()["memory"]
    assert others["recall_count"] == 0  # only what was injected is counted


async def test_recent_injection_is_down_weighted_not_removed(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await seed(client)
    first = await recall(client, "what does she drink in the morning?", k=2)
    again = await recall(client, "what does she drink in the morning?", k=7)
    assert ids["drink.coffee"] in again["meta"]["decayed"]
    hit = next(h for h in again["hits"] if h["id"] == ids["drink.coffee"])
    before = next(h for h in first["hits"] if h["id"] == ids["drink.coffee"])
    assert hit["decayed"] and hit["raw_score"] == before["raw_score"] and hit["score"] < before["score"]
    runtime.clock.advance(minutes=31)  # type: ignore[attr-defined]
    later = await recall(client, "what does she drink in the morning?", k=2)
    assert later["meta"]["decayed"] == [] and later["hits"][0]["id"] == ids["drink.coffee"]


async def test_precious_overlap_is_dropped(client: httpx.AsyncClient) -> None:
    await client.post("/v1/precious", json={"content": "我永远爱你，宝贝。晚安"}, headers=auth())
    copy = (
        await client.post("/v1/memories", json={"fact_key": "love", "content": "我永远爱你宝贝，晚安"}, headers=auth())
    ).json()["memory"]
    other = (
        await client.post(
            "/v1/memories", json={"fact_key": "sleep", "content": "她说晚安之前总要喝一杯热牛奶"}, headers=auth()
        )
    ).json()["memory"]
    result = await recall(client, "晚安", k=5)
    assert copy["id"] in result["meta"]["precious_overlap"]
    assert [h["id"] for h in result["hits"]] == [other["id"]]


async def test_dedupe_floor_types_and_clamping(client: httpx.AsyncClient) -> None:
    a = (
        await client.post(
            "/v1/memories", json={"fact_key": "t1", "content": "Likes green tea.", "type": "preference"}, headers=auth()
        )
    ).json()["memory"]
    b = (
        await client.post(
            "/v1/memories", json={"fact_key": "t2", "content": "likes  GREEN tea", "type": "preference"}, headers=auth()
        )
    ).json()["memory"]
    result = await recall(client, "green tea", k=1000)
    assert result["meta"]["k"] == 100 and len(result["hits"]) == 1
    assert {a["id"], b["id"]} == {result["hits"][0]["id"], *result["meta"]["deduped"]}
    floored = await recall(client, "green tea", min_score=0.99)
    assert floored["hits"] == [] and floored["meta"]["floored"]
    assert (await recall(client, "green tea", types=["event", "Preferences"]))["hits"]
    assert (await recall(client, "green tea", types=["event"]))["hits"] == []
    unknown = await client.post("/v1/memory/recall", json={"query": "green tea", "types": ["wibble"]}, headers=auth())
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "invalid_type"
    assert (await recall(client, "green tea", top_k=0))["meta"]["k"] == 1


async def test_inactive_and_other_namespaces_are_never_recalled(client: httpx.AsyncClient) -> None:
    ids = await seed(client)
    await seed(client, namespace="work")
    await client.post(f"/v1/memories/{ids['pet.cat']}/archive", headers=auth())
    await client.post(
        f"/v1/memories/{ids['hobby.hiking']}/supersede",
        json={"content": "Gave up hiking after a knee injury"},
        headers=auth(),
    )
    await client.delete(f"/v1/memories/{ids['work.job']}", headers=auth())
    result = await recall(client, "cat hiking nurse job pets mountains", k=20, min_score=0)
    returned = {h["id"] for h in result["hits"]}
    assert not returned & {ids["pet.cat"], ids["hobby.hiking"], ids["work.job"]}
    assert all(h["namespace"] == "default" for h in result["hits"])
    assert any("knee" in h["content"] for h in result["hits"])


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '"unbalanced',
        "tea*",
        "NEAR(tea coffee)",
        "tea OR OR coffee",
        "((()))",
        "AND",
        "-tea",
        "col:tea",
        "^tea",
        "x" * 100_000,
        "'; DROP TABLE memories; --",
        "🙂🙃",
        "   ",
    ],
)
async def test_hostile_queries_never_fail(client: httpx.AsyncClient, query: str) -> None:
    await seed(client)
    result = await recall(client, query)
    assert isinstance(result["hits"], list)
    assert (await recall(client, query, path="/v1/memory/search"))["meta"]


async def test_empty_query_is_a_200_with_no_hits(client: httpx.AsyncClient) -> None:
    await seed(client)
    for body in ({"query": ""}, {"query": "   "}, {}):
        response = await client.post("/v1/memory/recall", json=body, headers=auth())
        assert response.status_code == 200 and response.json()["hits"] == []


async def test_bad_recall_bodies_are_400(client: httpx.AsyncClient) -> None:
    for body in (
        {"query": 5},
        {"query": "x", "k": "many"},
        {"query": "x", "min_score": 2},
        {"query": "x", "namespace": "a b"},
        {"query": "x", "types": "fact"},
    ):
        response = await client.post("/v1/memory/recall", json=body, headers=auth())
        assert response.status_code == 400, (body, response.text)
    assert (await client.post("/v1/memory/recall", json={"query": "x"})).status_code == 401


async def test_glossary_hits_and_the_prompt(client: httpx.AsyncClient) -> None:
    ids = await seed(client)
    await client.post(
        "/v1/glossary",
        json={"term": "bbt", "aliases": ["boba", "珍奶"], "definition": "bubble tea, her favourite"},
        headers=auth(),
    )
    await client.post("/v1/glossary", json={"term": "art", "definition": "her art class"}, headers=auth())
    await client.post("/v1/glossary", json={"term": "x", "definition": "too short to match"}, headers=auth())
    result = await recall(client, "Want to get BOBA after the party, or coffee with oat milk? x", include_prompt=True)
    assert [g["term"] for g in result["glossary_hits"]] == ["bbt"]
    assert (await recall(client, "今天喝珍奶"))["glossary_hits"][0]["matched"] == "珍奶"
    prompt = result["prompt"]
    assert prompt.startswith("<memories>") and prompt.endswith("</memories>")
    assert "bbt (also: boba, 珍奶): bubble tea, her favourite" in prompt
    assert MEMORIES["drink.coffee"][1] in prompt
    assert ids["drink.coffee"] == result["hits"][0]["id"]
    nothing = await recall(client, "", include_prompt=True)
    assert nothing["prompt"] == ""


async def test_relations_expand_one_hop_and_contradictions_mark(client: httpx.AsyncClient) -> None:
    ids = await seed(client)
    search = "/v1/memory/search"  # no injection bookkeeping, so no decay between the two looks
    before = {
        h["id"]: h["score"]
        for h in (await recall(client, "night-shift nurse hospital", search, k=3, min_score=0))["hits"]
    }
    allergy = (
        await client.post(
            "/v1/memories", json={"fact_key": "allergy", "content": "Allergic to cats since childhood"}, headers=auth()
        )
    ).json()["memory"]
    supports = await client.post(
        f"/v1/memories/{ids['work.job']}/relations",
        json={"target_id": ids["hobby.hiking"], "relation": "supports", "weight": 1.0},
        headers=auth(MCP_KEY),
    )
    assert supports.status_code == 201
    clash = await client.post(
        f"/v1/memories/{allergy['id']}/relations",
        json={"target_id": ids["pet.cat"], "relation": "contradicts"},
        headers=auth(),
    )
    assert clash.status_code == 201
    again = await client.post(
        f"/v1/memories/{allergy['id']}/relations",
        json={"target_id": ids["pet.cat"], "relation": "contradicts"},
        headers=auth(),
    )
    assert again.status_code == 201 and again.json()["relation"]["id"] == clash.json()["relation"]["id"]
    bad = await client.post(
        f"/v1/memories/{allergy['id']}/relations",
        json={"target_id": ids["pet.cat"], "relation": "supersedes"},
        headers=auth(),
    )
    assert bad.status_code == 400

    result = await recall(client, "night-shift nurse hospital", search, k=3, min_score=0)
    nurse = result["hits"][0]
    assert nurse["id"] == ids["work.job"]
    brought = next(h for h in result["hits"] if h["id"] == ids["hobby.hiking"])
    # Not found on its own before the edge; now brought in by it, from the nurse.
    assert ids["hobby.hiking"] not in before
    assert brought["via"] == ids["work.job"] and brought["channels"] == {}
    # An undecided contradiction: the newer memory (the edge's source) answers, flagged,
    # in place of the older one the words found.
    cat = await recall(client, "Mochi the cat", k=1)
    assert cat["hits"][0]["id"] == allergy["id"] and cat["hits"][0]["contradicted_by"] == [ids["pet.cat"]]
    edge = clash.json()["relation"]
    assert (
        await client.delete(f"/v1/memories/{allergy['id']}/relations/{edge['id']}", headers=auth())
    ).status_code == 200
    uncontested = (await recall(client, "Mochi the cat", k=1))["hits"][0]
    assert uncontested["id"] == ids["pet.cat"] and uncontested["contradicted_by"] == []


class FakeReranker:
    model = "fake-reranker"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls = 0

    async def rerank(self, query: str, documents):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.fail:
            # What the API rerankers make of an httpx timeout (tests/adapters/remote/test_remote_models.py).
            raise ModelAPIError("rerank fake-reranker: ReadTimeout: timed out")
        # Prefers the longest document, whatever the query: easy to see in the order.
        return [RerankScore(i, min(1.0, len(d) / 100)) for i, d in enumerate(documents)]


async def test_reranker_orders_and_its_failure_keeps_the_fused_order(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    ids = await seed(client)
    fused = await recall(client, "coffee", path="/v1/memory/search", k=3)
    reranker = FakeReranker()
    runtime.reranker = reranker
    runtime.__dict__.pop("recall", None)
    reranked = await recall(client, "coffee", path="/v1/memory/search", k=3, min_score=0)
    assert reranked["meta"]["reranker"] == "fake-reranker"
    lengths = [len(h["content"]) for h in reranked["hits"]]
    assert lengths == sorted(lengths, reverse=True)
    skipped = await recall(client, "coffee", path="/v1/memory/search", k=3, filter=False)
    assert skipped["meta"]["reranker"] == "skipped" and reranker.calls == 1
    reranker.fail = True
    failed = await recall(client, "coffee", path="/v1/memory/search", k=3)
    assert failed["meta"]["reranker"] == "failed"
    assert [h["id"] for h in failed["hits"]] == [h["id"] for h in fused["hits"]]
    assert ids["drink.coffee"] in [h["id"] for h in failed["hits"]]


async def test_vector_outage_falls_back_to_words(client: httpx.AsyncClient, runtime: Runtime) -> None:
    ids = await seed(client)
    runtime.vectors.down = True  # type: ignore[attr-defined]
    result = await recall(client, "怕黑")
    assert result["hits"][0]["id"] == ids["fear.dark"] and result["hits"][0]["raw_score"] is None
    assert any("vector search unavailable" in n for n in result["meta"]["notes"])


async def test_embedder_outage_falls_back_to_words(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = await seed(client)

    async def down(*_: object, **__: object) -> list[list[float]]:
        # What the API embedders make of a refused or unreachable provider.
        raise ModelAPIError("embeddings bge-m3: HTTP 429: 3040: Out of capacity", status=429)

    monkeypatch.setattr(runtime.embedder, "embed", down)
    result = await recall(client, "怕黑")
    assert result["hits"][0]["id"] == ids["fear.dark"] and result["hits"][0]["raw_score"] is None
    assert any("vector search unavailable (ModelAPIError" in n for n in result["meta"]["notes"])


@pytest.mark.embedding_quality  # the model's similarity_range puts an unrelated question under the floor
async def test_nothing_is_injected_when_nothing_is_relevant(client: httpx.AsyncClient) -> None:
    await seed(client)
    result = await recall(client, "what is the capital of France?", include_prompt=True)
    assert result["hits"] == [] and result["prompt"] == ""
    assert result["meta"]["floored"]  # the candidates were there, under the floor


async def mcp_search(client: httpx.AsyncClient, arguments: dict[str, object]) -> dict:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": arguments},
    }
    headers = {**auth(MCP_KEY), "MCP-Protocol-Version": "2025-11-25", "Accept": "application/json, text/event-stream"}
    response = await client.post("/mcp", json=body, headers=headers)
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is False, result
    return result["structuredContent"]


async def test_a_fragment_of_a_code_finds_it_through_rest_and_mcp(client: httpx.AsyncClient, runtime: Runtime) -> None:
    # The word-hashing embedder sees little of "QW447" in the code: its similarity, not
    # the channel, would decide under MEMORY_MIN_SCORE (the real model's is shown below).
    runtime.settings = runtime.settings.model_copy(update={"MEMORY_MIN_SCORE": 0.0})
    runtime.__dict__.pop("recall", None)
    await seed(client)
    code = "ZQW4471K"
    written = await client.post(
        "/v1/memories",
        json={"fact_key": "locker", "type": "fact", "content": f"Her gym locker code is {code}"},
        headers=auth(),
    )
    locker = written.json()["memory"]["id"]
    # Half-width, full-width, any case, inside a sentence: no whole word of the memory, so
    # the word index has nothing, and the substring index finds it.
    for query in ("QW447", "ｑｗ４４７", "what was 4471k again?", "我的QW447呢"):
        for path in ("/v1/memory/search", "/v1/memory/recall"):
            hits = (await recall(client, query, path, min_score=0))["hits"]
            assert hits[0]["id"] == locker and "substring" in hits[0]["channels"], (query, path, hits)
            assert "lexical" not in hits[0]["channels"]
    found = await mcp_search(client, {"query": "QW447", "min_score": 0})
    assert found["hits"][0]["id"] == locker and "substring" in found["hits"][0]["channels"]
    # A whole word the word index matches goes no further: "locker" is found by words.
    assert "substring" not in (await recall(client, "locker", "/v1/memory/search", min_score=0))["hits"][0]["channels"]
    # The floor still applies.
    floored = await recall(client, "QW447", "/v1/memory/search", min_score=0.5)
    assert locker not in [h["id"] for h in floored["hits"]] and locker in floored["meta"]["floored"]


async def test_the_substring_index_follows_edits_and_deletes(client: httpx.AsyncClient, runtime: Runtime) -> None:
    runtime.vectors.down = True  # type: ignore[attr-defined]  # words alone: no similarity to floor them
    written = await client.post(
        "/v1/memories",
        json={"fact_key": "wifi", "type": "fact", "content": "Wifi password hint: XK9-PLUM"},
        headers=auth(),
    )
    memory_id = written.json()["memory"]["id"]
    assert (await recall(client, "k9-pl", "/v1/memory/search", min_score=0))["hits"][0]["id"] == memory_id
    edited = await client.patch(f"/v1/memories/{memory_id}", json={"content": "Wifi hint: RB7-FIG"}, headers=auth())
    assert edited.status_code == 200
    assert (await recall(client, "k9-pl", "/v1/memory/search", min_score=0))["hits"] == []
    assert (await recall(client, "b7-fi", "/v1/memory/search", min_score=0))["hits"][0]["id"] == memory_id
    runtime.vectors.down = False  # type: ignore[attr-defined]  # a hard delete waits for the vector to go
    assert (await client.delete(f"/v1/memories/{memory_id}?hard=true", headers=auth())).status_code == 200
    assert await runtime.db.first("SELECT id FROM memories WHERE id = ?", (memory_id,)) is None
    assert (await recall(client, "b7-fi", "/v1/memory/search", min_score=0))["hits"] == []
    # The index agrees with the table, row for row (FTS5 checks an external-content index so).
    await runtime.db.run("INSERT INTO memories_substring (memories_substring, rank) VALUES ('integrity-check', 1)")


@pytest.mark.embedding_quality
async def test_a_code_fragment_clears_the_default_floor(client: httpx.AsyncClient) -> None:
    await seed(client)
    written = await client.post(
        "/v1/memories",
        json={"fact_key": "locker", "type": "fact", "content": "Her gym locker code is ZQW4471K"},
        headers=auth(),
    )
    hits = (await recall(client, "QW447"))["hits"]
    assert hits[0]["id"] == written.json()["memory"]["id"] and "substring" in hits[0]["channels"]


@pytest.mark.embedding_quality
async def test_capitalisation_width_and_punctuation_cannot_move_the_score(client: httpx.AsyncClient) -> None:
    await seed(client)
    home = await client.post(
        "/v1/memories",
        json={"fact_key": "home.city", "type": "fact", "content": "Lives in Lisbon, Portugal"},
        headers=auth(),
    )
    spellings = [
        "Which city do I live in?",
        "which city do I live in?",
        "WHICH CITY DO I LIVE IN？",
        "which city do i live in",
    ]
    scores = set()
    for query in spellings:
        hits = (await recall(client, query, "/v1/memory/search", min_score=0))["hits"]
        assert hits[0]["id"] == home.json()["memory"]["id"], (query, hits)
        scores.add(hits[0]["raw_score"])
    assert len(scores) == 1, scores


async def test_a_fragment_too_common_to_pick_anything_out_is_not_looked_for(db: Database) -> None:
    at = "2026-11-30T00:00:00.000Z"
    memories = [
        Memory(
            id=f"m{i:03}", namespace="default", type="note", content=f"ticket XYZZY-{i}", created_at=at, updated_at=at
        )
        for i in range(POSTINGS_BUDGET + 1)
    ]
    await db.batch([MemoryStore.insert(m) for m in memories])
    store = MemoryStore(db)
    assert await store.substring_search("default", ["yzzy"]) == []  # in every one of them
    found = [i for i, _ in await store.substring_search("default", ["zzy-12"])]
    assert sorted(found) == ["m012", *(f"m{i}" for i in range(120, 130))]
    assert await store.substring_search("default", ["qqq"]) == []  # no memory has the trigram


async def test_a_memory_written_after_a_common_word_was_counted_is_found_by_its_words(db: Database) -> None:
    at = "2026-11-30T00:00:00.000Z"

    def note(i: int, content: str) -> Memory:
        return Memory(id=f"m{i:04}", namespace="default", type="note", content=content, created_at=at, updated_at=at)

    # "weather" is common enough that its count is kept between recalls.
    await db.batch([MemoryStore.insert(note(i, f"weather log {i}")) for i in range(2 * POSTINGS_BUDGET + 1)])
    store = MemoryStore(db)
    assert len(await store.lexical_search("default", query_terms("weather"), limit=5)) == 5
    await db.batch([MemoryStore.insert(note(9000, "weather at the lighthouse: fog"))])
    # Its rare word is counted afresh, and with the common one it ranks first.
    assert [i for i, _ in await store.lexical_search("default", query_terms("lighthouse"))] == ["m9000"]
    assert (await store.lexical_search("default", query_terms("weather lighthouse")))[0][0] == "m9000"
    assert (await store.text.term_frequencies(query_terms("lighthouse"))) == {query_terms("lighthouse")[0]: 1}


async def test_a_question_of_common_words_only_is_answered_from_the_newest_rows(db: Database) -> None:
    """Every word in more rows than can be scored: the newest that hold them are found,
    the best of those first, instead of scoring every row that says them."""
    at = "2026-11-30T00:00:00.000Z"

    def note(i: int, content: str) -> Memory:
        return Memory(id=f"m{i:04}", namespace="default", type="note", content=content, created_at=at, updated_at=at)

    rows = 4 * POSTINGS_BUDGET
    await db.batch([MemoryStore.insert(note(i, f"went camping {i}")) for i in range(rows)])
    store = MemoryStore(db)
    found = [i for i, _ in await store.lexical_search("default", query_terms("camping"), limit=rows)]
    assert found and all(int(i[1:]) >= rows - POSTINGS_BUDGET - 1 for i in found)
    assert len(found) >= POSTINGS_BUDGET - 1
    # With a rarer word, every row is scored as before, however old.
    assert {i for i, _ in await store.lexical_search("default", query_terms("camping 7"))} >= {"m0007"}


async def test_an_accented_word_finds_its_memory_with_or_without_the_accent(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    cafe = await client.post(
        "/v1/memories", json={"fact_key": "place.cafe", "content": "Meets Ana at the Café Müller"}, headers=auth()
    )
    runtime.vectors.down = True  # type: ignore[attr-defined]  # the words alone must find it
    for query in ("café", "cafe", "CAFÉ", "müller", "Muller"):
        hits = (await recall(client, query, "/v1/memory/search", min_score=0))["hits"]
        assert [h["id"] for h in hits] == [cafe.json()["memory"]["id"]], query
        assert "lexical" in hits[0]["channels"], query


async def test_one_recall_reads_the_relation_edges_once(
    client: httpx.AsyncClient, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Expansion and the contradiction check look at mostly the same memories: a chat
    turn's recall reads each one's edges once, not once for each."""
    ids = await seed(client)
    linked = await client.post(
        f"/v1/memories/{ids['work.job']}/relations",
        json={"target_id": ids["hobby.hiking"], "relation": "supports", "weight": 1.0},
        headers=auth(),
    )
    assert linked.status_code == 201
    read: list[set[SqlValue]] = []  # whose edges each statement read
    original = runtime.db.all

    async def counted(sql: str, params: Sequence[SqlValue] = ()) -> list[dict[str, Any]]:
        if "FROM memory_relations" in sql:
            read.append(set(params))
        return await original(sql, params)

    monkeypatch.setattr(runtime.db, "all", counted)
    result = await runtime.recall.run("night-shift nurse hospital", k=3, min_score=0, account=True)
    assert [h.via for h in result.hits if h.memory.id == ids["hobby.hiking"]] == [ids["work.job"]]
    # The pool's, then only the memory the edge brought in (its own edges may contradict).
    assert len(read) == 2 and ids["work.job"] in read[0] and read[1] == {ids["hobby.hiking"]}
