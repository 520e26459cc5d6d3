"""Changing EMBEDDING_MODEL: detected, refused for vector work, and repaired by a reindex."""

from __future__ import annotations

import httpx

from companion_memory.api.app import create_app
from companion_memory.runtime import Runtime
from tests.conftest import DEBUG_KEY, auth
from tests.fakes.embedder import HashEmbedder


async def test_switching_embedder_is_refused_until_reindexed(runtime: Runtime, client: httpx.AsyncClient) -> None:
    for i, text in enumerate(["she loves green tea", "her cat is called Mochi", "works night shifts", "我一直很怕黑"]):
        await client.post("/v1/memories", json={"fact_key": f"k{i}", "content": text}, headers=auth())
    health = (await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
    assert health["mismatch"] is None and health["missing_from_index"] == 0 and health["indexed_vectors"] == 4
    default = runtime.embedder  # the suite's default embedder (the word-hashing fake, 384-d)
    assert health["index"]["model"] == default.model and health["index"]["dimensions"] == default.dimensions == 384

    # Restart with another embedder over the same database and index.
    switched = Runtime(
        settings=runtime.settings, db=runtime.db, vectors=runtime.vectors, embedder=HashEmbedder(), clock=runtime.clock
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(switched)), base_url="http://test"
    ) as other:
        health = (await other.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
        assert default.model in health["mismatch"] and "vector_reindex" in health["mismatch"]
        result = (await other.post("/v1/memory/recall", json={"query": "green tea"}, headers=auth())).json()
        assert result["hits"][0]["content"] == "she loves green tea"  # words still work
        assert any("vector search off" in n for n in result["meta"]["notes"])
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
