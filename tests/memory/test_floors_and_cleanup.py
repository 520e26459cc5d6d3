"""The reranker's floor (MEMORY_FILTER_MIN_SCORE) and retention's cleanup of memories too
short to mean anything (EMPTY_MEMORY_MIN_CHARS)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.ports import RerankScore
from companion_memory.runtime import Runtime
from tests.conftest import auth


class RecordingReranker:
    model = "recording-reranker"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def rerank(self, query: str, documents: Sequence[str]) -> list[RerankScore]:
        self.seen.extend(documents)
        return [RerankScore(i, 0.9) for i in range(len(documents))]


async def test_candidates_under_the_filter_floor_never_reach_the_reranker(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    for key, content in (("drink.coffee", "She takes her coffee with oat milk"), ("pet.cat", "Her cat is Mochi")):
        await client.post("/v1/memories", json={"fact_key": key, "content": content}, headers=auth())
    reranker = RecordingReranker()
    runtime.reranker = reranker
    runtime.settings = runtime.settings.model_copy(update={"MEMORY_MIN_SCORE": 0.0, "MEMORY_FILTER_MIN_SCORE": 0.0})
    runtime.__dict__.pop("recall", None)
    search = {"query": "coffee with oat milk", "k": 5, "min_score": 0}
    everything = (await client.post("/v1/memory/search", json=search, headers=auth())).json()
    assert sorted(reranker.seen) == sorted(h["content"] for h in everything["hits"]) and len(reranker.seen) == 2

    reranker.seen.clear()
    runtime.settings = runtime.settings.model_copy(update={"MEMORY_FILTER_MIN_SCORE": 0.99})
    runtime.__dict__.pop("recall", None)
    floored = (await client.post("/v1/memory/search", json=search, headers=auth())).json()
    assert "Her cat is Mochi" not in reranker.seen
    assert all(h["content"] != "Her cat is Mochi" for h in floored["hits"])
    assert floored["meta"]["floored"]


async def test_retention_expires_memories_too_short_to_mean_anything(runtime: Runtime) -> None:
    writer = runtime.writer

    async def write(key: str, content: str, **fields: object) -> str:
        draft = MemoryDraft(content=content, fact_key=key, **fields)  # type: ignore[arg-type]
        return (await writer.upsert("default", draft, Actor("t", owner=True))).memory.id

    short = await write("a", " ok ")
    kept = {
        await write("b", "Likes tea"),
        await write("c", "hi", pinned=True),
        await write("d", "Mei", type="identity"),
        await write("e", "yes", authored_by="owner"),
    }
    report = await runtime.retention.run()
    assert report["memories_too_short"] == 1
    states = {m.id: m.status for m in await writer.store.get_many([short, *kept])}
    assert states == {short: "expired", **dict.fromkeys(kept, "active")}

    runtime.settings = runtime.settings.model_copy(update={"EMPTY_MEMORY_MIN_CHARS": 0})
    runtime.__dict__.pop("retention", None)
    await write("f", "no")
    assert (await runtime.retention.run(force=True))["memories_too_short"] == 0
