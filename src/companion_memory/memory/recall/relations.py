"""What relation edges do to recall's pool: one hop of expansion (a related memory, an
episode's neighbouring turns), and ``contradicts`` edges, which hold the older claim back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ...domain.relation import Relation
from ...store.episodes import EpisodeStore
from ...store.memories import MemoryStore
from ..episode_recall import adjacent_to, as_memory
from .hits import Hit, RecallMeta
from .reach import Asked
from .rows import Rows

# Share of a related memory's score that one hop along an edge passes on.
RELATION_SHARE = 0.4
# The weight of the edge between an episode and the turn said just before or after it.
EPISODE_THREAD_WEIGHT = 1.0


class Related:
    """The relation edges one recall reads: expansion and the contradiction check look at
    mostly the same memories, whose edges are read once."""

    def __init__(self, memories: MemoryStore, episodes: EpisodeStore, rows: Rows, asked: Asked) -> None:
        self.memories = memories
        self.episodes = episodes
        self.rows = rows
        self.asked = asked
        self.read: set[str] = set()
        self.found: dict[tuple[str, str, str], Relation] = {}

    async def expand(self, pool: list[Hit]) -> list[Hit]:
        """One hop along relation edges: a memory gains a weighted share of its best
        related memory's score, and a related memory outside the pool joins with that
        share. A ``contradicts`` edge lends nothing (see ``contradictions``). An episode's
        neighbours in its conversation (the turns said just before and after it) are
        related to it as a ``same_thread`` edge of weight 1 relates two memories."""
        asked = self.asked
        by_id = {h.memory.id: h for h in pool}
        fused = {id_: h.score for id_, h in by_id.items()}
        lent: dict[str, tuple[float, str]] = {}

        def lend(here: str, there: str, weight: float) -> None:
            share = RELATION_SHARE * weight * fused[here]
            if share > lent.get(there, (0.0, ""))[0]:
                lent[there] = (share, here)

        told = [h.episode for h in pool if h.episode is not None]
        edges, around = await asyncio.gather(
            self._touching([i for i, h in by_id.items() if h.episode is None]),
            self.episodes.adjacent(told),
        )
        for edge in edges:
            for here, there in ((edge.source_id, edge.target_id), (edge.target_id, edge.source_id)):
                if here in by_id and edge.relation != "contradicts":
                    lend(here, there, float(edge.weight))
        for hit in pool:
            if hit.episode is not None:
                hit.thread = [e for e in adjacent_to(hit.episode, around) if asked.admits(e)]
                for neighbour in hit.thread:
                    lend(hit.episode.id, neighbour.id, EPISODE_THREAD_WEIGHT)
        for id_, (share, _) in lent.items():
            if id_ in by_id:
                by_id[id_].score += share
        outside = [id_ for id_ in lent if id_ not in by_id]
        turns = {e.id for e in around}
        # In id order, as the table gives them: the pool's sort is stable, and this
        # decides between two that gain as much.
        for memory in (await self.rows.memories(sorted(i for i in outside if i not in turns))).values():
            if asked.returns(memory):
                share, source = lent[memory.id]
                pool.append(Hit(memory=memory, score=share, raw_score=None, via=source))
        for neighbour in around:
            if neighbour.id in outside and asked.admits(neighbour):
                share, source = lent[neighbour.id]
                pool.append(Hit(as_memory(neighbour), score=share, raw_score=None, via=source, episode=neighbour))
        pool.sort(key=lambda h: h.score, reverse=True)
        return pool

    async def contradictions(self, pool: list[Hit], meta: RecallMeta) -> list[Hit]:
        """A ``contradicts`` edge between two live memories is a question the owner has
        not answered yet: the newer memory stands and is flagged, the older stays out.
        When the query found only the older, the newer takes its place (and its scores:
        the two are about the same thing)."""
        reach, types = self.asked.reach, self.asked.types
        by_id = {h.memory.id: h for h in pool}
        memory_ids = [i for i, h in by_id.items() if h.episode is None]
        contradictions = [e for e in await self._touching(memory_ids) if e.relation == "contradicts"]
        if not contradictions:
            return pool
        rows = {h.memory.id: h.memory for h in pool}
        ends = {e.source_id for e in contradictions} | {e.target_id for e in contradictions}
        rows.update(await self.rows.memories(i for i in ends if i not in rows))
        for edge in contradictions:
            source, target = rows.get(edge.source_id), rows.get(edge.target_id)
            if source is None or target is None or not (reach.live(source) and reach.live(target)):
                continue
            # The edge points from the newer claim; creation time decides for edges drawn by hand.
            newer, older = (target, source) if target.created_at > source.created_at else (source, target)
            held = by_id.pop(older.id, None)
            if held is not None:
                meta.contradicted.append(older.id)
            hit = by_id.get(newer.id)
            if hit is None:
                if held is None or not reach.live(newer, types):
                    continue
                hit = by_id[newer.id] = Hit(memory=newer, score=held.score, raw_score=held.raw_score, via=older.id)
            if older.id not in hit.contradicted_by:
                hit.contradicted_by.append(older.id)
                hit.contradicted_claims.append(older.content)
        return sorted(by_id.values(), key=lambda h: h.score, reverse=True)

    async def _touching(self, ids: Sequence[str]) -> list[Relation]:
        missing = [id_ for id_ in ids if id_ not in self.read]
        if missing:
            for edge in await self.memories.neighbours(missing):
                self.found[(edge.source_id, edge.target_id, edge.relation)] = edge
            self.read.update(missing)
        wanted = set(ids)
        return [e for e in self.found.values() if e.source_id in wanted or e.target_id in wanted]
