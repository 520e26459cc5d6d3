"""``Recall``: a query through the channels, the fusion, the relations, the reranker and
the gates, to the few memories and episodes that matter (see the package's docstring)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from datetime import timedelta

from ...clock import iso
from ...domain.glossary import MentionedTerm, Term
from ...domain.person import Person
from ...domain.search_text import mentions
from ...ports import Clock, Database, Reranker
from ...store.episode_search import EpisodeScope, EpisodeSearch
from ...store.episodes import EpisodeStore
from ...store.glossary import GlossaryStore
from ...store.memories import MemoryStore
from ...store.people import PersonStore
from ...store.precious import PreciousStore
from ...store.shares import ShareStore
from ..config import MemoryConfig
from ..episode_recall import InPrompt, without_evidence
from ..people.names import name_key, named_in, other_names
from ..vector_mirror import VectorMirror
from .accounting import injected
from .channels import Channels, no_vector
from .gates import PRECIOUS_CHECKED, awake, gate
from .hits import RecallMeta, RecallResult
from .ranking import Fusion, rerank_pool
from .reach import EVERY_EPISODE, SHARED_READ, Asked, Reach
from .relations import Related
from .rows import Rows

# How many fused candidates, per place in the final pool, are read from the database:
# enough headroom for the gates and for related memories to climb.
POOL_FACTOR = 2
_MAX_QUERY_CHARS = 2000


class Recall:
    def __init__(
        self,
        db: Database,
        mirror: VectorMirror,
        clock: Clock,
        config: MemoryConfig,
        reranker: Reranker | None = None,
    ) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.reranker = reranker
        self.memories = MemoryStore(db)
        self.episodes = EpisodeStore(db)
        self.channels = Channels(mirror, self.memories, EpisodeSearch(db), config)
        self.fusion = Fusion(mirror.vectors, mirror.embedder, config)

    async def run(
        self,
        query: str,
        *,
        namespace: str = "default",
        namespaces: Sequence[str] = (),
        k: int | None = None,
        min_score: float | None = None,
        types: Sequence[str] = (),
        rerank: bool = True,
        expand: bool = True,
        account: bool = False,
        vector: bool = True,
        resting: bool = False,
        episodes: EpisodeScope | None = EVERY_EPISODE,
        memories: bool = True,
        in_prompt: Sequence[str] = (),
    ) -> RecallResult:
        """``namespaces`` are looked in besides ``namespace`` (whose glossary and precious
        rows apply). ``account`` is recall's bookkeeping (injection time and count,
        revivals); search leaves it off. ``vector=False`` answers from the full-text index
        alone. ``resting`` also finds cold and asleep memories, and archived episodes by
        their meaning (search does). ``episodes`` narrows the episodes looked in (None:
        none; its namespaces are recall's); a ``types`` filter is about memories and
        leaves them out. ``in_prompt``: the texts of the messages the prompt holds, whose
        episodes are not returned."""
        now = self.clock.now()
        k = max(1, min(100, k if k is not None else self.config.memory_filter_max_output))
        floor = self.config.recall_min_score if min_score is None else min_score
        meta = RecallMeta(k=k, min_score=floor)
        text = query.strip()[:_MAX_QUERY_CHARS]
        if not text:
            meta.notes.append("empty query")
            return RecallResult([], [], meta)
        # The query's vector is asked for first: the reads below go on meanwhile.
        asked_for = (text, self.channels.ask_vector(text)) if vector else None
        names = tuple(dict.fromkeys((namespace, *namespaces)))
        # What the query's words do not depend on is read side by side: each read is a
        # round trip (on D1, a hop across the network) that need not wait for the others.
        terms, people, shares, precious = await asyncio.gather(
            GlossaryStore(self.db).entries(namespace),
            PersonStore(self.db).active(namespace),
            ShareStore(self.db).approved_into(names, SHARED_READ),
            PreciousStore(self.db).newest_contents(namespace, PRECIOUS_CHECKED),
        )
        glossary_hits = _glossary_hits(terms, text)
        reach = Reach(names, {s.memory_id: s.id for s in shares})
        # The substring channel keeps the query as said: a nickname no memory holds would
        # send every recall that names them through the trigram scan.
        said = text
        text, person_names = _with_other_names(people, text, meta)
        scope = None if episodes is None or types else dataclasses.replace(episodes, namespaces=reach.namespaces)
        asked = Asked(reach, types, scope, memories, InPrompt(in_prompt), now, self.config.dream_time_zone)
        found, words = await asyncio.gather(
            self.channels.vector(text, asked, meta, asked_for) if vector else no_vector(),
            self.channels.words(text, said, asked),
        )
        size = max(self.config.memory_filter_max_candidates, k)
        policy = self.config.layer_policy
        rows = Rows(self.memories, self.episodes)
        pool = await self.fusion.pool(found, words, asked, rows, POOL_FACTOR * size, meta, person_names)
        pool = awake(pool, resting, meta, now, policy)
        related = Related(self.memories, self.episodes, rows, asked)
        if expand and pool:
            pool = awake(await related.expand(pool), resting, meta, now, policy)
        pool = (await related.contradictions(pool, meta))[:size]
        if rerank:
            await rerank_pool(self.reranker, self.config, text, pool, meta)
        else:
            meta.reranker = "skipped"
        window = timedelta(minutes=self.config.memory_inject_decay_window_min)
        gated = gate(pool, precious, floor, meta, now, window)
        kept, meta.evidence = without_evidence([(h.memory, h.episode is not None) for h in gated], k)
        hits = [gated[i] for i in kept]
        meta.components = {h.memory.id: meta.components[h.memory.id] for h in hits}
        meta.episodes = [h.memory.id for h in hits if h.episode is not None]
        for hit in hits:
            hit.share_id = reach.share_of(hit.memory)
        if account and hits:
            await self.db.batch(injected(hits, iso(now), policy))
        return RecallResult(hits, glossary_hits, meta, found.vector if text == query.strip() else None)


def _with_other_names(people: Sequence[Person], text: str, meta: RecallMeta) -> tuple[str, list[str]]:
    """The query with the other names of the people it names (asked about "my sister",
    recall also looks for "Ana" and "安娜", memory/people/names.py), and all their names."""
    extra = other_names(people, text)
    if not extra:
        return text, []
    meta.notes.append(f"people named: also searched as {', '.join(extra)}")
    return f"{text}\n{' '.join(extra)}", [name_key(n) for p in named_in(people, text) for n in p.names]


def _glossary_hits(entries: Sequence[Term], text: str) -> list[MentionedTerm]:
    lowered = text.lower()
    found = []
    for entry in entries:
        matched = [n for n in entry.names if len(n) >= 2 and mentions(lowered, n.lower())]
        if matched:
            found.append(MentionedTerm(**vars(entry), matched=matched[0]))
    return found
