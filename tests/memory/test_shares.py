"""Shared memories, over REST and MCP on both databases: a bot proposes one of its
memories into 'default'; it is recalled there (its namespace shown) only once the owner
approves, and no longer once revoked, rejected or its memory dies; the daily cap; who may
do what; and bad input answered with a 4xx and a message."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from companion_memory.api.mcp.tools import TOOLS
from companion_memory.application import shares
from companion_memory.application.principal import Principal
from companion_memory.clock import FixedClock
from companion_memory.domain.scopes import MEMORY_READ
from companion_memory.errors import PermissionDenied
from companion_memory.runtime import Runtime
from tests.api.test_mcp_scopes import mcp_call
from tests.conftest import IM_KEY, MCP_KEY, auth
from tests.memory.test_plans import tool
from tests.upstreams import RecordingUpstream

BOT = "bot.kiki"


async def remember(client: httpx.AsyncClient, content: str, namespace: str = BOT, key: str = MCP_KEY) -> str:
    written = await tool(
        client,
        "memory_upsert",
        {"fact_key": f"k.{abs(hash(content))}", "content": content, "namespace": namespace},
        key,
    )
    memory_id: str = written["memory"]["id"]
    return memory_id


async def propose(client: httpx.AsyncClient, memory_id: str, target: str = "default") -> dict[str, Any]:
    """Proposed over MCP, as a bot would."""
    return await tool(client, "memory_share", {"memory_id": memory_id, "target_namespace": target, "note": "worth it"})


async def decide(client: httpx.AsyncClient, share_id: str, action: str, key: str | None = None) -> httpx.Response:
    headers = auth(key) if key else auth()
    return await client.post(f"/v1/shares/{share_id}/{action}", json={"reason": f"{action} by test"}, headers=headers)


async def recalled(client: httpx.AsyncClient, query: str, **extra: Any) -> list[dict[str, Any]]:
    """What recall in 'default' answers over REST, checked against MCP's recall and REST's search."""
    body = {"query": query, "min_score": 0, **extra}
    rest = await client.post("/v1/memory/recall", json=body, headers=auth())
    assert rest.status_code == 200, rest.text
    hits: list[dict[str, Any]] = rest.json()["hits"]
    mcp = await tool(client, "memory_recall", body)
    search = (await client.post("/v1/memory/search", json=body, headers=auth())).json()
    assert {h["id"] for h in mcp["hits"]} == {h["id"] for h in hits} == {h["id"] for h in search["hits"]}
    return hits


async def listed(client: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    rest = (await client.get("/v1/shares", params=params, headers=auth())).json()
    mcp = await tool(client, "share_list", params)
    assert mcp == rest and rest["count"] == len(rest["shares"])
    found: list[dict[str, Any]] = rest["shares"]
    return found


async def test_proposed_then_approved_is_recalled_with_its_namespace_until_revoked(client: httpx.AsyncClient) -> None:
    memory_id = await remember(client, "The user's cat Mochi is afraid of thunderstorms")
    assert await recalled(client, "Mochi thunderstorms") == []  # another namespace: not seen

    share = await propose(client, memory_id)
    assert share["status"] == "proposed" and share["source_namespace"] == BOT and share["proposed_by"] == "mcp"
    assert await recalled(client, "Mochi thunderstorms") == []  # waiting for the owner: never recalled
    assert [s["id"] for s in await listed(client, status="proposed")] == [share["id"]]

    approved = await decide(client, share["id"], "approve")
    assert approved.status_code == 200 and approved.json()["status"] == "approved", approved.text
    assert approved.json()["decided_by"] == "chatbox"
    hits = await recalled(client, "Mochi thunderstorms")
    assert [(h["id"], h["namespace"], h["share_id"]) for h in hits] == [(memory_id, BOT, share["id"])]
    assert "vector" in hits[0]["channels"]  # scored by meaning too, though the index filters by namespace
    prompt = (await tool(client, "memory_recall", {"query": "Mochi thunderstorms", "min_score": 0}))["prompt"]
    assert f"shared from {BOT}" in prompt and "Mochi" in prompt
    # In its own namespace it is an ordinary hit.
    own = await tool(client, "memory_search", {"query": "Mochi thunderstorms", "namespace": BOT, "min_score": 0})
    assert [(h["id"], h["share_id"]) for h in own["hits"]] == [(memory_id, None)]

    revoked = await decide(client, share["id"], "revoke")
    assert revoked.json()["status"] == "revoked"
    assert await recalled(client, "Mochi thunderstorms") == []
    detail = (await client.get(f"/v1/shares/{share['id']}", headers=auth())).json()
    assert [(e["event"], e["actor"]) for e in detail["events"]] == [
        ("proposed", "mcp"),
        ("approved", "chatbox"),
        ("revoked", "chatbox"),
    ]
    assert detail["events"][0]["reason"] == "worth it" and detail["reason"] == "revoke by test"


async def test_a_rejected_share_is_never_recalled_and_cannot_be_approved_later(client: httpx.AsyncClient) -> None:
    memory_id = await remember(client, "Kiki's favourite snack is dried mango")
    share = await propose(client, memory_id)
    assert (await decide(client, share["id"], "reject")).json()["status"] == "rejected"
    late = await decide(client, share["id"], "approve")
    assert late.status_code == 409 and late.json()["error"]["code"] == "share_closed"
    assert await recalled(client, "dried mango snack") == []
    assert [s["id"] for s in await listed(client, status="rejected")] == [share["id"]]
    # Rejected is closed: the memory may be proposed again.
    assert (await propose(client, memory_id))["status"] == "proposed"


async def test_cross_namespace_recall_ranks_namespaces_together_and_names_each(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    home = await remember(client, "Dinner plans: hotpot with the family on Friday", namespace="default")
    work = await remember(client, "Dinner with the team after the Friday release", namespace="work")
    await remember(client, "Friday dinner at grandma's", namespace="elsewhere")
    hits = await recalled(client, "Friday dinner", namespaces=["work"])
    assert {(h["id"], h["namespace"]) for h in hits} == {(home, "default"), (work, "work")}
    assert all(h["share_id"] is None for h in hits)
    assert [h["id"] for h in await recalled(client, "Friday dinner")] == [home]
    # The vector channel alone (words off) finds across both too: the index filters with $in.
    both = await runtime.recall.run("Friday dinner", namespaces=["work"], min_score=0, rerank=False)
    assert {h.memory.id for h in both.hits} == {home, work}
    assert both.hits[0].channels.get("vector") and any("vector" in h.channels for h in both.hits[1:])


async def test_a_share_follows_its_memory_out_on_delete_supersede_and_archive(client: httpx.AsyncClient) -> None:
    doomed = await remember(client, "Kiki keeps the spare key under the blue flowerpot")
    replaced = await remember(client, "Kiki's dentist appointment is on Tuesday")
    archived = await remember(client, "Kiki's bicycle has a flat tyre")
    for memory_id in (doomed, replaced, archived):
        share = await propose(client, memory_id)
        assert (await decide(client, share["id"], "approve")).status_code == 200
    assert len(await recalled(client, "spare key flowerpot")) == 1

    assert (await client.delete(f"/v1/memories/{doomed}", headers=auth())).status_code == 200
    newer = await tool(client, "memory_supersede", {"old_id": replaced, "content": "Kiki's dentist moved to Thursday"})
    new_id = newer["memory"]["id"]
    await tool(client, "memory_archive", {"id": archived})
    assert await recalled(client, "spare key flowerpot") == []  # never a dead memory
    assert await recalled(client, "bicycle flat tyre") == []
    assert await recalled(client, "Kiki dentist") == []  # nor its newer version, which nobody shared

    # One share read on its own is marked too.
    one = (await client.get(f"/v1/shares/{share['id']}", headers=auth())).json()
    assert one["status"] == "revoked" and one["events"][-1]["actor"] == "system"
    revoked = {s["memory_id"]: s for s in await listed(client, status="revoked")}
    assert revoked[doomed]["reason"] == "memory deleted" and revoked[doomed]["decided_by"] == "system"
    assert revoked[replaced]["reason"] == f"memory superseded by {new_id}"
    assert revoked[archived]["reason"] == "memory archived"
    assert await listed(client, status="approved") == []
    # The newer version can be shared in its own right.
    assert (await propose(client, new_id))["status"] == "proposed"


async def test_a_proposal_whose_memory_died_cannot_be_approved(client: httpx.AsyncClient) -> None:
    memory_id = await remember(client, "Kiki's old address was Rue Cler")
    share = await propose(client, memory_id)
    assert (await client.delete(f"/v1/memories/{memory_id}", headers=auth())).status_code == 200
    refused = await decide(client, share["id"], "approve")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "memory_not_live"
    assert "memory deleted" in refused.json()["error"]["message"]
    detail = (await client.get(f"/v1/shares/{share['id']}", headers=auth())).json()
    assert detail["status"] == "revoked" and [e["event"] for e in detail["events"]] == ["proposed", "revoked"]
    assert await recalled(client, "Rue Cler address") == []


async def test_the_daily_cap_per_source_namespace(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    runtime.settings = runtime.settings.model_copy(update={"SHARE_DAILY_NOMINATION_CAP": 2})
    runtime.__dict__.pop("sharing", None)
    ids = [await remember(client, f"Bot memory number {n} about kites") for n in range(3)]
    for memory_id in ids[:2]:
        await propose(client, memory_id)
    over = await client.post(
        "/v1/shares", json={"memory_id": ids[2], "target_namespace": "default"}, headers=auth(MCP_KEY)
    )
    assert over.status_code == 409 and over.json()["error"]["code"] == "share_cap_reached"
    assert "SHARE_DAILY_NOMINATION_CAP=2" in over.json()["error"]["message"]
    # Another namespace has its own count; and the next local day starts afresh.
    other = await remember(client, "Work memory about kites", namespace="work")
    assert (await propose(client, other))["status"] == "proposed"
    clock.advance(hours=4)  # 2026-11-30 20:00 in Singapore → 00:00 the next day
    assert (await propose(client, ids[2]))["status"] == "proposed"


async def test_who_may_propose_decide_and_revoke(client: httpx.AsyncClient, runtime: Runtime) -> None:
    memory_id = await remember(client, "Kiki learned to whistle")
    reader = Principal("reader", frozenset({MEMORY_READ}))
    with pytest.raises(PermissionDenied):
        await shares.propose_share(
            runtime, reader, shares.ShareProposal(memory_id=memory_id, target_namespace="default")
        )
    share = await propose(client, memory_id)
    for action in ("approve", "reject"):
        refused = await decide(client, share["id"], action, MCP_KEY)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden", refused.text
    # Another key that may write did not propose it, and is not the owner.
    assert (await decide(client, share["id"], "revoke", IM_KEY)).status_code == 403
    assert (await decide(client, share["id"], "approve")).status_code == 200
    # The proposer may take back its own share.
    assert (await decide(client, share["id"], "revoke", MCP_KEY)).json()["decided_by"] == "mcp"
    # Deciding is REST's (the owner's); MCP offers proposing and listing only.
    assert {name for name in TOOLS if "share" in name} == {"memory_share", "share_list"}


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({"memory_id": "nope", "target_namespace": "default"}, 404, "not_found"),
        ({"memory_id": "{own}", "target_namespace": BOT}, 400, "same_namespace"),
        ({"memory_id": "{own}", "target_namespace": "not a namespace!"}, 400, "invalid_request"),
        ({"memory_id": "{own}"}, 400, "invalid_request"),
        ({"memory_id": "{dead}", "target_namespace": "default"}, 409, "memory_not_live"),
        ({"memory_id": "{shared}", "target_namespace": "default"}, 409, "share_exists"),
    ],
)
async def test_bad_proposals_are_refused_with_a_message(
    client: httpx.AsyncClient, body: dict[str, Any], status: int, code: str
) -> None:
    ids = {
        "own": await remember(client, "Kiki likes the rain"),
        "dead": await remember(client, "Kiki's old phone number was lost"),
        "shared": await remember(client, "Kiki plays the ukulele"),
    }
    await client.post(f"/v1/memories/{ids['dead']}/archive", headers=auth())
    await propose(client, ids["shared"])
    body = {k: v.format(**ids) if isinstance(v, str) else v for k, v in body.items()}
    rest = await client.post("/v1/shares", json=body, headers=auth(MCP_KEY))
    assert rest.status_code == status and rest.json()["error"]["code"] == code, rest.text
    assert rest.json()["error"]["message"]
    mcp = (await mcp_call(client, MCP_KEY, "memory_share", body)).json()["result"]
    assert mcp["isError"] is True and mcp["content"][0]["text"]


async def test_unknown_shares_and_statuses_are_4xx(client: httpx.AsyncClient) -> None:
    for action in ("approve", "reject", "revoke"):
        missing = await decide(client, "no-such-share", action)
        assert missing.status_code == 404 and "no-such-share" in missing.json()["error"]["message"]
    assert (await client.get("/v1/shares/no-such-share", headers=auth())).status_code == 404
    bad = await client.get("/v1/shares", params={"status": "pending"}, headers=auth())
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_status"
    # A decision without a body is fine; one with a body that is not an object is not.
    memory_id = await remember(client, "Kiki's umbrella is yellow")
    share = await propose(client, memory_id)
    assert (await client.post(f"/v1/shares/{share['id']}/approve", headers=auth())).status_code == 200
    wrong = await client.post(f"/v1/shares/{share['id']}/revoke", json=["x"], headers=auth())
    assert wrong.status_code == 400


async def test_an_approved_share_reaches_the_chat_prompt(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream
) -> None:
    memory_id = await remember(client, "Kiki's owner is allergic to peanuts")
    share = await propose(client, memory_id)
    question = {"model": "companion", "messages": [{"role": "user", "content": "Can I add peanuts to the cake?"}]}

    async def sent() -> str:
        answer = await client.post("/v1/chat/completions", json=question, headers=auth())
        assert answer.status_code == 200, answer.text
        content: str = upstream.requests[-1].json["messages"][-1]["content"]
        return content

    assert "allergic" not in await sent()
    await decide(client, share["id"], "approve")
    assert "allergic to peanuts" in await sent()
