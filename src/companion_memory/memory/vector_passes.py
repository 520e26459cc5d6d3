"""Passes over every row the vector index mirrors, a page at a time.

Three jobs go over every memory and episode: a reindex (remove each vector, queue each
live row, then claim the index for the current embedder), a new form of the embedded
text (queue each live row again) and a sweep for the rows the index lacks (a new, emptied
or replaced index). At a million episodes each is thousands of index look-ups and outbox
writes, too many for one request, one Worker invocation or a start. A pass does one page
at a time; its place is kept in ``processing_cursors`` by the batch that queues the page,
so it goes on from there after a crash or a restart. The queue's ``vector_pass`` task
carries it in the background, a few pages a delivery and then its continuation; a
reindex call (the CLI, the panel) drives it in the foreground too.

What a pass queues goes to the outbox, which the mirror drains as it drains any write;
an entry already waiting is left as it is (it says what its row wants now). One pass at a
time: a reindex covers a refresh and a sweep, a refresh covers a sweep, so a stronger one
replaces a weaker one and a weaker one is not begun while a stronger one runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Literal

from ..clock import iso
from ..domain.vector_state import MirroredRow
from ..ports import Clock, Database, InfrastructureError, Statement, TaskQueue, VectorIndex
from ..store.cursors import CursorStore
from ..store.outbox import OutboxKind, OutboxStore
from .vector_sources import MirroredKind

log = logging.getLogger("companion_memory.vector_passes")
PassMode = Literal["reindex", "refresh", "sweep"]
_STRENGTH: dict[PassMode, int] = {"sweep": 1, "refresh": 2, "reindex": 3}
PASS_TASK = {"task": "vector_pass"}
_CURSOR = "vector_pass"
# Rows a page goes over: one outbox batch, one removal or presence look-up of the index.
PASS_PAGE = 200
# Pages one step does (a queue delivery, a reindex call): about three queries a page.
PAGES_PER_STEP = 5


@dataclass(frozen=True)
class PassCursor:
    """Where a pass is: which rows it has gone over (ids up to ``after`` of ``kind``)."""

    mode: PassMode
    kind: OutboxKind
    after: str = ""


@dataclass(frozen=True)
class PassStep:
    queued: int
    running: bool


def _read(value: str | None) -> PassCursor | None:
    if value is None:
        return None
    try:
        found = json.loads(value)
        cursor = PassCursor(found["mode"], found["kind"], found["after"])
    except (ValueError, KeyError, TypeError):
        log.warning("a vector pass's place could not be read (%r); it is dropped", value)
        return None
    return cursor if cursor.mode in _STRENGTH else None


class VectorPasses:
    def __init__(
        self,
        db: Database,
        vectors: VectorIndex,
        clock: Clock,
        queue: TaskQueue | None,
        kinds: Mapping[OutboxKind, MirroredKind],
        claim: Callable[[], Awaitable[None]],
    ) -> None:
        self.db = db
        self.vectors = vectors
        self.clock = clock
        self.queue = queue
        self.kinds = kinds
        # What a reindex does once every vector is gone: the index is the embedder's.
        self.claim = claim
        self.cursors = CursorStore(db)

    async def current(self) -> PassCursor | None:
        return _read(await self.cursors.get(_CURSOR))

    async def begin(self, mode: PassMode, *, over: bool = False) -> bool:
        """Begin a pass, unless one as strong runs (``over``: begin this one again even
        so); says whether it began. Its first step is queued."""
        running = await self.current()
        if running and _STRENGTH[running.mode] >= _STRENGTH[mode] and not over:
            return False
        await self.db.batch([self._place(PassCursor(mode, next(iter(self.kinds))))])
        await self.resume()
        return True

    async def resume(self) -> None:
        """Queue the next step of the pass under way, if there is one (the local queue
        keeps one such task; a duplicate delivery only goes over a page twice)."""
        if self.queue is None or await self.current() is None:
            return
        try:
            await self.queue.send(PASS_TASK)
        except InfrastructureError:
            log.exception("could not queue the vector pass; the next reindex call or start goes on with it")

    async def step(self, pages: int = PAGES_PER_STEP) -> PassStep:
        """Up to ``pages`` pages of the pass under way; says how many rows they queued and
        whether the pass goes on."""
        cursor = await self.current()
        queued = 0
        for _ in range(pages):
            if cursor is None:
                break
            cursor, made = await self._page(cursor)
            queued += made
        return PassStep(queued, cursor is not None)

    async def remaining(self) -> int:
        """The live rows the pass under way has not reached yet."""
        cursor = await self.current()
        if cursor is None:
            return 0
        kinds = list(self.kinds)
        later = kinds[kinds.index(cursor.kind) + 1 :]
        left = await self.kinds[cursor.kind].count_live(after=cursor.after)
        for kind in later:
            left += await self.kinds[kind].count_live()
        return left

    async def _page(self, cursor: PassCursor) -> tuple[PassCursor | None, int]:
        rows = self.kinds[cursor.kind]
        source = rows.all_ids if cursor.mode == "reindex" else rows.live_ids
        page = await source(after=cursor.after, limit=PASS_PAGE)
        if not page:
            return await self._next_kind(cursor), 0
        ids = [r.id for r in page]
        wanted: list[MirroredRow]
        if cursor.mode == "reindex":
            await self.vectors.delete(ids)
            wanted = [r for r in page if r.live]
        elif cursor.mode == "sweep":
            present = {record.id for record in await self.vectors.get(ids)}
            wanted = [r for r in page if r.id not in present]
        else:
            wanted = page
        now = iso(self.clock.now())
        moved = PassCursor(cursor.mode, cursor.kind, ids[-1])
        queue = [OutboxStore.enqueue_unless_pending(r.id, r.namespace, now, cursor.kind) for r in wanted]
        await self.db.batch([*queue, self._place(moved)])
        return moved, len(wanted)

    async def _next_kind(self, cursor: PassCursor) -> PassCursor | None:
        kinds = list(self.kinds)
        position = kinds.index(cursor.kind) + 1
        if position < len(kinds):
            moved = PassCursor(cursor.mode, kinds[position])
            await self.db.batch([self._place(moved)])
            return moved
        # Claimed before the place is dropped: a crash between the two claims again.
        if cursor.mode == "reindex":
            await self.claim()
        await self.db.batch([CursorStore.delete(_CURSOR)])
        log.info("vector %s pass done", cursor.mode)
        return None

    def _place(self, cursor: PassCursor) -> Statement:
        return CursorStore.put(_CURSOR, "default", json.dumps(asdict(cursor)), iso(self.clock.now()))
