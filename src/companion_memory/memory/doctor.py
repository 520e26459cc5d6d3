"""The health report (the reference's 体检) and the repairs that are safe to make.

Each check answers ok, warn or fail with a number: what the memories look like (layers,
types, how many carry evidence, duplicates, the long-term and instant shares, how many
went unused for 90 days), what waits for someone (plans past their end still open,
contradictions the owner has not settled, the outbox and the task queue), whether the
vector index mirrors the database, when the nightly job last ran, and the database file
itself. Only a broken mirror or a damaged database fails; the rest asks for a look.

``repair`` does what needs no judgement: rewrite the times and counts no reader can use
(``store/stored_values.py``: normalised where they can be read, else NULL or the row's
own creation time), queue the rows the index lacks (a sweep, in the background past its
first pages), drop the vectors of rows it must
not hold, expire plans past their end, rebuild the full-text indexes. Duplicates and
contradictions are the owner's to settle (the review queue).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from ..clock import iso, parse_iso, shown
from ..pacing import HeavyReads
from ..ports import ConstraintError, Database
from ..store.doctor import REBUILD_FULL_TEXT, DoctorStore
from ..store.memories import MemoryStore
from ..store.messages import MessageRow
from ..store.stored_values import TABLES as STORED_TABLES
from ..store.stored_values import repaired, row_problem, value_problem
from .plans import Plans
from .vector_mirror import VectorMirror

Status = Literal["ok", "warn", "fail"]
_RANK: dict[Status, int] = {"ok": 0, "warn": 1, "fail": 2}

# Rows looked at for vectors missing from the index, or held for rows it must not hold.
SCAN_LIMIT = 5000
# Below this many live memories the shares say nothing yet.
MIN_SAMPLE = 20
ANCHOR_COVERAGE_WARN = 0.5
INSTANT_SHARE_WARN = 0.5
STALE_SHARE_WARN = 0.5
STALE_DAYS = 90
NIGHTLY_WARN_HOURS = 36
# An outbox entry this old has missed its retries; the queue is stuck or down.
OUTBOX_LATE = timedelta(hours=1)
# Memories embedded by one repair; the rest follow from the queue (or the next call).
REPAIR_EMBED_BATCH = 500
# Rows with a time or count no reader can use: listed in the report, rewritten per batch.
UNREADABLE_SHOWN = 20
REPAIR_ROWS_BATCH = 200


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    value: int | float | None
    summary: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HealthReport:
    checked_at: str
    checks: tuple[Check, ...]

    @property
    def status(self) -> Status:
        return max((c.status for c in self.checks), key=_RANK.__getitem__, default="ok")


@dataclass(frozen=True)
class RepairAction:
    name: str
    count: int
    summary: str


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _percent(share: float | None) -> str:
    return "—" if share is None else f"{share * 100:.0f}%"


# The record of the last nightly run (nightly/job.py), None before the first: the
# nightly job stands on the memory services, so the doctor is handed its reader.
LastNightly = Callable[[], Awaitable[dict[str, Any] | None]]


class Doctor:
    def __init__(
        self, db: Database, mirror: VectorMirror, plans: Plans, last_nightly: LastNightly, heavy: HeavyReads
    ) -> None:
        self.db = db
        self.heavy = heavy
        self.mirror = mirror
        self.plans = plans
        self.last_nightly = last_nightly
        self.clock = mirror.clock
        self.store = DoctorStore(db)
        self.memories = MemoryStore(db)

    async def report(self) -> HealthReport:
        """One report at a time (``pacing``): each reads every live memory, some twice."""
        async with self.heavy.turn():
            return await self._report()

    async def _report(self) -> HealthReport:
        # A check at a time: each reads every live memory, or the whole file.
        groups = [
            await check()
            async for check in self.heavy.paced(
                (
                    self._shape,
                    self._anchors,
                    self._duplicates,
                    self._stale,
                    self._plans,
                    self._contradictions,
                    self._vectors,
                    self._backlog,
                    self._nightly,
                    self._unreadable,
                    self._database,
                ),
                size=1,
            )
        ]
        return HealthReport(iso(self.clock.now()), tuple(check for group in groups for check in group))

    async def _shape(self) -> list[Check]:
        layers, types = await self.store.live_by("layer"), await self.store.live_by("type")
        live = sum(layers.values())
        long_share, instant_share = _share(layers.get("long", 0), live), _share(layers.get("instant", 0), live)
        crowded = live >= MIN_SAMPLE and (instant_share or 0) > INSTANT_SHARE_WARN
        return [
            Check("layers", "ok", live, f"{live} live memories by layer", layers),
            Check("types", "ok", len(types), f"{len(types)} types in use", types),
            Check("long_term_share", "ok", long_share, f"{_percent(long_share)} of live memories are long-term"),
            Check(
                "instant_share",
                "warn" if crowded else "ok",
                instant_share,
                f"{_percent(instant_share)} of live memories are instant"
                + ("; most of what is said is not settling into lasting memories" if crowded else ""),
            ),
        ]

    async def _anchors(self) -> list[Check]:
        live = await self.memories.count_live()
        anchored = await self.store.anchored()
        coverage = _share(anchored, live)
        low = live >= MIN_SAMPLE and (coverage or 0) < ANCHOR_COVERAGE_WARN
        return [
            Check(
                "anchor_coverage",
                "warn" if low else "ok",
                coverage,
                f"{anchored} of {live} live memories quote the words they came from",
                {"anchored": anchored, "live": live},
            )
        ]

    async def _duplicates(self) -> list[Check]:
        live = await self.memories.count_live()
        extra, groups = await self.store.duplicates()
        return [
            Check(
                "duplicates",
                "warn" if extra else "ok",
                _share(extra, live) or 0.0,
                f"{extra} live memories repeat another's text word for word"
                + ("; merge or archive them (Review, or the memory's page)" if extra else ""),
                {"extra": extra, "groups": groups},
            )
        ]

    async def _stale(self) -> list[Check]:
        live = await self.memories.count_live()
        cutoff = iso(self.clock.now() - timedelta(days=STALE_DAYS))
        stale = await self.store.unused_since(cutoff)
        share = _share(stale, live)
        many = live >= MIN_SAMPLE and (share or 0) > STALE_SHARE_WARN
        return [
            Check(
                "stale",
                "warn" if many else "ok",
                stale,
                f"{stale} live memories not recalled in {STALE_DAYS} days ({_percent(share)})",
                {"share": share, "days": STALE_DAYS},
            )
        ]

    async def _plans(self) -> list[Check]:
        overdue = await self.plans.overdue()
        return [
            Check(
                "expired_plans",
                "warn" if overdue else "ok",
                len(overdue),
                f"{len(overdue)} plans past their end are still marked active"
                + ("; the nightly job (or a repair) expires them" if overdue else ""),
                {"ids": [p.id for p in overdue[:20]]},
            )
        ]

    async def _contradictions(self) -> list[Check]:
        waiting = await self.store.open_contradictions()
        return [
            Check(
                "contradictions",
                "warn" if waiting else "ok",
                waiting,
                f"{waiting} contradictions wait for the owner in the review queue",
            )
        ]

    async def _vectors(self) -> list[Check]:
        mirror = self.mirror
        mismatch = await mirror.mismatch()
        if mirror.vectors.dimensions != mirror.embedder.dimensions:
            mismatch = mismatch or (
                f"the index takes {mirror.vectors.dimensions}-d vectors but the embedder makes "
                f"{mirror.embedder.dimensions}-d ones"
            )
        missing, missing_complete = await mirror.missing(SCAN_LIMIT)
        orphaned, orphans_complete = await mirror.orphans(SCAN_LIMIT)
        pending = int((await mirror.outbox.stats())["pending"] or 0)
        indexed = await mirror.vectors.count()
        detail = {
            "indexed_vectors": indexed,
            "missing": missing,
            "missing_count_complete": missing_complete,
            "orphaned": len(orphaned),
            "orphan_count_complete": orphans_complete,
            "outbox_pending": pending,
            "mismatch": mismatch,
        }
        if mismatch:
            return [Check("vector_index", "fail", None, f"{mismatch}", detail)]
        # Writes in the outbox reach the index shortly: only what nothing will bring in fails.
        unexplained = missing > pending
        status: Status = "fail" if unexplained or orphaned else "warn" if missing else "ok"
        summary = f"{missing} live memories and episodes missing from the index, {len(orphaned)} vectors of dead rows"
        if missing and not unexplained:
            summary += "; the outbox is catching up"
        return [Check("vector_index", status, missing + len(orphaned), summary, detail)]

    async def _backlog(self) -> list[Check]:
        outbox = await self.mirror.outbox.stats()
        queue = await self.mirror.queue.stats() if self.mirror.queue else None
        pending = int(outbox["pending"] or 0)
        oldest = outbox["oldest"]
        late = isinstance(oldest, str) and self.clock.now() - parse_iso(oldest) > OUTBOX_LATE
        dead = (queue or {}).get("dead", 0)
        queued = (queue or {}).get("queued", 0)
        problems = [f"the oldest outbox entry is from {oldest}"] if late else []
        problems += [f"{dead} tasks gave up (dead)"] if dead else []
        return [
            Check(
                "backlog",
                "warn" if problems else "ok",
                pending + queued,
                f"{pending} vector writes in the outbox, {queued} tasks queued"
                + (f"; {'; '.join(problems)}" if problems else ""),
                {"outbox": dict(outbox), "task_queue": queue},
            )
        ]

    async def _nightly(self) -> list[Check]:
        last = await self.last_nightly()
        now = self.clock.now()
        if last is None:
            oldest = await self.store.oldest_record()
            due = oldest is not None and now - parse_iso(oldest) > timedelta(hours=NIGHTLY_WARN_HOURS)
            return [
                Check(
                    "nightly",
                    "warn" if due else "ok",
                    None,
                    "the nightly job has never run" + ("" if due else " (nothing for it to do yet)"),
                )
            ]
        hours = round((now - parse_iso(last["finished_at"])).total_seconds() / 3600, 1)
        failed = [name for name, step in (last.get("steps") or {}).items() if not step.get("ok")]
        late = hours > NIGHTLY_WARN_HOURS
        summary = f"last run {hours} h ago ({last['trigger']})"
        if failed:
            summary += f"; failed steps: {', '.join(failed)}"
        if late:
            summary += "; it should run every 24 h"
        return [
            Check(
                "nightly",
                "warn" if failed or late else "ok",
                hours,
                summary,
                {"finished_at": last["finished_at"], "ok": last.get("ok"), "failed_steps": failed},
            )
        ]

    async def _unreadable(self) -> list[Check]:
        counts = await self.store.unreadable_counts()
        total = sum(counts.values())
        shown_rows: list[dict[str, Any]] = []
        for table in STORED_TABLES:
            if counts.get(table.name) and len(shown_rows) < UNREADABLE_SHOWN:
                for row in await self.store.unreadable_rows(table, UNREADABLE_SHOWN - len(shown_rows)):
                    column, problem = row_problem(table, row) or ("?", "")
                    shown_rows.append(
                        {
                            "table": table.name,
                            "id": row["key"],
                            "row_id": row["row_id"],
                            "column": column,
                            "value": shown(row.get(column)),
                            "problem": problem,
                        }
                    )
        summary = f"{total} rows hold a time or a number that cannot be read"
        if total:
            summary += "; reads leave them out until a repair rewrites them"
        return [
            Check(
                "unreadable_values", "warn" if total else "ok", total, summary, {"tables": counts, "rows": shown_rows}
            )
        ]

    async def _database(self) -> list[Check]:
        storage = await self.db.storage_check()
        problems = list(storage.problems)
        size = storage.size_bytes
        return [
            Check(
                "database",
                "fail" if problems else "ok",
                len(problems),
                f"{storage.check}: " + ("; ".join(problems[:3]) if problems else "ok"),
                {"check": storage.check, "problems": problems},
            ),
            Check(
                "size",
                "ok",
                size,
                f"{size / 1_048_576:.1f} MiB on disk" if size is not None else storage.size_note or "size unknown",
                {"note": storage.size_note} if storage.size_note else {},
            ),
        ]

    async def _rewrite_unreadable(self) -> RepairAction:
        """Every row the ``unreadable_values`` check finds, rewritten by ``stored_values.repaired``."""
        now = self.clock.now()
        counts = await self.store.unreadable_counts()
        fixed = refused = 0
        for table in (t for t in STORED_TABLES if counts.get(t.name)):
            after = 0
            while rows := await self.store.unreadable_rows(table, REPAIR_ROWS_BATCH, after):
                after = rows[-1]["row_id"]
                statements = [
                    DoctorStore.rewrite(
                        table,
                        row["row_id"],
                        {
                            c.name: repaired(c, row[c.name], row, now)
                            for c in table.columns
                            if value_problem(c, row[c.name])
                        },
                    )
                    for row in rows
                ]
                try:
                    await self.db.batch(statements)
                    fixed += len(statements)
                except ConstraintError:  # one clashes (a diary day the namespace has): the others still go
                    for statement in statements:
                        try:
                            await self.db.run(statement.sql, statement.params)
                            fixed += 1
                        except ConstraintError:
                            refused += 1
        summary = f"{fixed} rows with a time or number that could not be read rewritten"
        if refused:
            summary += f"; {refused} would clash with another row and were left for a look"
        return RepairAction("rewrite_unreadable_values", fixed, summary)

    async def unanchored(
        self, namespace: str, *, older_than: timedelta, limit: int, cursor: str | None
    ) -> tuple[list[MessageRow], str | None]:
        """The user's messages older than ``older_than`` that no memory cites, newest first."""
        before = iso(self.clock.now() - older_than)
        return await self.store.unanchored(namespace, before=before, limit=limit, cursor=cursor)

    async def repair(self) -> list[RepairAction]:
        """Fix what needs no judgement; each action says what it did."""
        # First: what follows (plans past their end) reads the rewritten times.
        actions = [await self._rewrite_unreadable()]
        expired = (await self.plans.expire())["plans_expired"]
        actions.append(RepairAction("expire_plans", expired, f"{expired} plans past their end marked expired"))
        orphaned, complete = await self.mirror.orphans(SCAN_LIMIT)
        if orphaned:
            await self.mirror.vectors.delete(orphaned)
        actions.append(
            RepairAction(
                "delete_orphaned_vectors",
                len(orphaned),
                f"{len(orphaned)} vectors of archived, superseded or deleted memories removed from the index"
                + ("" if complete else f" (the first {SCAN_LIMIT} such rows; run the repair again)"),
            )
        )
        # A sweep over every row, its first pages now and the rest in the background.
        await self.mirror.passes.begin("sweep")
        swept = await self.mirror.passes.step()
        step = await self.mirror.drain(REPAIR_EMBED_BATCH) if swept.queued else None
        await self.mirror.schedule_retry()
        indexed = f"; {step.synced} embedded now" if step else ""
        if swept.running or (step and step.synced < swept.queued):
            indexed += ", the rest in the background"
        actions.append(
            RepairAction(
                "requeue_missing_vectors",
                swept.queued,
                f"{swept.queued} memories and episodes missing from the index queued{indexed}",
            )
        )
        await self.db.batch(list(REBUILD_FULL_TEXT))
        actions.append(RepairAction("rebuild_full_text", 2, "the word and substring indexes rebuilt from the memories"))
        return actions
