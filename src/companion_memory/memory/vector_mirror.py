"""Keeps the vector index in step with the memories and episodes tables through the outbox.

Every write that changes what the index should hold enqueues an outbox entry in the
same atomic batch as the row change. A memory's write then applies it right away
(``sync``); an episode's is applied in the background (a ``vector_mirror`` task), so
that storing what was said never waits for an embedding. If the embedder or the index
fails, the entry stays and ``drain`` retries it later with backoff, run by a
``vector_mirror`` task on the queue (and by the nightly job as a safety net). So a
vector write can be late, but never lost.

Both kinds share the index: every query filters on ``kind`` (vector_sources.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from ..clock import iso, parse_iso
from ..domain.memory import Memory
from ..domain.search_text import embedding_text
from ..ports import Clock, Database, Embedder, InfrastructureError, TaskQueue, VectorIndex, VectorRecord
from ..store.episodes import EpisodeStore
from ..store.memories import MemoryStore
from ..store.outbox import OutboxEntry, OutboxKind, OutboxStore
from ..store.vector_state import VectorStateStore
from .vector_passes import VectorPasses
from .vector_sources import EpisodeRows, MemoryRows, MirroredKind

log = logging.getLogger("companion_memory.vector_mirror")
_MAX_BACKOFF = timedelta(hours=1)
# The queue task that drains the outbox (see memory.tasks).
MIRROR_TASK = {"task": "vector_mirror"}
# Cloudflare Queues delay a message by at most 12 hours.
MAX_TASK_DELAY_SECONDS = 12 * 3600
# What is embedded of a memory: ``embedding_text`` of its content. Change this whenever
# that form changes, and the vectors made from the old form are made again.
EMBEDDED_TEXT_FORM = "folded-1"
# Ids whose vectors are fetched at once only to see which the index holds: the local
# index answers each with its values, and a page's worth of them is work on the event
# loop (6 ms for 500 on a slow core, with the health report reading every live memory).
PRESENCE_PAGE = 200
# Vectors removed in one call (a forgotten day of episodes is hundreds): Vectorize takes
# 1000 ids a call; the rows that follow them are one batch.
REMOVALS_AT_ONCE = 100
# What every query for memories adds to its filter: episodes share the index.
MEMORY_FILTER = {"kind": "memory"}


@dataclass(frozen=True)
class SyncReport:
    synced: int = 0
    failed: int = 0
    # Left in the outbox because the index holds another embedder's vectors.
    blocked: int = 0
    # The vectors just made, by memory id: a writer's next look at the index needs no other.
    vectors: dict[str, Sequence[float]] = field(default_factory=dict)


class VectorMirror:
    def __init__(
        self, db: Database, vectors: VectorIndex, embedder: Embedder, clock: Clock, queue: TaskQueue | None = None
    ) -> None:
        self.db = db
        self.vectors = vectors
        self.embedder = embedder
        self.clock = clock
        self.queue = queue
        self.memories = MemoryStore(db)
        self.kinds: dict[OutboxKind, MirroredKind] = {
            "memory": MemoryRows(self.memories),
            "episode": EpisodeRows(EpisodeStore(db)),
        }
        self.outbox = OutboxStore(db)
        self.state = VectorStateStore(db)
        self.passes = VectorPasses(db, vectors, clock, queue, self.kinds, self._claim)
        self._mismatch: str | None = None
        self._checked = False
        # The first check may write (a new claim, a refresh pass): one at a time, so that
        # the recalls that arrive together at the start, each asking, write it once.
        self._checking = asyncio.Lock()

    async def mismatch(self) -> str | None:
        """Why the index cannot be used with this embedder, or None when it can.

        The first embedder to write claims the index. Another one (EMBEDDING_MODEL was
        changed) must not mix its vectors in or query them: until a reindex, recall uses
        words only and mirror writes wait in the outbox.

        Vectors of the same model made from an older form of the text
        (``EMBEDDED_TEXT_FORM``) stay usable meanwhile; a pass queues every live row to be
        embedded again, once, and the outbox replaces them in the background.
        """
        if not self._checked:
            async with self._checking:
                if not self._checked:
                    await self._check()
        return self._mismatch

    async def _check(self) -> None:
        state = await self.state.get()
        wanted = (self.embedder.model, self.embedder.dimensions)
        stale_form = False
        if state is None:
            await self.state.set(*wanted, EMBEDDED_TEXT_FORM, iso(self.clock.now()))
        elif (state.model, state.dimensions) != wanted:
            self._mismatch = (
                f"the vector index holds {state.model} vectors ({state.dimensions}-d) but EMBEDDING_MODEL is "
                f"{wanted[0]} ({wanted[1]}-d); rebuild it with POST /v1/debug/vector_reindex "
                "(or `companion-memory reindex`), or set EMBEDDING_MODEL back"
            )
        else:
            stale_form = state.text_form != EMBEDDED_TEXT_FORM
        self._checked = True
        if stale_form:
            await self.state.set(*wanted, EMBEDDED_TEXT_FORM, iso(self.clock.now()))
            await self.passes.begin("refresh")

    async def sync(self, memory_ids: Sequence[str]) -> SyncReport:
        """Apply the outbox entries of these memories now (right after a write); what
        fails is handed to the queue for a retry."""
        report = await self._apply(await self.outbox.entries(memory_ids))
        if report.failed:
            await self.schedule_retry()
        return report

    async def schedule_retry(self) -> None:
        """Queue a ``vector_mirror`` task for when the earliest outbox entry is due. A
        failed send is only logged: the outbox keeps the work for the nightly pass."""
        due = await self.outbox.next_due()
        if self.queue is None or due is None or await self.mismatch():
            return
        wait = (parse_iso(due) - self.clock.now()).total_seconds()
        delay = min(int(wait) + 1, MAX_TASK_DELAY_SECONDS) if wait > 0 else 0
        try:
            await self.queue.send(MIRROR_TASK, delay_seconds=delay)
        except InfrastructureError:
            log.exception("could not queue a vector mirror retry; the nightly job will drain the outbox")

    async def drain(self, limit: int = 200) -> SyncReport:
        """Retry the entries that are due; returns what happened."""
        return await self._apply(await self.outbox.due(iso(self.clock.now()), limit))

    async def near_duplicate(self, namespace: str, text: str, threshold: float) -> str | None:
        """The live memory whose vector is at cosine ≥ ``threshold`` to ``text``, if any.
        None while the index holds another embedder's vectors; raises if the embedder or
        the index fails (callers treat the check as a hint and go on without it)."""
        if not text.strip() or await self.mismatch():  # no model embeds an empty text
            return None
        vector = (await self.embedder.embed([embedding_text(text)], kind="passage"))[0]
        matches = await self.vectors.query(
            vector, top_k=1, filter={"namespace": namespace, "status": "active", **MEMORY_FILTER}
        )
        return matches[0].id if matches and matches[0].score >= threshold else None

    async def similar(
        self,
        namespace: str,
        *,
        memory_id: str | None = None,
        vector: Sequence[float] | None = None,
        text: str = "",
        top_k: int = 5,
    ) -> list[tuple[str, float]]:
        """Live memories near ``vector``, else near a stored memory's vector (nothing to
        embed again), else near a text, each with its cosine mapped onto 0–1 for this
        embedder (see Embedder.similarity_range); never ``memory_id`` itself. Nothing while
        the index holds another embedder's vectors; raises if the embedder or the index
        fails, as near_duplicate does."""
        if await self.mismatch():
            return []
        if vector is None and memory_id is not None:
            stored = await self.vectors.get([memory_id])
            vector = stored[0].values if stored else None
        elif vector is None and text.strip():
            vector = (await self.embedder.embed([text], kind="passage"))[0]
        if vector is None:
            return []
        matches = await self.vectors.query(
            vector, top_k=top_k + 1, filter={"namespace": namespace, "status": "active", **MEMORY_FILTER}
        )
        unrelated, identical = self.embedder.similarity_range
        return [
            (m.id, min(1.0, max(0.0, (m.score - unrelated) / (identical - unrelated))))
            for m in matches
            if m.id != memory_id
        ][:top_k]

    async def duplicates_of(self, memory: Memory, threshold: float, top_k: int = 10) -> list[tuple[str, float]] | None:
        """Other live memories of the same namespace and type at cosine ≥ ``threshold`` to
        ``memory``, closest first. Reads its stored vector (embeds it when the index lacks
        it yet). None while the index holds another embedder's vectors; raises if the
        embedder or the index fails, like ``near_duplicate``."""
        if await self.mismatch():
            return None
        stored = await self.vectors.get([memory.id])
        if stored and stored[0].values:
            vector = list(stored[0].values)
        elif memory.content.strip():
            vector = (await self.embedder.embed([memory.content], kind="passage"))[0]
        else:
            return []
        matches = await self.vectors.query(
            vector,
            top_k=top_k + 1,
            filter={"namespace": memory.namespace, "status": "active", "type": memory.type, **MEMORY_FILTER},
        )
        return [(m.id, m.score) for m in matches if m.id != memory.id and m.score >= threshold][:top_k]

    async def unaccounted(self) -> int:
        """How many more rows the index should hold than it holds and the outbox owes: more
        than none, and the index lost vectors no write knows of (a new, emptied or replaced
        index file). A few counts, however many rows; vectors of dead rows the index
        still holds can hide as many missing ones (the health report finds those)."""
        live = 0
        for rows in self.kinds.values():
            live += await rows.count_live()
        pending = int((await self.outbox.stats())["pending"] or 0)
        return live - await self.vectors.count() - pending

    async def missing(self, limit: int) -> tuple[int, bool]:
        """How many live memories and episodes the index lacks, counting the first
        ``limit`` of them (memories first); says whether the count is complete."""
        counted = missing = 0
        for rows in self.kinds.values():
            after = ""
            while counted < limit:
                page = await rows.live_ids(after=after, limit=min(PRESENCE_PAGE, limit - counted))
                if not page:
                    break
                after = page[-1].id
                counted += len(page)
                present = {r.id for r in await self.vectors.get([r.id for r in page])}
                missing += sum(r.id not in present for r in page)
            else:
                if await rows.live_ids(after=after, limit=1):
                    return missing, False
        return missing, True

    async def orphans(self, limit: int) -> tuple[list[str], bool]:
        """Vectors the index holds for rows it must not hold (archived, superseded, closed
        plans…), among the first ``limit`` such rows; says whether every row was looked at.
        Vectors of rows gone from the database cannot be listed: only a reindex drops them."""
        found: list[str] = []
        counted = 0
        after = ""
        while counted < limit:
            ids = await self.memories.unindexed_ids(after=after, limit=min(PRESENCE_PAGE, limit - counted))
            if not ids:
                return found, True
            after = ids[-1]
            counted += len(ids)
            found += [record.id for record in await self.vectors.get(ids)]
        return found, not await self.memories.unindexed_ids(after=after, limit=1)

    async def start_reindex(self) -> int:
        """Begin a rebuild (again, if one is under way): a pass removes every memory's and
        episode's vector and queues every live row, a page at a time, and then claims the
        index for the current embedder; ``drain`` fills it. It goes on in the background
        even if whoever started it stops asking. Returns how many rows it queues."""
        await self.passes.begin("reindex", over=True)
        return await self.passes.remaining()

    async def rebuild(self, *, restart: bool) -> int | None:
        """One step of a rebuild, begun first when asked to (``restart``) or when the index
        holds another embedder's vectors and none is under way; returns how many rows a
        rebuild begun now queues."""
        queued = None
        if restart or (await self.mismatch() and await self.passes.current() is None):
            queued = await self.start_reindex()
        if (await self.passes.step()).queued:
            await self.schedule_retry()
        return queued

    async def _claim(self) -> None:
        await self.state.set(self.embedder.model, self.embedder.dimensions, EMBEDDED_TEXT_FORM, iso(self.clock.now()))
        self._mismatch, self._checked = None, True
        await self.schedule_retry()

    async def place(self, vectors: Mapping[str, Sequence[float]]) -> int:
        """Use vectors made elsewhere for queued upserts instead of embedding the rows
        again (the gateway's user turn: recall embedded its words already). What cannot
        be placed stays queued for the background; returns how many were placed."""
        if not vectors or await self.mismatch():
            return 0
        entries = [e for e in await self.outbox.entries(list(vectors)) if e.op == "upsert"]
        try:
            records = []
            for kind, rows in self.kinds.items():
                wanted = [e.memory_id for e in entries if e.kind == kind]
                found = await rows.embeddable(wanted) if wanted else {}
                records += [VectorRecord(r.id, vectors[r.id], r.metadata) for r in found.values()]
            placed = {r.id for r in records}
            if records:
                await self.vectors.upsert(records)
                await self.db.batch([OutboxStore.clear(e) for e in entries if e.memory_id in placed])
        except (InfrastructureError, ValueError) as error:  # the background embeds them instead
            log.warning(
                "could not place %d given vectors (%s); they are embedded in the background", len(vectors), error
            )
            return 0
        return len(placed)

    async def _apply(self, entries: list[OutboxEntry]) -> SyncReport:
        if not entries:
            return SyncReport()
        if await self.mismatch():
            return SyncReport(blocked=len(entries))
        upserts = [e for e in entries if e.op == "upsert"]
        removals = [e for e in entries if e.op != "upsert"]
        synced = failed = 0
        vectors: dict[str, Sequence[float]] = {}
        if upserts:
            try:
                vectors = await self._upsert(upserts)
                synced += len(upserts)
            # The index, the embedder or the database is down: retry later. A row that
            # cannot be read back (ValueError, RecursionError from its JSON) or a record the
            # index can never take stays in the outbox with its error shown, rather than
            # stopping the entries behind it.
            except (InfrastructureError, ValueError, RecursionError) as error:
                await self._failed(upserts, error)
                failed += len(upserts)
        for start in range(0, len(removals), REMOVALS_AT_ONCE):
            part = removals[start : start + REMOVALS_AT_ONCE]
            try:
                await self.vectors.delete([e.memory_id for e in part])
                await self.db.batch(
                    [s for e in part for s in (*self.kinds[e.kind].after_removal(e), OutboxStore.clear(e))]
                )
                synced += len(part)
            except InfrastructureError as error:  # the index or the database is down: retry later
                await self._failed(part, error)
                failed += len(part)
        return SyncReport(synced=synced, failed=failed, vectors=vectors)

    async def _upsert(self, entries: list[OutboxEntry]) -> dict[str, Sequence[float]]:
        live = []
        for kind, rows in self.kinds.items():
            wanted = [e.memory_id for e in entries if e.kind == kind]
            found = await rows.embeddable(wanted) if wanted else {}
            live += [found[id_] for id_ in wanted if id_ in found]
        placed = {row.id for row in live}
        gone = [e.memory_id for e in entries if e.memory_id not in placed]
        records = []
        if live:
            embeddings = await self.embedder.embed([row.text for row in live], kind="passage")
            records = [VectorRecord(row.id, v, row.metadata) for row, v in zip(live, embeddings, strict=False)]
            await self.vectors.upsert(records)
        if gone:
            await self.vectors.delete(gone)
        await self.db.batch([OutboxStore.clear(e) for e in entries])
        return {r.id: r.values for r in records}

    async def _failed(self, entries: list[OutboxEntry], error: Exception) -> None:
        now = self.clock.now()
        for entry in entries:
            delay = min(timedelta(seconds=15 * 2**entry.attempts), _MAX_BACKOFF)
            await self.outbox.record_failure(entry, f"{type(error).__name__}: {error}", iso(now + delay))
