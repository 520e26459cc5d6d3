"""Heavy reads take turns, and give way to everything else as they go.

A heavy read (the star map's 2,000 stars, an export, the health report) does tens of
milliseconds of Python work besides its queries, and Python work holds the event loop:
everything else waits until it awaits something. A second client's recall took 540 ms
instead of 29 while four clients read the star map's graph (issue 28), because every
step of the recall waited behind every heavy read in flight. So:

- heavy reads run one at a time (``HeavyReads.turn``): the others wait for their turn
  holding nothing, so the loop never has more than one to interleave with the rest;
- a heavy read goes through its rows a slice at a time (``HeavyReads.paced``), and while
  other work is in flight (any use case but the heavy reads', ``foreground``) it pauses
  after each slice for twice as long as the slice took, its queries included: it then
  takes at most a third of the loop (and of a core for its queries), and all of it when
  nothing else wants it. Only yielding (``sleep(0)``)
  was not enough: a heavy read is always ready to go on, so each step of a recall still
  waited for a slice, and on 2 cores the read's CPU slowed the recall's query embedding
  to twice its time (recall p50 89 ms instead of 37 under four graph readers; paused,
  50–68).

Runtime-neutral (asyncio only): the Worker's requests share their isolate's loop too.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

# Items a heavy read handles between two pauses: a few milliseconds of work on a slow
# core (a graph node with its tags, an exported row, a line of the star map).
SLICE = 200
# A pause (while foreground work is in flight) is this many times as long as the slice
# before it took.
PAUSE_PER_WORK = 2.0


class HeavyReads:
    """The turns of one runtime's heavy reads, and what they give way to."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._foreground = 0

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self._lock:
            yield

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Work the heavy reads give way to while it runs (every use case but theirs)."""
        self._foreground += 1
        try:
            yield
        finally:
            self._foreground -= 1

    async def paced(self, items: Iterable[T], size: int = SLICE) -> AsyncIterator[T]:
        """``items``, with a pass through the loop after every ``size`` of them and after
        the last: a pause while foreground work is in flight. The caller's work on a
        slice (its queries too) counts in the slice's time."""
        started = time.perf_counter()
        index = -1
        for index, item in enumerate(items):
            if index and not index % size:
                await self._pause(time.perf_counter() - started)
                started = time.perf_counter()
            yield item
        if index >= 0:
            await self._pause(time.perf_counter() - started)

    async def _pause(self, worked: float) -> None:
        await asyncio.sleep(PAUSE_PER_WORK * worked if self._foreground else 0)
