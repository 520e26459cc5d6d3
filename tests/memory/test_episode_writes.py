"""What was said becomes an episode (issue 29): every stored message, once, in the batch
that stores it; ``<private>`` spans never stored; secrets masked in the episode; embedded
in the background through the vector outbox, retried when that fails; the gateway's user
turn takes recall's query vector, so the chat's path embeds nothing else. Over HTTP, on
SQLite, the fake D1 and the real D1 engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import pytest

from companion_memory.clock import FixedClock
from companion_memory.errors import InvalidInput
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.ports import Embedder, EmbeddingKind
from companion_memory.runtime import Runtime
from companion_memory.store.messages import MessageRow, MessageStore
from tests.conftest import DEBUG_KEY, IM_KEY, auth
from tests.upstreams import RecordingUpstream


async def ingest(client: httpx.AsyncClient, messages: list[dict[str, Any]], conversation: str = "c1") -> Any:
    answer = await client.post(
        "/v1/ingest/messages",
        json={"conversation_id": conversation, "source": "hook", "messages": messages},
        headers=auth(IM_KEY),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()


async def episodes(runtime: Runtime) -> list[dict[str, Any]]:
    return await runtime.db.all(
        "SELECT id, namespace, conversation_id, role, source, content, sensitive, created_at FROM episodes "
        "ORDER BY created_at, rowid"
    )


async def outbox(runtime: Runtime) -> list[tuple[str, str, str]]:
    rows = await runtime.db.all("SELECT memory_id, kind, op FROM vector_outbox ORDER BY memory_id")
    return [(r["memory_id"], r["kind"], r["op"]) for r in rows]


async def test_every_stored_message_is_one_episode_found_by_its_words(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    said = [
        {"role": "user", "content": "I adopted a beagle called Toby", "created_at": "2026-11-30T09:00:00Z"},
        {"role": "assistant", "content": "Toby is a lovely name!", "created_at": "2026-11-30T09:00:05Z"},
        {"role": "user", "content": "我周末去爬山了", "created_at": "2026-11-30T09:01:00Z"},
    ]
    first = await ingest(client, said)
    again = await ingest(client, said)  # a retry: no message, no episode twice
    assert again["duplicates"] == 3
    ids = [m["id"] for m in first["messages"]]
    stored = await episodes(runtime)
    assert [e["id"] for e in stored] == ids
    assert [(e["role"], e["content"], e["created_at"]) for e in stored] == [
        ("user", "I adopted a beagle called Toby", "2026-11-30T09:00:00.000Z"),
        ("assistant", "Toby is a lovely name!", "2026-11-30T09:00:05.000Z"),
        ("user", "我周末去爬山了", "2026-11-30T09:01:00.000Z"),
    ]
    assert {(e["conversation_id"], e["source"], e["namespace"]) for e in stored} == {("c1", "hook", "default")}
    # Indexed for words (CJK as bigrams) and for substrings, as memories are.
    found = await runtime.db.all(
        "SELECT e.id FROM episodes_fts JOIN episodes e ON e.rowid = episodes_fts.rowid WHERE episodes_fts MATCH ?",
        ("爬山",),
    )
    assert [r["id"] for r in found] == [ids[2]]
    found = await runtime.db.all(
        "SELECT e.id FROM episodes_substring JOIN episodes e ON e.rowid = episodes_substring.rowid "
        "WHERE episodes_substring MATCH ?",
        ('"beagl"',),
    )
    assert [r["id"] for r in found] == [ids[0]]
    # Each waits in the outbox to be embedded in the background.
    assert await outbox(runtime) == [(i, "episode", "upsert") for i in sorted(ids)]


async def test_a_long_batch_is_one_episode_per_message(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """Several episodes to a statement, under D1's 100 parameters (the fake and real D1 check)."""
    said = [{"role": "user", "content": f"turn number {i}"} for i in range(1000)]
    assert (await ingest(client, said))["stored"] == 1000
    assert await runtime.db.first("SELECT COUNT(*) AS n FROM episodes") == {"n": 1000}
    assert (await runtime.mirror.outbox.stats())["pending"] == 1000


async def test_a_private_span_is_never_stored(client: httpx.AsyncClient, runtime: Runtime) -> None:
    answer = await ingest(
        client,
        [
            {"role": "user", "content": "I live at <private>12 Elm Street</private> near the park"},
            {"role": "user", "content": "我住在<PRIVATE>北京朝阳区</private>，很安静"},
            {"role": "user", "content": "<private>my diagnosis is asthma</private>"},
            {"role": "user", "content": "then <private>it was left open and ran on"},
        ],
    )
    assert answer["stored"] == 4
    messages = await runtime.db.all("SELECT content FROM messages ORDER BY rowid")
    assert [m["content"] for m in messages] == ["I live at near the park", "我住在，很安静", "", "then"]
    # Nothing left to recall, no episode: three of four.
    assert [e["content"] for e in await episodes(runtime)] == ["I live at near the park", "我住在，很安静", "then"]
    dump = str(await runtime.db.all("SELECT * FROM messages")) + str(await runtime.db.all("SELECT * FROM episodes"))
    for secret in ("Elm", "朝阳", "asthma", "ran on", "private>"):
        assert secret not in dump


async def test_a_secret_is_masked_in_the_episode_and_kept_for_the_dream(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    await ingest(
        client,
        [
            {"role": "user", "content": "the wifi password: hunter22! and call me at 13812345678"},
            {"role": "user", "content": "my key is sk-proj-abcdefghijklmnopqrstuvwxyz123456"},
        ],
    )
    (wifi, key) = await episodes(runtime)
    assert wifi["content"] == "the wifi password: [credential] and call me at [phone]"
    assert wifi["sensitive"] == '["credential","phone"]'
    assert key["content"] == "my key is [credential]"
    for index in ("episodes_fts", "episodes_substring"):
        assert not await runtime.db.all(f"SELECT rowid FROM {index} WHERE {index} MATCH ?", ('"hunter22"',))
    # The raw message is what the dream reads (its own filter refuses secrets in memories).
    raw = await runtime.db.all("SELECT content FROM messages ORDER BY rowid")
    assert "hunter22" in raw[0]["content"]


async def test_episodes_are_embedded_in_the_background_and_a_failure_is_retried(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    ids = [
        m["id"] for m in (await ingest(client, [{"role": "user", "content": "Toby chewed my slippers"}]))["messages"]
    ]
    assert await runtime.vectors.get(ids) == []  # storing did not wait for an embedding
    runtime.vectors.down = True  # type: ignore[attr-defined]
    report = await runtime.mirror.drain()
    assert report.failed == 1
    [entry] = await runtime.db.all("SELECT attempts, last_error FROM vector_outbox")
    assert entry["attempts"] == 1 and "unavailable" in entry["last_error"]
    runtime.vectors.down = False  # type: ignore[attr-defined]
    runtime.clock.advance(minutes=1)  # type: ignore[attr-defined]
    assert (await runtime.mirror.drain()).synced == 1
    [record] = await runtime.vectors.get(ids)
    assert dict(record.metadata) == {
        "namespace": "default",
        "status": "active",
        "kind": "episode",
        "type": "episode",
        "role": "user",
    }
    assert await outbox(runtime) == []


async def test_memory_vector_queries_never_answer_an_episode(client: httpx.AsyncClient, runtime: Runtime) -> None:
    """Memories and episodes share the index; every memory query filters on kind."""
    await ingest(client, [{"role": "user", "content": "I like jasmine tea"}])
    await runtime.mirror.drain()
    mirror = runtime.mirror
    assert await mirror.near_duplicate("default", "I like jasmine tea", 0.5) is None
    assert await mirror.similar("default", text="I like jasmine tea") == []
    written = await runtime.writer.create("default", MemoryDraft(content="I like jasmine tea"), Actor("test"))
    assert await mirror.near_duplicate("default", "I like jasmine tea", 0.5) == written.memory.id
    assert await mirror.duplicates_of(written.memory, 0.0) == []
    hits = (await runtime.recall.run("jasmine tea", rerank=False)).hits
    assert [h.memory.id for h in hits] == [written.memory.id]


class CountingEmbedder:
    """The test embedder, recording each call's kind and texts."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model, self.dimensions, self.similarity_range = inner.model, inner.dimensions, inner.similarity_range
        self.calls: list[tuple[EmbeddingKind, list[str]]] = []

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        self.calls.append((kind, list(texts)))
        return await self.inner.embed(texts, kind=kind)


@pytest.fixture
def counting(dreaming: Runtime) -> CountingEmbedder:
    counting = CountingEmbedder(dreaming.embedder)
    dreaming.embedder = counting
    for cached in ("mirror", "writer", "ingestor", "recall", "gateway"):
        dreaming.__dict__.pop(cached, None)
    return counting


async def chat(client: httpx.AsyncClient, content: str) -> None:
    turn = {"model": "companion", "messages": [{"role": "user", "content": content}]}
    answer = await client.post("/v1/chat/completions", json=turn, headers=auth())
    assert answer.status_code == 200, answer.text


async def test_the_chat_path_embeds_the_query_alone_and_the_user_turn_reuses_it(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream, counting: CountingEmbedder
) -> None:
    upstream.reply_text = "Lovely, how was the view?"
    await chat(client, "I climbed Mount Tai <private>with my ex</private> yesterday")
    assert counting.calls == [("query", ["i climbed mount tai yesterday"])]
    user, reply = await episodes(dreaming)
    assert (user["role"], user["content"]) == ("user", "I climbed Mount Tai yesterday")
    [placed] = await dreaming.vectors.get([user["id"]])
    query_vector = (await counting.inner.embed(["i climbed mount tai yesterday"], kind="query"))[0]
    assert list(placed.values) == pytest.approx(query_vector, abs=1e-6)  # the index keeps float32
    # The reply is embedded in the background, not on the chat's path.
    assert await outbox(dreaming) == [(reply["id"], "episode", "upsert")]
    await dreaming.mirror.drain()
    assert counting.calls[1:] == [("passage", ["lovely, how was the view"])]
    assert len(await dreaming.vectors.get([reply["id"]])) == 1


async def test_a_user_turn_with_a_secret_is_embedded_from_its_masked_words(
    client: httpx.AsyncClient, dreaming: Runtime, upstream: RecordingUpstream, counting: CountingEmbedder
) -> None:
    upstream.reply_text = "Noted."
    await chat(client, "my door code password: 4711-0815")
    user, _ = await episodes(dreaming)
    assert await dreaming.vectors.get([user["id"]]) == []  # the query's vector holds the secret
    await dreaming.mirror.drain()
    [(kind, texts)] = counting.calls[1:]
    assert kind == "passage" and sorted(texts) == ["my door code password: [credential]", "noted"]


async def test_reindex_and_health_cover_episodes(client: httpx.AsyncClient, runtime: Runtime) -> None:
    await runtime.writer.create("default", MemoryDraft(content="I like jasmine tea"), Actor("test"))
    await ingest(client, [{"role": "user", "content": "Toby chewed my slippers"}, {"role": "user", "content": "ok"}])
    health = (await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
    assert (health["episodes"], health["missing_from_index"], health["outbox"]["pending"]) == (2, 2, 2)
    await runtime.mirror.drain()
    health = (await client.get("/v1/debug/vector_health", headers=auth(DEBUG_KEY))).json()
    assert (health["missing_from_index"], health["indexed_vectors"]) == (0, 3)

    step = (await client.post("/v1/debug/vector_reindex", json={"restart": True}, headers=auth(DEBUG_KEY))).json()
    assert (step["queued"], step["indexed_now"], step["episodes"], step["done"]) == (3, 3, 2, True)
    kinds = sorted(r.metadata["kind"] for r in await runtime.vectors.get([*await episode_ids(runtime)]))
    assert kinds == ["episode", "episode"]


async def episode_ids(runtime: Runtime) -> list[str]:
    return [e["id"] for e in await episodes(runtime)]


async def test_retention_keeps_messages_and_episodes_apart(
    client: httpx.AsyncClient, runtime: Runtime, clock: FixedClock
) -> None:
    """MESSAGES_RETENTION_DAYS (7) is what the dream may read; EPISODE_RETENTION_DAYS
    (365) what recall finds. A message that goes leaves its episode, and the reverse. Both
    count from when what was said reached the memory too: a year-old message stored today
    (an import's) is kept as long as one said today."""
    old = await ingest(client, [{"role": "user", "content": "I moved to Lisbon", "created_at": "2025-11-01T10:00:00Z"}])
    week = await ingest(
        client, [{"role": "user", "content": "I started pottery", "created_at": "2026-11-20T10:00:00Z"}]
    )
    await runtime.mirror.drain()
    [lisbon] = [m["id"] for m in old["messages"]]
    [pottery] = [m["id"] for m in week["messages"]]
    report = await runtime.retention.run(force=True)
    assert (report["messages"], report["episodes_expired"]) == (0, 0)

    clock.advance(days=8)
    report = await runtime.retention.run(force=True)
    assert (report["messages"], report["episodes_expired"]) == (2, 0)
    assert await runtime.db.all("SELECT id FROM messages") == []
    assert sorted(await episode_ids(runtime)) == sorted([lisbon, pottery])

    later = await ingest(client, [{"role": "user", "content": "I bought a kiln"}])
    [kiln] = [m["id"] for m in later["messages"]]
    clock.advance(days=360)
    report = await runtime.retention.run(force=True)
    assert report["episodes_expired"] == 2
    await runtime.mirror.drain()
    assert await episode_ids(runtime) == [kiln]
    assert await runtime.vectors.get([lisbon]) == [] and len(await runtime.vectors.get([kiln])) == 1


async def test_retention_gives_older_messages_their_episodes(runtime: Runtime) -> None:
    """Messages stored before episodes were (an upgrade) get theirs, private spans cut."""
    await runtime.db.batch(
        [
            MessageStore.insert_if_new(
                MessageRow(
                    id=f"m{i}",
                    namespace="default",
                    conversation_id="c1",
                    role="user",
                    content=content,
                    client_hash=f"h{i}",
                    source="ingest",
                    model=None,
                    metadata=None,
                    created_at=f"2026-11-30T10:00:0{i}.000Z",
                    stored_at="2026-11-30T10:00:00.000Z",
                )
            )
            for i, content in enumerate(["I have a cat called Mochi", "<private>only this</private>", "my pin 1234"])
        ]
    )
    report = await runtime.retention.run(force=True)
    assert report["episodes_backfilled"] == 2
    assert [(e["id"], e["content"]) for e in await episodes(runtime)] == [
        ("m0", "I have a cat called Mochi"),
        ("m2", "my pin 1234"),
    ]
    assert (await runtime.db.first("SELECT content FROM messages WHERE id = 'm1'")) == {"content": ""}
    assert (await runtime.retention.run(force=True))["episodes_backfilled"] == 0
    assert len(await runtime.vectors.get(["m0", "m2"])) == 2


async def test_forgetting_removes_the_vectors_first_then_the_words_and_rows(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    day = [
        {"role": "user", "content": "I argued with my sister", "created_at": "2026-11-29T20:00:00Z"},
        {"role": "assistant", "content": "That sounds hard", "created_at": "2026-11-29T20:00:05Z"},
        {"role": "user", "content": "<private>all of it</private>", "created_at": "2026-11-29T20:01:00Z"},
    ]
    first = [m["id"] for m in (await ingest(client, day, conversation="evening"))["messages"]]
    other = [
        m["id"]
        for m in (
            await ingest(client, [{"role": "user", "content": "I bought a bike", "created_at": "2026-11-30T08:00:00Z"}])
        )["messages"]
    ]
    await runtime.mirror.drain()
    forgetter = runtime.episode_forgetter
    with pytest.raises(InvalidInput):
        await forgetter.forget("default")

    # While the index is down the words are gone at once, the rows wait for their vectors.
    runtime.vectors.down = True  # type: ignore[attr-defined]
    assert await forgetter.forget("default", ids=[first[0]]) == 1
    assert await runtime.db.first("SELECT content FROM episodes WHERE id = ?", (first[0],)) == {"content": ""}
    assert not await runtime.db.all("SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH 'sister'")
    runtime.vectors.down = False  # type: ignore[attr-defined]
    assert len(await runtime.vectors.get([first[0]])) == 1
    runtime.clock.advance(minutes=1)  # type: ignore[attr-defined]
    await runtime.mirror.drain()
    assert await runtime.vectors.get([first[0]]) == []
    assert await runtime.db.all("SELECT id FROM messages WHERE id = ?", (first[0],)) == []

    # A conversation: its episodes and the message that had none.
    assert await forgetter.forget("default", conversation_id="evening") == 2
    assert await runtime.db.all("SELECT id FROM messages WHERE conversation_id = 'evening'") == []
    assert await runtime.vectors.get(first) == []
    # A time range, in another namespace: nothing; in this one, the bike.
    assert await forgetter.forget("work", since="2026-11-30T00:00:00.000Z") == 0
    assert await forgetter.forget("default", since="2026-11-30T00:00:00.000Z", until="2026-12-01T00:00:00.000Z") == 1
    assert await episodes(runtime) == [] and await runtime.vectors.get(other) == []
    assert await outbox(runtime) == []


async def test_a_private_span_is_never_stored_by_a_memory_write_or_the_dream(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    written = await client.post(
        "/v1/memories",
        json={"fact_key": "work", "content": "I work at <private>Acme Corp</private> as a nurse"},
        headers=auth(),
    )
    assert written.status_code == 201 and written.json()["memory"]["content"] == "I work at as a nurse"
    refused = await client.post(
        "/v1/memories", json={"fact_key": "all", "content": "<private>all of it</private>"}, headers=auth()
    )
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "empty_content"
    kept = await client.post("/v1/precious", json={"content": "you said <private>x</private> I matter"}, headers=auth())
    assert kept.json()["precious"]["content"] == "you said I matter"

    await ingest(
        client,
        [
            {
                "role": "user",
                "content": "Please remember that my sister's name is Lin <private>and she is ill</private>.",
                "created_at": "2026-11-29T02:00:00Z",
            }
        ],
    )
    await runtime.dream.night()
    candidates = (await client.get("/v1/candidates", headers=auth())).json()["candidates"]
    assert [c["content"] for c in candidates] == ["My sister's name is Lin"]
    everything = str(await runtime.db.all("SELECT * FROM memories"))
    everything += str(await runtime.db.all("SELECT * FROM memory_candidates"))
    assert "Acme" not in everything and "she is ill" not in everything
