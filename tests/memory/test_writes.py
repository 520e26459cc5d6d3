"""The write paths, on SQLite and on D1: upsert, supersede, edit, archive, delete,
hand-authored protection, the sensitive-data filter, audit events, the outbox."""

from __future__ import annotations

import dataclasses

import pytest

from companion_memory.domain.memory import Evidence
from companion_memory.errors import Conflict, InvalidInput, NotFound, SensitiveContent
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.memory.vector_passes import PassStep
from companion_memory.runtime import Runtime

AGENT = Actor("mcp")
OWNER = Actor("chatbox", owner=True)


async def vector_ids(runtime: Runtime) -> set[str]:
    matches = await runtime.vectors.inner.query([0.0] * runtime.vectors.dimensions, top_k=1000)  # type: ignore[attr-defined]
    return {m.id for m in matches}


async def test_upsert_creates_then_updates_in_place(runtime: Runtime) -> None:
    first = await runtime.writer.upsert(
        "default", MemoryDraft(content="She drinks oat-milk latte", fact_key="drink.coffee", type="preference"), AGENT
    )
    assert first.created and first.action == "created" and first.vector == "synced"
    assert first.memory.seen_count == 1 and first.memory.type == "preference"

    second = await runtime.writer.upsert(
        "default", MemoryDraft(content="She switched to black coffee", fact_key="drink.coffee"), AGENT
    )
    assert not second.created and second.action == "updated"
    assert second.memory.id == first.memory.id
    assert second.memory.seen_count == 2
    assert second.memory.content == "She switched to black coffee"

    stored = await runtime.writer.store.get(first.memory.id)
    assert stored is not None and stored.content == "She switched to black coffee" and stored.seen_count == 2
    # Re-embedded: the vector now answers a query about the new content best.
    query = (await runtime.embedder.embed(["black coffee"], kind="query"))[0]
    best = await runtime.vectors.query(query, top_k=1)
    assert best[0].id == first.memory.id
    events = [e.event for e in await runtime.writer.store.events(first.memory.id)]
    assert events == ["created", "updated"]


async def test_upsert_requires_fact_key_and_content(runtime: Runtime) -> None:
    with pytest.raises(InvalidInput, match="fact_key"):
        await runtime.writer.upsert("default", MemoryDraft(content="x"), AGENT)
    with pytest.raises(InvalidInput, match="empty"):
        await runtime.writer.upsert("default", MemoryDraft(content="   ", fact_key="k"), AGENT)


async def test_namespaces_keep_the_same_fact_key_apart(runtime: Runtime) -> None:
    a = await runtime.writer.upsert("alice", MemoryDraft(content="likes tea", fact_key="drink"), AGENT)
    b = await runtime.writer.upsert("bob", MemoryDraft(content="likes juice", fact_key="drink"), AGENT)
    assert a.created and b.created and a.memory.id != b.memory.id


async def test_unknown_type_becomes_note_on_create(runtime: Runtime) -> None:
    result = await runtime.writer.upsert("default", MemoryDraft(content="x y z", fact_key="k", type="wibble"), AGENT)
    assert result.memory.type == "note" and "wibble" in result.notes[0]
    aliased = await runtime.writer.upsert(
        "default", MemoryDraft(content="no calls after 10pm", fact_key="k2", type="Rules"), AGENT
    )
    assert aliased.memory.type == "boundary"


async def test_supersede_keeps_history_and_moves_the_vector(runtime: Runtime) -> None:
    old = (
        await runtime.writer.upsert(
            "default", MemoryDraft(content="Lives in Berlin", fact_key="home.city", type="fact"), AGENT
        )
    ).memory
    result = await runtime.writer.supersede("default", old.id, MemoryDraft(content="Moved to Lisbon in 2026"), AGENT)
    new = result.memory
    assert result.action == "superseded" and result.old_status == "active"
    assert new.fact_key == "home.city" and new.type == "fact"
    previous = await runtime.writer.store.get(old.id)
    assert previous is not None
    assert (previous.status, previous.version_status, previous.superseded_by) == ("superseded", "historical", new.id)
    relations = await runtime.writer.store.relations(new.id)
    assert [(r.source_id, r.target_id, r.relation) for r in relations] == [(new.id, old.id, "supersedes")]
    assert await vector_ids(runtime) == {new.id}
    # The fact key now resolves to the new version.
    current = await runtime.writer.store.current_by_fact_key("default", "home.city")
    assert current is not None and current.id == new.id


async def test_supersede_of_a_missing_memory_creates_and_says_so(runtime: Runtime) -> None:
    result = await runtime.writer.supersede(
        "default", "no-such-id", MemoryDraft(content="fresh fact", fact_key="f"), AGENT
    )
    assert result.created and result.old_status == "missing"


async def test_supersede_refuses_a_memory_that_is_no_longer_active(runtime: Runtime) -> None:
    old = (await runtime.writer.upsert("default", MemoryDraft(content="a", fact_key="k"), AGENT)).memory
    await runtime.writer.supersede("default", old.id, MemoryDraft(content="b"), AGENT)
    with pytest.raises(Conflict, match="superseded"):
        await runtime.writer.supersede("default", old.id, MemoryDraft(content="c"), AGENT)


async def test_archive_and_soft_delete_remove_the_vector_and_keep_the_row(runtime: Runtime) -> None:
    a = (await runtime.writer.upsert("default", MemoryDraft(content="archived thing", fact_key="a"), AGENT)).memory
    d = (await runtime.writer.upsert("default", MemoryDraft(content="deleted thing", fact_key="d"), AGENT)).memory
    assert (await runtime.writer.archive(a.id, AGENT)).memory.status == "archived"
    assert (await runtime.writer.delete(d.id, AGENT)).memory.status == "deleted"
    assert await vector_ids(runtime) == set()
    assert (await runtime.writer.store.get(a.id)).status == "archived"  # type: ignore[union-attr]
    assert (await runtime.writer.store.get(d.id)).status == "deleted"  # type: ignore[union-attr]
    # The key is free again for a new live memory.
    again = await runtime.writer.upsert("default", MemoryDraft(content="new thing", fact_key="a"), AGENT)
    assert again.created


async def test_hard_delete_removes_vector_then_row(runtime: Runtime) -> None:
    m = (await runtime.writer.upsert("default", MemoryDraft(content="to be purged", fact_key="p"), AGENT)).memory
    result = await runtime.writer.delete(m.id, OWNER, hard=True)
    assert result.action == "purged" and result.vector == "synced"
    assert await runtime.writer.store.get(m.id) is None
    assert await vector_ids(runtime) == set()
    with pytest.raises(NotFound):
        await runtime.writer.delete(m.id, OWNER)


async def test_hard_delete_keeps_the_row_while_the_index_is_down(runtime: Runtime) -> None:
    m = (await runtime.writer.upsert("default", MemoryDraft(content="to be purged", fact_key="p"), AGENT)).memory
    runtime.vectors.down = True  # type: ignore[attr-defined]
    result = await runtime.writer.delete(m.id, OWNER, hard=True)
    assert result.vector == "pending"
    assert await runtime.writer.store.get(m.id) is not None  # the vector is still there, so is the row
    runtime.vectors.down = False  # type: ignore[attr-defined]
    runtime.clock.advance(minutes=5)  # type: ignore[attr-defined]
    report = await runtime.mirror.drain()
    assert report.synced == 1
    assert await runtime.writer.store.get(m.id) is None
    assert await vector_ids(runtime) == set()


async def test_hand_authored_memories_refuse_automatic_writers(runtime: Runtime) -> None:
    mine = (
        await runtime.writer.upsert(
            "default", MemoryDraft(content="My name is Mei", fact_key="name", authored_by="owner"), OWNER
        )
    ).memory
    for attempt in (
        runtime.writer.upsert("default", MemoryDraft(content="Name is May", fact_key="name"), AGENT),
        runtime.writer.supersede("default", mine.id, MemoryDraft(content="Name is May"), AGENT),
        runtime.writer.edit(mine.id, MemoryDraft(content="Name is May"), AGENT),
        runtime.writer.archive(mine.id, AGENT),
        runtime.writer.delete(mine.id, AGENT),
    ):
        with pytest.raises(Conflict) as refused:
            await attempt
        assert refused.value.code == "authored_memory"
    assert (await runtime.writer.store.get(mine.id)).content == "My name is Mei"  # type: ignore[union-attr]
    # The owner can still change it.
    edited = await runtime.writer.edit(mine.id, MemoryDraft(content="My name is Mei Lin"), OWNER)
    assert edited.memory.content == "My name is Mei Lin"


@pytest.mark.parametrize(
    "content, kind",
    [
        ("my openai key is sk-proj-abcdefghijklmnopqrstuvwxyz123456", "credential"),
        ("The wifi password: hunter22!", "credential"),
        ("我的密码是 abc12345", "credential"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=\n-----END OPENSSH PRIVATE KEY-----", "private_key"),
        ("card 4111 1111 1111 1111 exp 12/29", "payment_card"),
        ("身份证 11010519491231002X", "national_id"),
        ("call me at 13812345678", "phone"),
        ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "credential"),
    ],
)
async def test_sensitive_data_is_refused_in_automatic_writes(runtime: Runtime, content: str, kind: str) -> None:
    with pytest.raises(SensitiveContent) as refused:
        await runtime.writer.upsert("default", MemoryDraft(content=content, fact_key="secret"), AGENT)
    assert kind in refused.value.details["classes"]
    assert await runtime.writer.store.current_by_fact_key("default", "secret") is None


async def test_ordinary_text_passes_the_sensitive_filter(runtime: Runtime) -> None:
    for i, content in enumerate(
        [
            "She was born in 1990 and has 2 cats",
            "Token economy is her thesis topic",
            "她的生日是3月14日",
            "Order #12345 arrived",
        ]
    ):
        assert (await runtime.writer.upsert("default", MemoryDraft(content=content, fact_key=f"k{i}"), AGENT)).created


async def test_owner_may_store_sensitive_text_by_hand(runtime: Runtime) -> None:
    result = await runtime.writer.upsert(
        "default", MemoryDraft(content="door code password: 4711-0815", fact_key="door", authored_by="owner"), OWNER
    )
    assert result.created


async def test_failed_mirror_write_is_kept_and_retried(runtime: Runtime) -> None:
    runtime.vectors.down = True  # type: ignore[attr-defined]
    result = await runtime.writer.upsert(
        "default", MemoryDraft(content="Her cat is called Mochi", fact_key="cat"), AGENT
    )
    assert result.created and result.vector == "pending"
    assert await runtime.writer.store.get(result.memory.id) is not None  # the row is the truth
    stats = await runtime.mirror.outbox.stats()
    assert stats["pending"] == 1

    runtime.vectors.down = False  # type: ignore[attr-defined]
    assert (await runtime.mirror.drain()).synced == 0  # backoff: not due yet
    runtime.clock.advance(seconds=16)  # type: ignore[attr-defined]
    assert (await runtime.mirror.drain()).synced == 1
    assert (await runtime.mirror.outbox.stats())["pending"] == 0
    assert await vector_ids(runtime) == {result.memory.id}


async def test_retry_backs_off_and_records_the_error(runtime: Runtime) -> None:
    runtime.vectors.down = True  # type: ignore[attr-defined]
    await runtime.writer.upsert("default", MemoryDraft(content="x marks", fact_key="x"), AGENT)
    for _ in range(3):
        runtime.clock.advance(hours=2)  # type: ignore[attr-defined]
        assert (await runtime.mirror.drain()).failed == 1
    row = await runtime.db.first("SELECT attempts, last_error FROM vector_outbox")
    assert row["attempts"] == 4 and "unavailable" in row["last_error"]


async def test_a_newer_write_is_not_lost_behind_an_older_retry(runtime: Runtime) -> None:
    runtime.vectors.down = True  # type: ignore[attr-defined]
    m = (await runtime.writer.upsert("default", MemoryDraft(content="first", fact_key="k"), AGENT)).memory
    await runtime.writer.archive(m.id, AGENT)
    runtime.vectors.down = False  # type: ignore[attr-defined]
    runtime.clock.advance(minutes=1)  # type: ignore[attr-defined]
    await runtime.mirror.drain()
    assert await vector_ids(runtime) == set()  # the archive (newest state) won


async def test_a_sweep_refills_an_emptied_index(runtime: Runtime) -> None:
    ids = [
        (await runtime.writer.upsert("default", MemoryDraft(content=f"fact {i}", fact_key=f"k{i}"), AGENT)).memory.id
        for i in range(3)
    ]
    assert await runtime.mirror.unaccounted() == 0
    await runtime.vectors.inner.delete(ids)  # type: ignore[attr-defined]
    assert await runtime.mirror.unaccounted() == 3  # no write owes them: the index lost them
    assert await runtime.mirror.passes.begin("sweep")
    assert await runtime.mirror.passes.step() == PassStep(queued=3, running=False)
    assert (await runtime.mirror.drain()).synced == 3
    assert await vector_ids(runtime) == set(ids)


async def test_edit_changes_fields_and_records_them(runtime: Runtime) -> None:
    m = (await runtime.writer.upsert("default", MemoryDraft(content="likes jazz", fact_key="music"), AGENT)).memory
    result = await runtime.writer.edit(
        m.id, MemoryDraft(tags=["music", "music", " taste "], importance=0.9, pinned=True), OWNER
    )
    assert result.memory.tags == ["music", "taste"] and result.memory.importance == 0.9 and result.memory.pinned
    events = await runtime.writer.store.events(m.id)
    assert events[-1].event == "updated" and set(events[-1].detail["fields"]) == {
        "tags",
        "importance",
        "pinned",
        "layer",  # pinned: permanent
    }
    other = (await runtime.writer.upsert("default", MemoryDraft(content="likes rock", fact_key="music2"), AGENT)).memory
    with pytest.raises(Conflict):
        await runtime.writer.edit(other.id, MemoryDraft(fact_key="music"), OWNER)


@pytest.mark.parametrize("path", ["upsert", "merge", "edit"])
async def test_an_upsert_a_merge_and_an_edit_change_a_memory_by_one_rule(runtime: Runtime, path: str) -> None:
    said = MemoryDraft(
        content="likes jazz",
        fact_key="music",
        type="preference",
        evidence=[Evidence("I love jazz", "m1")],
        source_message_ids=["m1"],
    )
    memory = (await runtime.writer.upsert("default", said, AGENT)).memory
    again = MemoryDraft(
        content="likes jazz and blues",
        type="wibble",
        evidence=[Evidence("blues too", "m2"), Evidence("I love jazz", "m2"), Evidence("blues too", "m3")],
        source_message_ids=["m2", "m1", "m2"],
    )
    if path == "upsert":
        result = await runtime.writer.upsert("default", dataclasses.replace(again, fact_key="music"), AGENT)
    elif path == "merge":
        result = await runtime.writer.merge_into(memory.id, again, AGENT)
    else:
        result = await runtime.writer.edit(memory.id, again, AGENT)
    # A word that is no type is no error on any path: the type stays, and the answer says so.
    assert result.memory.type == "preference"
    assert result.notes == ["unknown type 'wibble' ignored; kept 'preference'"]
    said_again = path != "edit"
    if said_again:
        # The memory said again: its evidence and sources are added to, each quote and id once.
        assert result.memory.evidence == [Evidence("I love jazz", "m1"), Evidence("blues too", "m2")]
        assert result.memory.source_message_ids == ["m1", "m2"]
    else:
        # An edit sets them to what it gives, each quote and id once.
        assert result.memory.evidence == [Evidence("blues too", "m2"), Evidence("I love jazz", "m2")]
        assert result.memory.source_message_ids == ["m2", "m1"]
    stored = await runtime.writer.store.get(memory.id)
    assert stored is not None and (stored.evidence, stored.source_message_ids) == (
        result.memory.evidence,
        result.memory.source_message_ids,
    )
    # One event name on every path, naming the fields that changed.
    assert result.action == "updated" and result.memory.content == "likes jazz and blues"
    events = await runtime.writer.store.events(memory.id)
    assert [e.event for e in events] == ["created", "updated"]
    assert events[-1].detail["fields"] == ["content", "evidence", "source_message_ids"]
    # Only a write that says the memory again counts it as seen once more.
    assert result.memory.seen_count == (2 if said_again else 1)


async def test_an_edit_can_take_back_a_wrong_quote(runtime: Runtime) -> None:
    said = MemoryDraft(
        content="likes jazz",
        fact_key="music",
        evidence=[Evidence("I love jazz", "m1"), Evidence("I hate jazz", "m2")],
        source_message_ids=["m1", "m2"],
    )
    memory = (await runtime.writer.upsert("default", said, AGENT)).memory
    fixed = MemoryDraft(evidence=[Evidence("I love jazz", "m1")], source_message_ids=["m1"])
    result = await runtime.writer.edit(memory.id, fixed, OWNER)
    assert result.memory.evidence == [Evidence("I love jazz", "m1")] and result.memory.source_message_ids == ["m1"]
    # Said again by an upsert that gives none, they stay as they are.
    again = await runtime.writer.upsert("default", MemoryDraft(content="likes jazz", fact_key="music"), AGENT)
    assert again.memory.evidence == [Evidence("I love jazz", "m1")] and again.memory.seen_count == 2
