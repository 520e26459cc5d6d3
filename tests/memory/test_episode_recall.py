"""Recall over episodes: what was said, ranked with the curated memories in one ranking."""

from __future__ import annotations

import httpx
import pytest

from companion_memory.clock import FixedClock, iso
from companion_memory.domain.memory import Evidence
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.runtime import Runtime
from companion_memory.store.episode_search import EpisodeScope
from companion_memory.store.episodes import EpisodeStore
from tests.conftest import auth
from tests.episodes import said

OWNER = Actor("test")


async def remember(runtime: Runtime, content: str, **fields: object) -> str:
    draft = MemoryDraft(content=content, fact_key=f"k.{abs(hash(content))}", **fields)  # type: ignore[arg-type]
    return (await runtime.writer.upsert("default", draft, OWNER)).memory.id


def ids(result: object) -> list[str]:
    return [h.memory.id for h in result.hits]  # type: ignore[attr-defined]


async def test_an_episode_is_recalled_by_its_words_and_says_it_is_one(
    client: httpx.AsyncClient, runtime: Runtime
) -> None:
    episode = await said(runtime, "I finally booked the ferry to Lamma Island for Saturday", conversation_id="c1")
    response = await client.post("/v1/memory/recall", json={"query": "Lamma Island ferry"}, headers=auth())
    answer = response.json()
    hit = answer["hits"][0]
    assert hit["id"] == episode.id and answer["meta"]["episodes"] == [episode.id]
    assert (hit["type"], hit["role"], hit["conversation_id"], hit["created_at"]) == (
        "episode",
        "user",
        "c1",
        episode.created_at,
    )
    assert set(hit["channels"]) == {"vector", "lexical"}
    searched = await client.post("/v1/memory/search", json={"query": "Lamma Island ferry"}, headers=auth())
    assert searched.json()["meta"]["episodes"] == [episode.id]


async def test_a_memory_outranks_an_episode_of_equal_relevance(runtime: Runtime) -> None:
    # The same words in another order: the same similarity and the same bm25.
    episode = await said(runtime, "Mochi the grey cat hates the vacuum")
    memory_id = await remember(runtime, "the grey cat Mochi hates the vacuum")
    result = await runtime.recall.run("Mochi grey cat vacuum", k=5)
    assert ids(result) == [memory_id, episode.id]
    assert result.hits[0].raw_score == pytest.approx(result.hits[1].raw_score)
    assert result.meta.episodes == [episode.id]


async def test_a_memory_takes_the_place_of_an_episode_that_says_the_same(runtime: Runtime) -> None:
    episode = await said(runtime, "Mochi hates the vacuum.")
    memory_id = await remember(runtime, "mochi hates the vacuum")
    result = await runtime.recall.run("Mochi vacuum", k=5)
    assert ids(result) == [memory_id] and result.meta.deduped == [episode.id]


async def test_the_evidence_of_a_returned_memory_is_not_returned_beside_it(runtime: Runtime) -> None:
    source = await said(runtime, "my sister Ana moved to Lisbon last spring")
    quoted = await said(runtime, "Ana says Lisbon is too hilly for her bike")
    other = await said(runtime, "Lisbon trams are always full")
    draft = MemoryDraft(
        content="Ana, her sister, lives in Lisbon",
        fact_key="sister.city",
        source_message_ids=[source.id],
        evidence=[Evidence("Lisbon is too hilly", message_id=quoted.id)],
    )
    memory = (await runtime.writer.upsert("default", draft, OWNER)).memory
    result = await runtime.recall.run("Ana Lisbon", k=5)
    assert memory.id in ids(result) and other.id in ids(result)
    assert source.id not in ids(result) and quoted.id not in ids(result)
    assert sorted(result.meta.evidence) == sorted([source.id, quoted.id])
    # Without the memory among the hits (the floor keeps it out), its evidence comes back.
    alone = await runtime.recall.run("Ana Lisbon", k=5, memories=False)
    assert {source.id, quoted.id, other.id} == set(ids(alone)) and alone.meta.evidence == []


async def test_an_episode_the_prompt_holds_is_never_returned(runtime: Runtime) -> None:
    earlier = await said(runtime, "We should try the ramen place on Keong Saik road", at="2026-11-01T10:00:00.000Z")
    now = await said(runtime, "Ramen tonight? The Keong Saik one!")
    result = await runtime.recall.run("Keong Saik ramen", k=5, in_prompt=["ramen tonight?  the KEONG SAIK one"])
    assert ids(result) == [earlier.id] and result.meta.in_prompt == [now.id]


async def test_the_current_conversation_can_be_left_out(runtime: Runtime) -> None:
    other = await said(runtime, "the dentist moved my appointment to Friday", conversation_id="old")
    await said(runtime, "remind me about the dentist", conversation_id="current")
    result = await runtime.recall.run("dentist", k=5, episodes=EpisodeScope(other_than="current"))
    assert ids(result) == [other.id]


async def test_a_type_filter_is_about_memories_and_leaves_episodes_out(runtime: Runtime) -> None:
    await said(runtime, "I prefer window seats on long flights")
    memory_id = await remember(runtime, "prefers window seats on flights", type="preference")
    assert ids(await runtime.recall.run("window seats flights", k=5, types=["preference"])) == [memory_id]


async def test_recall_counts_an_injected_episode_and_search_does_not(runtime: Runtime) -> None:
    episode = await said(runtime, "the piano recital is on the fourteenth")
    await runtime.recall.run("piano recital", k=3)
    [row] = await EpisodeStore(runtime.db).get_many([episode.id])
    assert (row.recall_count, row.last_injected_at) == (0, None)
    await runtime.recall.run("piano recital", k=3, account=True)
    [row] = await EpisodeStore(runtime.db).get_many([episode.id])
    assert (row.recall_count, row.last_injected_at, row.revivals) == (1, iso(runtime.clock.now()), 1)


@pytest.mark.embedding_quality
async def test_an_episode_awake_asleep_archived_and_revived(runtime: Runtime, clock: FixedClock) -> None:
    episode = await said(runtime, "I adopted a little kitten from the shelter, she is called Mochi")
    meaning, words = "do I have any pets?", "Mochi kitten shelter"
    assert episode.id in ids(await runtime.recall.run(meaning, k=3))
    clock.advance(hours=7)  # asleep: only a query that names it
    asleep = await runtime.recall.run(meaning, k=3)
    assert episode.id not in ids(asleep) and episode.id in asleep.meta.resting
    assert episode.id in ids(await runtime.recall.run(words, k=3))
    clock.advance(hours=6)  # archived: its words still find it, and a close meaning, not a loose one
    archived = await runtime.recall.run(meaning, k=3)
    assert episode.id not in ids(archived) and episode.id in archived.meta.resting
    close = await runtime.recall.run("my new cat from the animal rescue", k=3)
    assert ids(close) == [episode.id] and close.hits[0].channels.keys() == {"vector"}
    found = await runtime.recall.run(words, k=3)
    assert ids(found) == [episode.id] and found.hits[0].archived
    assert episode.id in ids(await runtime.recall.run(meaning, k=3, resting=True))  # search
    # Injected, it is revived: awake again, found by what it means.
    await runtime.recall.run(words, k=3, account=True)
    assert episode.id in ids(await runtime.recall.run(meaning, k=3))
    # Revived as often as MEMORY_INSTANT_REVIVALS says, it is kept for good.
    for _ in range(runtime.settings.MEMORY_INSTANT_REVIVALS - 1):
        await runtime.recall.run(words, k=3, account=True)
    [row] = await EpisodeStore(runtime.db).get_many([episode.id])
    assert row.layer == "long" and row.revivals == runtime.settings.MEMORY_INSTANT_REVIVALS
    clock.advance(days=400)
    assert episode.id in ids(await runtime.recall.run(meaning, k=3))


async def test_episodes_of_other_namespaces_stay_out(runtime: Runtime) -> None:
    await said(runtime, "the blue door code is 4471", namespace="work")
    mine = await said(runtime, "the blue door needs paint")
    assert ids(await runtime.recall.run("blue door", k=5)) == [mine.id]
    both = await runtime.recall.run("blue door", k=5, namespaces=["work"])
    assert len(both.hits) == 2


async def test_a_fragment_finds_an_episode_through_the_substring_index(runtime: Runtime) -> None:
    episode = await said(runtime, "my locker code is ZQW4471K, don't forget")
    result = await runtime.recall.run("QW447", k=3, vector=False)
    assert ids(result) == [episode.id] and result.hits[0].channels == {"substring": 1}


async def test_a_word_only_the_episodes_hold_still_finds_a_memory_holding_it_as_a_fragment(runtime: Runtime) -> None:
    # One read serves both word indexes: each keeps its own vocabulary, so the memories'
    # lacks "47118" (theirs is "ab47118") and looks for it as a fragment.
    memory_id = await remember(runtime, "parcel AB47118 is at the post office")
    episode = await said(runtime, "the bus 47118 was late again")
    result = await runtime.recall.run("47118", k=3, vector=False)
    channels = {h.memory.id: h.channels for h in result.hits}
    assert channels == {episode.id: {"lexical": 1}, memory_id: {"substring": 1}}


async def test_a_fragment_finds_the_memory_and_the_episode_holding_it(runtime: Runtime) -> None:
    memory_id = await remember(runtime, "the spare key is in locker ZQW4471K")
    episode = await said(runtime, "my locker code is XQW4479B, don't forget")
    result = await runtime.recall.run("QW447", k=3, vector=False)
    assert {h.memory.id: h.channels for h in result.hits} == {memory_id: {"substring": 1}, episode.id: {"substring": 2}}


async def test_an_injected_episode_says_when_and_who(runtime: Runtime) -> None:
    # 17:30 UTC is past midnight in DREAM_TIME_ZONE (Asia/Singapore): the day it was said there.
    await said(runtime, "I went to the LGBTQ support group with Jordan", at="2026-11-28T17:30:00.000Z")
    await said(
        runtime, "I told you Jordan would love the support group", role="assistant", at="2026-11-20T05:00:00.000Z"
    )
    result = await runtime.recall.run("support group Jordan", k=2)
    block = (await runtime.context.for_turn("default", result)).text
    assert "1. [said 2026-11-29 by you] I went to the LGBTQ support group with Jordan" in block
    assert "2. [said 2026-11-20 by me] I told you Jordan would love the support group" in block


async def test_a_short_reply_comes_with_the_turn_it_answers_and_a_question_with_its_answer(runtime: Runtime) -> None:
    def at(minute: int) -> str:
        return f"2026-11-20T05:{minute:02d}:00.000Z"

    await said(
        runtime, "Do you still go sailing at the marina on weekends?", role="assistant", at=at(0), conversation_id="c"
    )
    await said(runtime, "Every Sunday, rain or shine!", at=at(1), conversation_id="c")
    await said(runtime, "Which pier does the ferry to Cheung Chau leave from?", at=at(2), conversation_id="c")
    await said(runtime, "Pier 5 in Central, every half hour.", role="assistant", at=at(3), conversation_id="c")
    reply = await runtime.recall.run("Sunday rain shine", k=1)
    block = (await runtime.context.for_turn("default", reply)).text
    assert (
        "1. [said 2026-11-20 by you] Every Sunday, rain or shine!\n"
        '   (before it, I said: "Do you still go sailing at the marina on weekends?")'
    ) in block
    question = await runtime.recall.run("Cheung Chau ferry pier", k=1)
    block = (await runtime.context.for_turn("default", question)).text
    assert (
        "1. [said 2026-11-20 by you] Which pier does the ferry to Cheung Chau leave from?\n"
        '   (then I said: "Pier 5 in Central, every half hour.")'
    ) in block
    # A turn the prompt holds is not shown beside another either.
    held = await runtime.recall.run("Cheung Chau ferry pier", k=1, in_prompt=["Pier 5 in Central, every half hour."])
    assert "(then I said" not in (await runtime.context.for_turn("default", held)).text


async def test_the_turn_beside_an_episode_gives_way_to_the_budget(runtime: Runtime) -> None:
    await said(
        runtime,
        "Shall we try the new climbing gym " + "near the harbour " * 20 + "?",
        at="2026-11-20T05:00:00.000Z",
        conversation_id="c",
    )
    await said(runtime, "Yes, bouldering!", at="2026-11-20T05:01:00.000Z", conversation_id="c", role="assistant")
    result = await runtime.recall.run("bouldering", k=1)
    roomy = await runtime.context.for_turn("default", result)
    assert "(before it, you said" in roomy.text
    runtime.context.budget = 60
    tight = await runtime.context.for_turn("default", result)
    assert "1. [said 2026-11-20 by me] Yes, bouldering!" in tight.text and "before it" not in tight.text


async def test_a_named_speaker_is_embedded_shown_and_found(client: httpx.AsyncClient, runtime: Runtime) -> None:
    messages = [
        {
            "role": "user",
            "name": "Caroline",
            "content": "I went to the support group yesterday",
            "created_at": "2023-05-08T05:00:00Z",
        },
        {"role": "assistant", "name": "Melanie", "content": "That took courage!", "created_at": "2023-05-08T05:01:00Z"},
    ]
    body = {"conversation_id": "s1", "messages": messages}
    assert (await client.post("/v1/ingest/messages", json=body, headers=auth())).status_code == 200
    await runtime.mirror.drain()
    [caroline] = [
        h
        for h in (await client.post("/v1/memory/search", json={"query": "support group"}, headers=auth())).json()[
            "hits"
        ]
        if h["role"] == "user"
    ]
    assert caroline["speaker"] == "Caroline"
    [stored] = await runtime.vectors.get([caroline["id"]])
    said = (await runtime.embedder.embed(['caroline said, "i went to the support group yesterday"'], kind="passage"))[0]
    assert list(stored.values) == pytest.approx(said, abs=1e-6)
    result = await runtime.recall.run("support group", k=1, resting=True)
    block = (await runtime.context.for_turn("default", result)).text
    assert "1. [said 2023-05-08 by Caroline] I went to the support group yesterday" in block
    turns = (await client.post("/v1/conversations/search", json={"query": "courage"}, headers=auth())).json()["turns"]
    assert [(t["speaker"], t["role"]) for t in turns] == [("Melanie", "assistant")]
