"""The review queue over REST, on both adapters. Candidates are written the way the
dream writes them (through the store), then reviewed as the owner would."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from companion_memory.domain.candidate import Candidate
from companion_memory.domain.memory import Evidence
from companion_memory.runtime import Runtime
from companion_memory.store.candidates import CandidateStore
from tests.conftest import MCP_KEY, auth


async def candidate(runtime: Runtime, content: str, **fields: Any) -> str:
    written = Candidate(
        id=str(uuid.uuid4()),
        namespace="default",
        kind="add",
        type="preference",
        content=content,
        importance=0.5,
        confidence=0.7,
        evidence=[Evidence(content[:20], "m1")],
        source_message_ids=["m1"],
        dream_run_id="run-1",
        created_at="2026-11-30T12:00:00.000Z",
        updated_at="2026-11-30T12:00:00.000Z",
    ).replace(**fields)
    await runtime.db.batch([CandidateStore.insert(written)])
    return written.id


async def memory(client: httpx.AsyncClient, fact_key: str, content: str, **extra: object) -> dict:
    return (
        await client.post("/v1/memories", json={"fact_key": fact_key, "content": content, **extra}, headers=auth())
    ).json()["memory"]


async def test_list_and_approve_creates_once(client: httpx.AsyncClient, runtime: Runtime) -> None:
    cid = await candidate(runtime, "Her favourite flower is the sunflower")
    listed = (await client.get("/v1/candidates", headers=auth())).json()
    assert [c["id"] for c in listed["candidates"]] == [cid] and listed["candidates"][0]["evidence"][0][
        "message_id"
    ] == "m1"
    approved = await client.post(f"/v1/candidates/{cid}/approve", headers=auth())
    assert approved.status_code == 200, approved.text
    body = approved.json()
    assert body["action"] == "created" and body["memory"]["content"] == "Her favourite flower is the sunflower"
    assert body["candidate"]["status"] == "approved" and body["candidate"]["result_memory_id"] == body["memory"]["id"]
    again = await client.post(f"/v1/candidates/{cid}/approve", headers=auth())
    assert again.status_code == 409 and again.json()["error"]["code"] == "candidate_not_pending"
    assert (await client.get("/v1/memories", headers=auth())).json()["count"] == 1
    assert (await client.get("/v1/candidates", headers=auth())).json()["count"] == 0
    assert (await client.get("/v1/candidates", params={"status": "approved"}, headers=auth())).json()["count"] == 1


async def test_approve_with_fact_key_upserts(client: httpx.AsyncClient, runtime: Runtime) -> None:
    existing = await memory(client, "drink.coffee", "Drinks latte")
    cid = await candidate(runtime, "Drinks black coffee now", fact_key="drink.coffee")
    body = (await client.post(f"/v1/candidates/{cid}/approve", headers=auth())).json()
    assert body["action"] == "upserted" and body["memory"]["id"] == existing["id"]
    assert body["memory"]["content"] == "Drinks black coffee now" and body["memory"]["seen_count"] == 2


async def test_approve_with_a_live_target_supersedes_and_a_vanished_one_falls_back(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    old = await memory(client, "city", "Lives in Berlin")
    cid = await candidate(runtime, "Moved to Lisbon", target_memory_id=old["id"], kind="update")
    body = (await client.post(f"/v1/candidates/{cid}/approve", headers=auth())).json()
    assert body["action"] == "superseded" and body["memory"]["fact_key"] == "city"
    stale = await candidate(runtime, "Likes the Lisbon trams", target_memory_id=old["id"], kind="update")
    fallback = (await client.post(f"/v1/candidates/{stale}/approve", headers=auth())).json()
    assert fallback["action"] == "created" and "superseded" in fallback["notes"][0]


async def test_a_near_duplicate_is_superseded(client: httpx.AsyncClient, runtime: Runtime) -> None:
    old = await memory(client, "flower", "Her favourite flower is the sunflower.")
    cid = await candidate(runtime, "Her favourite flower is the sunflower")
    body = (await client.post(f"/v1/candidates/{cid}/approve", headers=auth())).json()
    assert body["action"] == "superseded" and body["memory"]["fact_key"] == "flower"
    assert (await client.get(f"/v1/memories/{old['id']}", headers=auth())).json()["memory"]["status"] == "superseded"


async def test_delete_candidate_archives_its_target(client: httpx.AsyncClient, runtime: Runtime) -> None:
    old = await memory(client, "job", "Works at the bakery")
    cid = await candidate(runtime, "", kind="delete", target_memory_id=old["id"])
    body = (await client.post(f"/v1/candidates/{cid}/approve", headers=auth())).json()
    assert body["action"] == "archived" and body["memory"]["status"] == "archived"


async def test_merge_and_supersede_into_a_chosen_target(client: httpx.AsyncClient, runtime: Runtime) -> None:
    target = await memory(client, "cat", "Her cat is called Mochi", importance=0.4, confidence=0.6)
    cid = await candidate(runtime, "Mochi the cat", importance=0.9, confidence=0.5, evidence=[Evidence("my cat Mochi")])
    merged = await client.post(f"/v1/candidates/{cid}/merge", json={"target_id": target["id"]}, headers=auth())
    assert merged.status_code == 200, merged.text
    memory_after = merged.json()["memory"]
    assert merged.json()["action"] == "merged" and memory_after["content"] == "Her cat is called Mochi"
    assert (memory_after["importance"], memory_after["confidence"]) == (0.9, 0.6)
    assert {"quote": "my cat Mochi", "message_id": None} in memory_after["evidence"]
    other = await candidate(runtime, "Her cat Mochi is twelve")
    superseded = (
        await client.post(f"/v1/candidates/{other}/supersede", json={"target_id": target["id"]}, headers=auth())
    ).json()
    assert superseded["action"] == "superseded" and superseded["memory"]["fact_key"] == "cat"


async def test_discard_and_refusals(client: httpx.AsyncClient, runtime: Runtime) -> None:
    cid = await candidate(runtime, "something odd")
    assert (await client.post(f"/v1/candidates/{cid}/discard", headers=auth(MCP_KEY))).status_code == 403
    assert (await client.post(f"/v1/candidates/{cid}/discard", headers=auth())).json()["candidate"][
        "status"
    ] == "discarded"
    assert (await client.post(f"/v1/candidates/{cid}/approve", headers=auth())).status_code == 409
    assert (await client.post("/v1/candidates/nope/approve", headers=auth())).status_code == 404
    assert (await client.post(f"/v1/candidates/{cid}/merge", json={}, headers=auth())).status_code == 400
    assert (await client.get("/v1/candidates", params={"status": "weird"}, headers=auth())).status_code == 400


async def test_hand_authored_targets_are_refused_and_the_candidate_stays_pending(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    mine = await memory(client, "name", "My name is Mei", authored_by="owner")
    cid = await candidate(runtime, "Her name is May", target_memory_id=mine["id"], kind="update")
    refused = await client.post(f"/v1/candidates/{cid}/approve", headers=auth())
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "authored_memory"
    merge = await client.post(f"/v1/candidates/{cid}/merge", json={"target_id": mine["id"]}, headers=auth())
    assert merge.status_code == 409
    assert (await client.get("/v1/candidates", headers=auth())).json()["candidates"][0]["id"] == cid
    secret = await candidate(runtime, "Her bank password is hunter2-very-secret")
    assert (await client.post(f"/v1/candidates/{secret}/approve", headers=auth())).status_code == 422
