"""Changing EMBEDDING_MODEL: detected, refused for vector work, and repaired by a reindex;
changing the form of the embedded text: repaired in the background."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import httpx
import pytest

from companion_memory.api.app import create_app
from companion_memory.domain.search_text import embedding_text
from companion_memory.memory.tasks import PassTask
from companion_memory.memory.vector_mirror import EMBEDDED_TEXT_FORM
from companion_memory.memory.vector_passes import PassMode
from companion_memory.ports import VectorRecord
from companion_memory.runtime import Runtime
from tests.conftest import DEBUG_KEY, auth
from tests.fakes.embedder import HashEmbedder


async def test_switching_embedder_is_refused_until_reindexed(
    runtime: Runtime, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, text in enumerate(["she loves green tea", "her cat is called Mochi", "works night shifts", "我一直很怕黑"]):
        await client.post("/v1/memories", json={"fact_key": f"k{i}", "content": text}, headers=auth())
    health = (await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
    assert health["mismatch"] is None and health["missing_from_index"] == 0 and health["indexed_vectors"] == 4
    default = runtime.embedder  # the suite's default embedder (the word-hashing fake, 384-d)
    assert health["index"]["model"] == default.model and health["index"]["dimensions"] == default.dimensions == 384

    # Restart with another embedder over the same database and index.
    other_embedder = HashEmbedder()
    queries: list[str] = []
    embed = other_embedder.embed

    async def counted(texts: Sequence[str], *, kind: str) -> list[list[float]]:
        queries.extend(texts if kind == "query" else ())
        return await embed(texts, kind=kind)

    monkeypatch.setattr(other_embedder, "embed", counted)
    switched = Runtime(
        settings=runtime.settings,
        db=runtime.db,
        vectors=runtime.vectors,
        embedder=other_embedder,
        clock=runtime.clock,
        router=runtime.router,
        http=runtime.http,
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(switched)), base_url="http://test"
    ) as other:
        health = (await other.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
        assert default.model in health["mismatch"] and "vector_reindex" in health["mismatch"]
        result = (await other.post("/v1/memory/recall", json={"query": "green tea"}, headers=auth())).json()
        assert result["hits"][0]["content"] == "she loves green tea"  # words still work
        assert any("vector search off" in n for n in result["meta"]["notes"])
        assert queries == []  # nor is the query embedded for nothing
        written = (
            await other.post("/v1/memories", json={"fact_key": "new", "content": "likes jasmine tea"}, headers=auth())
        ).json()
        assert written["vector"] == "pending"  # kept in the outbox, not mixed into the old index
        assert await runtime.vectors.count() == 4

        first = (await other.post("/v1/debug/vector_reindex", json={"batch": 2}, headers=auth(DEBUG_KEY))).json()
        assert first["queued"] == 5 and first["indexed_now"] == 2 and first["pending"] == 3 and not first["done"]
        steps = 1
        while not (
            step := (await other.post("/v1/debug/vector_reindex", json={"batch": 2}, headers=auth(DEBUG_KEY))).json()
        )["done"]:
            steps += 1
            assert steps < 10
        assert step["pending"] == 0 and step["active_memories"] == 5
        health = (await other.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
        assert (
            health["mismatch"] is None
            and health["index"]["model"] == "test-hash"
            and health["index"]["dimensions"] == 16
        )
        assert health["indexed_vectors"] == 5 and health["missing_from_index"] == 0
        result = (await other.post("/v1/memory/recall", json={"query": "jasmine tea", "k": 1}, headers=auth())).json()
        assert result["hits"][0]["channels"].get("vector") and not any(
            "vector search off" in n for n in result["meta"]["notes"]
        )
        assert (await other.post("/v1/debug/vector_reindex", headers=auth())).status_code == 200
        assert (await other.post("/v1/debug/vector_reindex", headers=auth("test-mcp-key"))).status_code == 403


async def test_health_counts_rows_missing_from_the_mirror(runtime: Runtime, client: httpx.AsyncClient) -> None:
    ids = [
        (
            await client.post("/v1/memories", json={"fact_key": f"k{i}", "content": f"fact number {i}"}, headers=auth())
        ).json()["memory"]["id"]
        for i in range(3)
    ]
    await runtime.vectors.inner.delete(ids[:2])  # type: ignore[attr-defined]
    health = (await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
    assert health["missing_from_index"] == 2 and health["missing_count_complete"]
    restart = (await client.post("/v1/debug/vector_reindex", json={"restart": True}, headers=auth(DEBUG_KEY))).json()
    assert restart["queued"] == 3 and restart["done"]
    assert (await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()["missing_from_index"] == 0


async def test_vectors_of_an_older_text_form_are_made_again_in_the_background(
    runtime: Runtime, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["She loves GREEN tea!", "Her cat is called “Mochi”", "我一直很怕黑。"]
    ids = [
        (await client.post("/v1/memories", json={"fact_key": f"k{i}", "content": t}, headers=auth())).json()["memory"][
            "id"
        ]
        for i, t in enumerate(texts)
    ]
    # An index filled before EMBEDDED_TEXT_FORM: same model, vectors of another text.
    stale = [1.0] + [0.0] * (runtime.embedder.dimensions - 1)
    await runtime.vectors.upsert(
        [VectorRecord(id_, stale, {"namespace": "default", "status": "active"}) for id_ in ids]
    )
    await runtime.db.run("UPDATE vector_index_state SET text_form = ''")

    restarted = Runtime(
        settings=runtime.settings,
        db=runtime.db,
        vectors=runtime.vectors,
        embedder=runtime.embedder,
        clock=runtime.clock,
        router=runtime.router,
        http=runtime.http,
    )
    begun: list[str] = []
    begin = restarted.mirror.passes.begin

    async def counted(mode: PassMode, *, over: bool = False) -> bool:
        begun.append(mode)
        return await begin(mode, over=over)

    monkeypatch.setattr(restarted.mirror.passes, "begin", counted)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(restarted)), base_url="http://test"
    ) as other:
        # The first recalls after the start arrive together: the form is found stale once.
        results = await asyncio.gather(
            *(
                other.post("/v1/memory/recall", json={"query": q, "min_score": 0}, headers=auth())
                for q in ("tea", "cat")
            )
        )
        assert begun == ["refresh"]
        result = results[0].json()
        assert not any("vector search off" in n for n in result["meta"]["notes"])  # the old vectors serve meanwhile
        health = (await other.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
        assert health["mismatch"] is None and health["index"]["text_form"] == EMBEDDED_TEXT_FORM
        assert health["vector_pass"] == "refresh"  # a pass over the rows, for the background
    assert await restarted.tasks.run(PassTask()) == {"queued": 3, "running": False}
    assert (await restarted.mirror.outbox.stats())["pending"] == 3  # queued once
    assert (await restarted.mirror.drain()).synced == 3
    wanted = await runtime.embedder.embed([embedding_text(t) for t in texts], kind="passage")
    stored = {r.id: r.values for r in await runtime.vectors.get(ids)}
    for id_, vector in zip(ids, wanted, strict=True):
        assert stored[id_] == pytest.approx(vector, abs=1e-6)
