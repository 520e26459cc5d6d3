"""Heavy reads take turns, and hand the event loop back as they go.

A heavy read (the star map's 2,000 stars, an export, the health report) does tens of
milliseconds of Python work besides its queries, and Python work holds the event loop:
everything else waits until it awaits something. A second client's recall took 540 ms
instead of 29 while four clients read the star map's graph (issue 28), because every
step of the recall waited behind every heavy read in flight. So:

- heavy reads run one at a time (``HeavyReads.turn``): the others wait for their turn
  holding nothing, so the loop never has more than one to interleave with the rest;
- a heavy read goes through its rows a slice at a time (``paced``), and between two
  slices lets whatever else is ready run first.

A recall then waits at most for one slice at each of its steps, not for whole reads.
Runtime-neutral (asyncio only): the Worker's requests share their isolate's loop too.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import TypeVar

T = TypeVar("T")

# Items a heavy read handles between two looks at the loop: a few milliseconds of work
# on a slow core (a graph node with its tags, an exported row, a line of the star map).
SLICE = 200


async def paced(items: Iterable[T], size: int = SLICE) -> AsyncIterator[T]:
    """``items``, with a pass through the event loop after every ``size`` of them."""
    for index, item in enumerate(items):
        if index and not index % size:
            await asyncio.sleep(0)
        yield item


class HeavyReads:
    """Turns for the heavy reads of one runtime."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        async with self._lock:
            yield
