"""Retention with the clock moved: raw data ages out, unused memories expire, retired
rows are purged vector first, and a second run the same day does nothing."""

from __future__ import annotations

import httpx

from companion_memory.application import maintenance
from companion_memory.application.principal import SYSTEM
from companion_memory.domain.person import PersonProposal
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.runtime import Runtime
from companion_memory.store.people import PersonStore
from tests.conftest import auth


async def test_retention_rules(client: httpx.AsyncClient, runtime: Runtime) -> None:
    writer, clock = runtime.writer, runtime.clock
    await client.post(
        "/v1/ingest/messages", json={"messages": [{"role": "user", "content": "old words"}]}, headers=auth()
    )
    plain = (await writer.upsert("default", MemoryDraft(content="Likes tea", fact_key="tea"), Actor("t"))).memory
    pinned = (
        await writer.upsert("default", MemoryDraft(content="Vegetarian", fact_key="food", pinned=True), Actor("t"))
    ).memory
    who = (
        await writer.upsert(
            "default", MemoryDraft(content="Her name is Mei", fact_key="name", type="identity"), Actor("t")
        )
    ).memory
    rule = (
        await writer.upsert(
            "default", MemoryDraft(content="No calls after 10pm", fact_key="rule.calls", type="boundary"), Actor("t")
        )
    ).memory
    used = (await writer.upsert("default", MemoryDraft(content="Runs marathons", fact_key="run"), Actor("t"))).memory
    gone = (
        await writer.upsert("default", MemoryDraft(content="Old job at the bank", fact_key="job"), Actor("t"))
    ).memory
    await writer.delete(gone.id, Actor("t"))

    clock.advance(days=8)  # type: ignore[attr-defined]
    first = await runtime.retention.run()
    assert first["messages"] == 1 and first["memories_expired"] == 0 and first["memories_purged"] == 0
    assert (await runtime.retention.run())["skipped"] is True  # at most once a day

    clock.advance(days=23)  # type: ignore[attr-defined]
    purge = await runtime.retention.run()
    assert purge["memories_purged"] == 1 and await writer.store.get(gone.id) is None

    clock.advance(days=100)  # type: ignore[attr-defined]
    await runtime.recall.run("marathon running", k=5, account=True)  # recalled: still in use
    clock.advance(days=60)  # type: ignore[attr-defined]
    expire = await runtime.retention.run()
    assert expire["memories_expired"] == 1 and expire["usage_logs"] == 0
    states = {m.id: m.status for m in await writer.store.get_many([plain.id, pinned.id, who.id, rule.id, used.id])}
    assert states == {
        plain.id: "expired",
        pinned.id: "active",
        who.id: "active",
        rule.id: "active",  # a boundary is permanent
        used.id: "active",
    }
    query = (await runtime.embedder.embed(["tea"], kind="query"))[0]
    assert plain.id not in {m.id for m in await runtime.vectors.query(query, top_k=10)}

    clock.advance(days=31)  # type: ignore[attr-defined]
    later = await runtime.retention.run()
    assert later["memories_purged"] == 1 and await writer.store.get(plain.id) is None


async def test_a_failing_index_keeps_the_row_until_the_vector_is_gone(runtime: Runtime) -> None:
    m = (await runtime.writer.upsert("default", MemoryDraft(content="Old fact", fact_key="x"), Actor("t"))).memory
    await runtime.writer.delete(m.id, Actor("t"))
    runtime.clock.advance(days=31)  # type: ignore[attr-defined]
    runtime.vectors.down = True  # type: ignore[attr-defined]
    report = await runtime.retention.run()
    assert report["memories_purged"] == 1 and report["vectors_pending"] == 1
    assert await runtime.writer.store.get(m.id) is not None
    runtime.vectors.down = False  # type: ignore[attr-defined]
    runtime.clock.advance(minutes=5)  # type: ignore[attr-defined]
    await runtime.mirror.drain()
    assert await runtime.writer.store.get(m.id) is None


def proposal(key: str, name: str) -> PersonProposal:
    at = "2026-11-30T12:00:00.000Z"
    return PersonProposal(id=key, namespace="default", kind="person", key=key, name=name, source="dream", created_at=at)


async def test_decided_person_proposals_go_a_month_after_the_decision(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await runtime.db.batch(
        [PersonStore.propose(proposal(k, n)) for k, n in (("p1", "Ana"), ("p2", "Bo"), ("p3", "Cy"))]
    )
    assert (await client.post("/v1/person_proposals/p1/approve", headers=auth())).status_code == 200
    assert (await client.post("/v1/person_proposals/p2/reject", headers=auth())).status_code == 200
    runtime.clock.advance(days=29)  # type: ignore[attr-defined]
    assert (await runtime.retention.run())["person_proposals"] == 0
    await runtime.db.batch([PersonStore.propose(proposal("p4", "Di"))])
    assert (await client.post("/v1/person_proposals/p4/reject", headers=auth())).status_code == 200
    runtime.clock.advance(days=2)  # type: ignore[attr-defined]
    report = await maintenance.retention(runtime, SYSTEM, maintenance.RetentionRun())  # what cleanup prints
    assert report.person_proposals == 2
    left = {p.id: p.status for p in await PersonStore(runtime.db).proposals("default", "pending", 10)}
    left |= {p.id: p.status for p in await PersonStore(runtime.db).proposals("default", "rejected", 10)}
    assert left == {"p3": "pending", "p4": "rejected"}  # waiting, and decided two days ago
    # What an approval made stays: only the question is gone.
    assert [p["name"] for p in (await client.get("/v1/people", headers=auth())).json()["people"]] == ["Ana"]
