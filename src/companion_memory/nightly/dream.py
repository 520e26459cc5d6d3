"""The nightly dream: a day's raw messages become a diary entry, candidate memories,
entries of the mood timeline, and proposals about people (memory/people/), whose
familiarity grows with each message that names them.

Batches of ``DREAM_MAX_MESSAGES`` are read from a cursor that only moves when a batch
is fully handled, so a failed or repeated night never loses or doubles anything. Every
candidate must quote its messages verbatim, must pass the sensitive-data filter, and is
pointed at the memory it would change when one already says the same. Moods are no
candidates: they are written to the timeline with the batch (they fade, and are never
recalled), with the same evidence and sensitive-data checks.
"""

from __future__ import annotations

import uuid
from datetime import date, timedelta
from typing import Any

from ..clock import day_bounds, iso, local_date
from ..domain.candidate import Candidate
from ..domain.memory import Memory
from ..domain.message import Message
from ..domain.mood import Mood
from ..domain.types import normalise_type
from ..errors import ServiceError
from ..memory.config import MemoryConfig
from ..memory.contradictions import question
from ..memory.drafts import Actor, MemoryDraft
from ..memory.memories import MemoryWriter
from ..memory.model_call import JobModel
from ..memory.moods import normalise_mood, normalise_whose
from ..memory.people.proposals import PersonProposals
from ..memory.people.registry import People
from ..memory.plan_dates import has_passed
from ..memory.sensitive import refused_classes
from ..memory.vector_mirror import VectorMirror
from ..ports import Clock, Database, InfrastructureError
from ..store.candidates import CandidateStore
from ..store.dream import DreamStore
from ..store.moods import MoodStore, mood_row
from ..store.people import PersonStore
from .dream_candidates import candidate_row, is_world_fact, not_proposed, plan_end
from .dream_model import confirms_contradiction
from .extraction import ExtractedChange, ExtractedMemory, ExtractedMood, Extractor


class Dream:
    def __init__(
        self,
        db: Database,
        writer: MemoryWriter,
        mirror: VectorMirror,
        clock: Clock,
        config: MemoryConfig,
        extractor: Extractor,
        judge: JobModel | None = None,
    ) -> None:
        self.db = db
        self.writer = writer
        self.mirror = mirror
        self.clock = clock
        self.config = config
        self.extractor = extractor
        # DREAM_MODEL, when configured: it confirms or dismisses what the contradiction rules suspect.
        self.judge = judge
        self.store = DreamStore(db)
        self.candidates = CandidateStore(db)
        self.people = People(db, clock, config)
        self.person_proposals = PersonProposals(db, self.people)

    def yesterday(self) -> date:
        return local_date(self.clock.now(), self.config.dream_time_zone) - timedelta(days=1)

    async def night(self, day: date | None = None, *, dry_run: bool = False) -> list[dict[str, Any]]:
        """Dream every namespace that has messages on ``day``. Without a day: every local
        day up to yesterday, within MESSAGES_RETENTION_DAYS, that holds messages the dream
        has not read, oldest first; so a missed night, or messages that arrive late (the
        GitHub daily pull, a recent import), are caught up, and a second run finds nothing new.
        At most DREAM_MAX_RUNS batches in all: what is left waits for the next run. Older
        days are dreamt on demand (nightly/backfill.py)."""
        budget = self.config.dream_max_runs
        reports = []
        proposed: set[tuple[str, str]] = set()
        for namespace, unread_day in await self._unread(day):
            if budget <= 0:
                break
            report = await self.run(namespace, unread_day, dry_run=dry_run, max_batches=budget, proposed=proposed)
            budget -= report["counts"]["batches"]
            reports.append(report)
        return reports

    async def _unread(self, day: date | None) -> list[tuple[str, date]]:
        """(namespace, day) pairs to dream: the given day's, or the recent days with unread messages."""
        if day is not None:
            since, until = day_bounds(day, self.config.dream_time_zone)
            return [(ns, day) for ns in await self.store.namespaces_with_messages(since, until)]
        found = []
        yesterday = self.yesterday()
        for back in range(self.config.messages_retention_days - 1, -1, -1):
            past = yesterday - timedelta(days=back)
            since, until = day_bounds(past, self.config.dream_time_zone)
            for namespace in await self.store.namespaces_with_messages(since, until):
                if await self.has_unread(namespace, past):
                    found.append((namespace, past))
        return found

    async def has_unread(self, namespace: str, day: date) -> bool:
        """Whether the namespace's day holds messages the dream has not read yet."""
        since, until = day_bounds(day, self.config.dream_time_zone)
        position = await self.store.cursor(self.cursor_name(namespace, day))
        return bool(await self.store.messages_after(namespace, since, until, position, 1))

    @staticmethod
    def cursor_name(namespace: str, day: date) -> str:
        return f"dream:{namespace}:{day.isoformat()}"

    async def run(
        self,
        namespace: str,
        day: date,
        *,
        dry_run: bool = False,
        max_batches: int | None = None,
        proposed: set[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        """One namespace's day, up to ``max_batches`` batches (DREAM_MAX_RUNS); the report's
        ``more_to_read`` says the day has messages left for the next run. ``proposed`` holds
        the (namespace, normalised content) of the additions proposed so far this night:
        none is proposed twice."""
        proposed = set() if proposed is None else proposed
        since, until = day_bounds(day, self.config.dream_time_zone)
        cursor_name = self.cursor_name(namespace, day)
        position = await self.store.cursor(cursor_name)
        report: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "namespace": namespace,
            "date": day.isoformat(),
            "dry_run": dry_run,
            "status": "succeeded",
            "messages_read": 0,
            "candidates_created": 0,
            "error": None,
            "extractor": self.extractor.name,
            "counts": {
                "batches": 0,
                "rejected_no_evidence": 0,
                "rejected_sensitive": 0,
                "rejected_unknown_target": 0,
                "with_target": 0,
                "applied_world_facts": 0,
                "past_plans": 0,
                "contradictions": 0,
                "contradictions_dismissed": 0,
                "moods_logged": 0,
                "rejected_moods": 0,
                "people_proposals": 0,
                "people_mentioned": 0,
                "duplicates": 0,
            },
            "started_at": iso(self.clock.now()),
            "candidates": [],
            "more_to_read": False,
        }
        try:
            for _ in range(max_batches or self.config.dream_max_runs):
                batch = await self.store.messages_after(
                    namespace, since, until, position, self.config.dream_max_messages
                )
                if not batch:
                    break
                shown, _ = await self.writer.store.page(namespace, limit=self.config.dream_memory_context_limit)
                extraction = await self.extractor.extract(batch, day.isoformat(), shown)
                additions = not_proposed(namespace, extraction.add, proposed, report["counts"])
                candidates = await self._not_waiting(
                    namespace,
                    [c for memory in additions if (c := await self._addition(namespace, batch, memory, day, report))],
                    report,
                )
                for kind, changes in (("update", extraction.update), ("delete", extraction.delete)):
                    candidates += [
                        c for change in changes if (c := await self._change(namespace, batch, change, kind, report))
                    ]
                moods = [m for mood in extraction.moods if (m := self._mood(namespace, batch, mood, report))]
                proposals = await self.person_proposals.proposals_for(
                    namespace,
                    [p for p in extraction.people if self._acceptable(batch, p.evidence, p.name, report)],
                    [
                        s
                        for s in extraction.same_people
                        if self._acceptable(batch, s.evidence, " ".join(s.names), report)
                    ],
                    "dream",
                )
                mentions = await self.people.mention_statements(namespace, batch)
                last = batch[-1]
                position = (last.created_at, last.id)
                now = iso(self.clock.now())
                report["messages_read"] += len(batch)
                report["counts"]["batches"] += 1
                report["candidates"] += [c.as_reported() for c in candidates]
                if dry_run:
                    continue
                await self.db.batch(
                    [CandidateStore.insert(c.replace(dream_run_id=report["id"])) for c in candidates]
                    + [MoodStore.insert(m) for m in moods]
                    + [PersonStore.propose(p.replace(reason=f"{p.reason} (dream {report['id']})")) for p in proposals]
                    + mentions
                    + [
                        DreamStore.upsert_daily(
                            str(uuid.uuid4()),
                            namespace,
                            day.isoformat(),
                            extraction.title,
                            extraction.summary,
                            len(batch),
                            now,
                        ),
                        DreamStore.advance(cursor_name, namespace, *position, now),
                    ]
                )
                report["candidates_created"] += len(candidates)
                report["counts"]["moods_logged"] += len(moods)
                report["counts"]["people_proposals"] += len(proposals)
                report["counts"]["people_mentioned"] += len(mentions)
            else:
                report["more_to_read"] = bool(await self.store.messages_after(namespace, since, until, position, 1))
        except Exception as error:  # noqa: BLE001 - recorded; the cursor stays where the last good batch left it
            report["status"], report["error"] = "failed", f"{type(error).__name__}: {error}"
        report["finished_at"] = iso(self.clock.now())
        if not dry_run:
            await self.db.batch([DreamStore.record_run(report)])
        return report

    async def _not_waiting(
        self, namespace: str, candidates: list[Candidate], report: dict[str, Any]
    ) -> list[Candidate]:
        """The candidates that no pending one proposes already in the same words (an earlier
        night's, for something said again)."""
        waiting = await self.candidates.pending_with_content(namespace, [c.content for c in candidates])
        report["counts"]["duplicates"] += sum(c.content in waiting for c in candidates)
        return [c for c in candidates if c.content not in waiting]

    async def _addition(
        self,
        namespace: str,
        batch: list[Message],
        memory: ExtractedMemory,
        day: date,
        report: dict[str, Any],
    ) -> Candidate | None:
        if not self._acceptable(batch, memory.evidence, memory.content, report):
            return None
        memory_type = normalise_type(memory.type) or "note"
        valid_to = plan_end(memory, day, self.config.dream_time_zone) if memory_type == "plan" else None
        if valid_to and has_passed(valid_to, self.clock.now(), self.config.dream_time_zone):
            # Over before anyone could review it: not a plan to keep.
            report["counts"]["past_plans"] += 1
            return None
        pairs = await self.writer.contradictions.find(namespace, memory.content, memory.fact_key, memory_type)
        if pairs and self.judge is not None:
            verdicts = [await confirms_contradiction(self.judge, memory.content, p.older.content) for p in pairs]
            report["counts"]["contradictions_dismissed"] += verdicts.count(False)
            pairs = [pair for pair, verdict in zip(pairs, verdicts, strict=True) if verdict is not False]
        reason = None
        target: str | None
        if pairs:
            report["counts"]["contradictions"] += 1
            kind, target = "contradiction", pairs[0].older.id
            reason = question(pairs[0].older, pairs[0].reason)
        else:
            target = await self._duplicate_of(namespace, memory)
            report["counts"]["with_target"] += bool(target)
            kind = "update" if target else "add"
        row = candidate_row(
            namespace,
            batch,
            kind,
            memory_type,
            memory.content,
            memory.fact_key,
            memory.importance,
            memory.confidence,
            memory.evidence,
            target,
            iso(self.clock.now()),
            valid_to,
        )
        return row.replace(reason=reason)

    def _mood(self, namespace: str, batch: list[Message], mood: ExtractedMood, report: dict[str, Any]) -> Mood | None:
        """A timeline entry, felt when the first quoted message was said; None for a mood the
        vocabulary does not know, or one that fails the evidence or sensitive-data check."""
        label, whose = normalise_mood(mood.label), normalise_whose(mood.whose)
        if label is None or whose is None or not mood.evidence:
            report["counts"]["rejected_moods"] += 1
            return None
        reason = (mood.reason or mood.evidence[0]).strip()
        if not self._acceptable(batch, mood.evidence, reason, report):
            return None
        said = next(m for m in batch if mood.evidence[0] in m.content)
        return mood_row(
            namespace,
            whose,
            label,
            reason[:500],
            mood.intensity,
            said.created_at,
            "dream",
            said.id,
            iso(self.clock.now()),
        )

    async def _change(
        self, namespace: str, batch: list[Message], change: ExtractedChange, kind: str, report: dict[str, Any]
    ) -> Candidate | None:
        target = await self.writer.store.get(change.target_id)
        if target is None or target.namespace != namespace or target.status != "active":
            report["counts"]["rejected_unknown_target"] += 1
            return None
        content = target.content if kind == "delete" else (change.content or "")
        if not content or not self._acceptable(batch, change.evidence, content, report):
            return None
        row = candidate_row(
            namespace,
            batch,
            kind,
            target.type,
            content,
            target.fact_key,
            target.importance,
            target.confidence,
            change.evidence,
            target.id,
            iso(self.clock.now()),
        )
        if kind == "update" and is_world_fact(target.fact_key) and not target.authored_by and not report["dry_run"]:
            row = await self._apply_world_fact(row, target, report)
        return row

    async def _apply_world_fact(self, row: Candidate, target: Memory, report: dict[str, Any]) -> Candidate:
        """The reference applies a correction of a world fact at once (the world changed;
        nothing about the user is decided): supersede now, and keep the candidate as the
        approved record of it."""
        draft = MemoryDraft(
            content=row.content,
            type=target.type,
            fact_key=target.fact_key,
            importance=target.importance,
            confidence=target.confidence,
            source="dream",
            source_message_ids=row.source_message_ids,
            evidence=row.evidence,
        )
        try:
            result = await self.writer.supersede(target.namespace, target.id, draft, Actor("dream"))
        except ServiceError as error:  # changed meanwhile, or refused: it waits for review instead
            return row.replace(reason=f"not applied directly: {error.message}")
        report["counts"]["applied_world_facts"] += 1
        return row.replace(
            status="approved",
            result_memory_id=result.memory.id,
            reviewed_at=iso(self.clock.now()),
            reason="world fact: applied directly (superseded)",
        )

    def _acceptable(self, batch: list[Message], quotes: list[str], content: str, report: dict[str, Any]) -> bool:
        """Every quote occurs verbatim in the batch, and the content holds no secret."""
        if not all(any(q in m.content for m in batch) for q in quotes):
            report["counts"]["rejected_no_evidence"] += 1
            return False
        if refused_classes(content, self.config.memory_sensitive_allow):
            report["counts"]["rejected_sensitive"] += 1
            return False
        return True

    async def _duplicate_of(self, namespace: str, memory: ExtractedMemory) -> str | None:
        """The live memory this one would change: same fact_key, or cosine ≥ DEDUP_COSINE."""
        if memory.fact_key:
            same = await self.writer.store.current_by_fact_key(namespace, memory.fact_key)
            if same:
                return same.id
        try:
            return await self.mirror.near_duplicate(namespace, memory.content, self.config.dedup_cosine)
        except InfrastructureError:  # a hint only: without it the reviewer still sees the candidate
            return None
