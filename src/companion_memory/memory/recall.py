"""Recall: the few memories that matter for a query.

Three channels find candidates — the vector index (meaning), the full-text index
(words, CJK bigrams) and, for fragments no word matches (codes, ids, parts of words), the
substring index — and reciprocal-rank fusion merges them. The pool is cut to the
best ``MEMORY_FILTER_MAX_CANDIDATES``, reranked when a reranker is configured, then
passed through the gates: nothing that repeats a precious row, a floor on the raw
score, then each hit weighed by its learned importance and freshness (domain/weight.py)
and recently injected memories ranked lower. Of two live memories that contradict each
other and wait for the owner's decision, only the newer is returned, flagged. Cold
memories, and instant ones past their waking hours, rest (domain/layers.py): search
finds them, recall does not, except an asleep instant memory that the query names.
Recall (not search) records what it injected, which revives an instant memory.

A query that names a person (memory/people/names.py) is searched under her other names too,
so "my sister", "Ana" and "安娜" find the same memories.

Recall in a namespace also sees the memories approved-shared into it (memory/shares.py),
and may be asked to look in more namespaces at once: every channel reads them all, so
their candidates meet in one fusion and one ranking, and each hit says where it lives
(and, for a shared one, through which share).

Episodes (what was said, memory/episode_recall.py) are ranked in the same ranking: each
channel asks the memories and the episodes, and merges what both answer by the same
measure (cosine, bm25) before the fusion. An episode weighs less than any memory, so a
curated memory outranks an episode of equal relevance; an episode that is the evidence of
a returned memory is not returned beside it, nor one the prompt holds already (the
conversation's own turns, ``in_prompt``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..clock import iso, parse_iso
from ..domain.episode import EPISODE_KIND, Episode
from ..domain.glossary import MentionedTerm
from ..domain.layers import REVIVE_RELEVANCE, instant_phase, revived
from ..domain.memory import Memory
from ..domain.search_text import (
    embedding_text,
    gate_tokens,
    jaccard,
    mentions,
    normalised,
    query_terms,
    substring_needles,
)
from ..domain.weight import EPISODE_WEIGHT, weigh
from ..ports import Clock, Database, ModelError, Reranker, VectorFilterValue, VectorIndexError
from ..store.episode_search import EpisodeScope, EpisodeSearch
from ..store.episodes import EpisodeStore
from ..store.glossary import GlossaryStore
from ..store.memories import MemoryStore
from ..store.people import PersonStore
from ..store.precious import PreciousStore
from ..store.shares import ShareStore
from .config import MemoryConfig
from .episode_recall import (
    ARCHIVED_BY_MEANING,
    WORD_CHANNELS,
    InPrompt,
    adjacent_to,
    as_memory,
    episode_phase,
    without_evidence,
)
from .people.names import name_key, named_in, names_any, other_names
from .plan_dates import is_open
from .vector_mirror import MEMORY_FILTER, VectorMirror

# Reciprocal-rank fusion constant: small, so that the top ranks of each channel count
# for more than a long tail (measured on LoCoMo by bench/locomo_recall.py).
RRF_K = 10
# Meaning counts for a little more than shared words (LoCoMo R@5 0.663 vs 0.658 offline).
CHANNEL_WEIGHTS = {"vector": 1.3, "lexical": 1.0, "substring": 1.0}
PRECIOUS_OVERLAP = 0.6
DECAY_FACTOR = 0.5
# Share of a related memory's score that one hop along an edge passes on.
RELATION_SHARE = 0.4
# The weight of the edge between an episode and the turn said just before or after it.
EPISODE_THREAD_WEIGHT = 1.0
# How many fused candidates, per place in the final pool, are read from the database:
# enough headroom for the gates and for related memories to climb.
POOL_FACTOR = 2
_MAX_QUERY_CHARS = 2000
_PRECIOUS_CHECKED = 500
# The episodes recall looks in unless told otherwise: all of its namespaces'.
EVERY_EPISODE = EpisodeScope()
# Approved shares read per recall, the newest first. The vector channel scores each one
# (the index cannot filter on a share), so a namespace with more sees the newest only.
SHARED_READ = 100


@dataclass
class Hit:
    memory: Memory
    score: float  # what the ranking uses (after decay)
    # Relevance before any decay: the reranker's score, else the cosine similarity mapped
    # onto 0–1 (see Embedder.similarity_range); None when neither could be had (vector
    # search down, no reranker), and then no floor applies.
    raw_score: float | None
    channels: dict[str, int] = field(default_factory=dict)  # channel → 1-based rank
    decayed: bool = False
    via: str | None = None  # the hit whose relation brought this one in
    # Older live memories this one contradicts, the owner not having said which stands
    # (ids, and their contents for the prompt); those stay out of recall meanwhile.
    contradicted_by: list[str] = field(default_factory=list)
    contradicted_claims: list[str] = field(default_factory=list)
    share_id: str | None = None  # the approved share that brought it from its own namespace
    about_person: bool = False  # it names a person the query names (no similarity floor)
    # Set when the hit is an episode (``memory`` is then its view, episode_recall.as_memory),
    # and whether it is archived (found by its words only).
    episode: Episode | None = None
    archived: bool = False
    # An episode's neighbours in its conversation that recall may return (the turns just
    # before and after it), read by the expansion: the injection shows one where it helps.
    thread: list[Episode] = field(default_factory=list)


@dataclass(frozen=True)
class Reach:
    """Where recall looks: its namespaces, and the memories of other namespaces shared
    into them (memory id → share id)."""

    namespaces: tuple[str, ...]
    shared: dict[str, str]

    def sees(self, memory: Memory) -> bool:
        return memory.namespace in self.namespaces or memory.id in self.shared

    def share_of(self, memory: Memory) -> str | None:
        return None if memory.namespace in self.namespaces else self.shared.get(memory.id)


@dataclass
class ScoreParts:
    """How a hit's score was made (see domain/weight.py): score = relevance × weight × decay."""

    relevance: float  # the fused rank score, or the reranker's
    raw_score: float | None
    importance: float
    freshness: float
    authored: float
    weight: float
    decay: float
    score: float


@dataclass
class RecallMeta:
    """How recall reached its hits: the ids it set aside at each gate, which reranker ran
    (``off``, ``skipped``, ``failed`` or the model), and notes on what degraded."""

    k: int
    min_score: float
    reranker: str | None = None
    decayed: list[str] = field(default_factory=list)
    deduped: list[str] = field(default_factory=list)
    floored: list[str] = field(default_factory=list)
    precious_overlap: list[str] = field(default_factory=list)
    # Older memories held back because a newer one contradicts them (see Hit.contradicted_by).
    contradicted: list[str] = field(default_factory=list)
    # Cold memories, and asleep instant ones the query did not name: they rest (layers).
    resting: list[str] = field(default_factory=list)
    # The hits that are episodes; episodes set aside as already in the prompt, and as the
    # evidence of a memory returned.
    episodes: list[str] = field(default_factory=list)
    in_prompt: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    components: dict[str, ScoreParts] = field(default_factory=dict)


@dataclass
class _WordFound:
    """What the word channels found: ids best first per channel, and their rows."""

    ranked: dict[str, list[str]]
    rows: dict[str, Memory]
    episodes: dict[str, Episode]


@dataclass
class _VectorFound:
    """What the vector channel found: id → cosine, best first, which of them are
    episodes, and the query's vector (None when the channel is down)."""

    scores: dict[str, float]
    episodes: set[str]
    vector: list[float] | None


@dataclass(frozen=True)
class _Asked:
    """What one recall looks in: its reach, the memory types (none: every type), and the
    episodes (None: none)."""

    reach: Reach
    types: Sequence[str]
    episodes: EpisodeScope | None
    memories: bool
    prompt: InPrompt


@dataclass
class RecallResult:
    hits: list[Hit]
    glossary_hits: list[MentionedTerm]
    meta: RecallMeta
    # The vector channel's embedding of the query as given (``embedding_text`` of it, in
    # query mode), for a caller that stores those words (the gateway's user turn); None
    # when it embedded other words (the query cut, or widened with people's other names)
    # or none at all.
    query_vector: list[float] | None = None


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
        self.mirror = mirror
        self.vectors = mirror.vectors
        self.embedder = mirror.embedder
        self.clock = clock
        self.config = config
        self.reranker = reranker
        self.memories = MemoryStore(db)
        self.episodes = EpisodeStore(db)
        self.episode_search = EpisodeSearch(db)

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
        glossary_hits = await self._glossary_hits(namespace, text) if text else []
        if not text:
            meta.notes.append("empty query")
            return RecallResult([], glossary_hits, meta)

        # The substring channel keeps the query as said: a nickname no memory holds would
        # send every recall that names her through the trigram scan.
        said = text
        text, person_names = await self._with_other_names(namespace, text, meta)
        reach = await self._reach((namespace, *namespaces))
        scope = None if episodes is None or types else dataclasses.replace(episodes, namespaces=reach.namespaces)
        asked = _Asked(reach, types, scope, memories, InPrompt(in_prompt))
        found, words = await asyncio.gather(
            self._vector_channel(text, asked, meta) if vector else _nothing(),
            self._word_channels(text, said, asked),
        )
        size = max(self.config.memory_filter_max_candidates, k)
        pool = await self._pool(found, words, asked, POOL_FACTOR * size, meta, person_names)
        pool = self._awake(pool, resting, meta)
        edges = _Edges(self.memories)
        if expand and pool:
            pool = self._awake(await self._expand(pool, edges, asked), resting, meta)
        pool = (await self._contradictions(pool, edges, reach, types, meta))[:size]
        if rerank:
            await self._rerank(text, pool, meta)
        else:
            meta.reranker = "skipped"
        gated = await self._gate(pool, namespace, floor, meta)
        kept, meta.evidence = without_evidence([(h.memory, h.episode is not None) for h in gated], k)
        hits = [gated[i] for i in kept]
        meta.components = {h.memory.id: meta.components[h.memory.id] for h in hits}
        meta.episodes = [h.memory.id for h in hits if h.episode is not None]
        for hit in hits:
            hit.share_id = reach.share_of(hit.memory)
        if account and hits:
            await self._account(hits, iso(now))
        return RecallResult(hits, glossary_hits, meta, found.vector if text == query.strip() else None)

    async def _with_other_names(self, namespace: str, text: str, meta: RecallMeta) -> tuple[str, list[str]]:
        """The query with the other names of the people it names (asked about "my sister",
        recall also looks for "Ana" and "安娜", memory/people/names.py), and all their names."""
        people = await PersonStore(self.db).active(namespace)
        extra = other_names(people, text)
        if not extra:
            return text, []
        meta.notes.append(f"people named: also searched as {', '.join(extra)}")
        return f"{text}\n{' '.join(extra)}", [name_key(n) for p in named_in(people, text) for n in p.names]

    async def _account(self, hits: list[Hit], now: str) -> None:
        """Injected now, once more; an instant memory or episode is revived by it."""
        policy = self.config.layer_policy
        statements = MemoryStore.mark_injected([h.memory.id for h in hits if h.episode is None], now)
        for hit in hits:
            memory = hit.memory.replace(last_injected_at=now, recall_count=hit.memory.recall_count + 1)
            if hit.episode is not None:
                changes = revived(memory, now, policy) if memory.layer == "instant" else {}
                statements.append(EpisodeStore.mark_injected(memory.id, now, changes))
                hit.episode = hit.episode.replace(
                    last_injected_at=now,
                    recall_count=memory.recall_count,
                    **{c: changes[c] for c in ("layer", "layer_at", "revivals") if c in changes},
                )
                hit.memory = as_memory(hit.episode)
                continue
            if memory.layer == "instant":
                changes = revived(memory, now, policy)
                statements.append(MemoryStore.update(memory.id, changes))
                if "layer" in changes:
                    statements.append(
                        MemoryStore.event(
                            memory.namespace,
                            memory.id,
                            "layer_changed",
                            "recall",
                            {"from": "instant", "to": changes["layer"], "reason": changes["layer_reason"]},
                            now,
                        )
                    )
                memory = memory.replace(**changes)
            hit.memory = memory
        await self.db.batch(statements)

    def _awake(self, pool: list[Hit], resting: bool, meta: RecallMeta) -> list[Hit]:
        """The pool without what rests: cold memories, instant ones past their sleep, and
        asleep ones the query does not name (found by their words, clearly relevant).
        ``resting`` (search) keeps all but the instant memories past their sleep. An
        episode past its sleep is archived: found by its words, or by search."""
        now, policy = self.clock.now(), self.config.layer_policy
        kept: list[Hit] = []
        for hit in pool:
            if hit.episode is not None:
                stage = episode_phase(hit.episode, now, policy)
                hit.archived = stage == "archived"
                # A neighbour of a turn found comes with it: the found turn's words brought it.
                by_words = bool(hit.channels.keys() & WORD_CHANNELS) or hit.via is not None
                named = by_words and (hit.raw_score or 0.0) >= REVIVE_RELEVANCE
                close = (hit.raw_score or 0.0) >= ARCHIVED_BY_MEANING
                if not resting and ((stage == "asleep" and not named) or (hit.archived and not (by_words or close))):
                    meta.resting.append(hit.memory.id)
                else:
                    kept.append(hit)
                continue
            layer = hit.memory.layer
            phase = instant_phase(hit.memory, now, policy) if layer == "instant" else "awake"
            named = bool(hit.channels.keys() - {"vector"}) and (hit.raw_score or 0.0) >= REVIVE_RELEVANCE
            if phase == "gone" or (not resting and (layer == "cold" or (phase == "asleep" and not named))):
                meta.resting.append(hit.memory.id)
                continue
            kept.append(hit)
        return kept

    # -- channels ---------------------------------------------------------------

    async def _reach(self, namespaces: Sequence[str]) -> Reach:
        names = tuple(dict.fromkeys(namespaces))
        shares = await ShareStore(self.db).approved_into(names, SHARED_READ)
        return Reach(names, {s.memory_id: s.id for s in shares})

    async def _vector_channel(self, text: str, asked: _Asked, meta: RecallMeta) -> _VectorFound:
        """id → cosine similarity, best first, of the memories and the episodes (one query
        each, by ``kind``), and the query's vector; nothing (and a note) when the channel
        is down. Shared memories are scored one by one and ranked with the namespaces' own."""
        problem = await self.mirror.mismatch()
        if problem:
            meta.notes.append(f"vector search off: {problem}; lexical results only")
            return _VectorFound({}, set(), None)
        reach, top_k = asked.reach, self.config.memory_top_k
        names = reach.namespaces
        namespace: VectorFilterValue = names[0] if len(names) == 1 else {"$in": list(names)}
        filters: list[dict[str, VectorFilterValue]] = []
        if asked.memories:
            where: dict[str, VectorFilterValue] = {"namespace": namespace, "status": "active", **MEMORY_FILTER}
            if asked.types:
                where["type"] = {"$in": list(asked.types)}
            filters.append(where)
        if asked.episodes is not None:
            # No more: the rest of the episodes' scope has no metadata index; the row decides.
            filters.append({"namespace": namespace, "kind": EPISODE_KIND})
        try:
            vector = (await self.embedder.embed([embedding_text(text)], kind="query"))[0]
            answers = await asyncio.gather(*(self.vectors.query(vector, top_k=top_k, filter=f) for f in filters))
            # The index may lag behind the row (type, status): _pool's row check decides.
            shared = await self.vectors.get(list(reach.shared)) if reach.shared and asked.memories else []
        except (ModelError, VectorIndexError) as error:  # recall still answers from the words alone
            meta.notes.append(f"vector search unavailable ({type(error).__name__}: {error}); lexical results only")
            return _VectorFound({}, set(), None)
        scores = {m.id: m.score for answer in answers for m in answer} | {
            r.id: _cosine(vector, r.values) for r in shared
        }
        told_apart = {m.id for m in answers[-1]} if asked.episodes is not None else set()
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:top_k]
        return _VectorFound({id_: scores[id_] for id_ in best}, told_apart & set(best), vector)

    async def _word_channels(self, text: str, said: str, asked: _Asked) -> _WordFound:
        """The word channels, and the rows of what they found: this needs only the
        query's words, so it is done while the query is embedded. Each channel merges
        the memories and the episodes it finds by bm25, which scores both alike."""
        (lexical, lexical_told), (substring, substring_told) = await asyncio.gather(
            self._lexical_channel(text, asked), self._substring_channel(said, asked)
        )
        memory_ids = [i for i in dict.fromkeys(lexical + substring) if i not in lexical_told | substring_told]
        episode_ids = list(lexical_told | substring_told)
        memory_rows, episode_rows = await asyncio.gather(
            self.memories.get_many(memory_ids), self.episodes.get_many(episode_ids)
        )
        return _WordFound(
            {"lexical": lexical, "substring": substring},
            {m.id: m for m in memory_rows},
            {e.id: e for e in episode_rows},
        )

    async def _lexical_channel(self, text: str, asked: _Asked) -> tuple[list[str], set[str]]:
        """Ids best first, and which of them are episodes."""
        terms = query_terms(text)
        if not terms:
            return [], set()
        reach, limit = asked.reach, self.config.memory_top_k
        memories, episodes = await asyncio.gather(
            self.memories.lexical_search(
                reach.namespaces, terms, types=asked.types, limit=limit, shared=bool(reach.shared)
            )
            if asked.memories
            else _none(),
            self.episode_search.lexical_search(asked.episodes, terms, limit=limit)
            if asked.episodes is not None
            else _none(),
        )
        return _merged(memories, episodes, limit)

    async def _substring_channel(self, text: str, asked: _Asked) -> tuple[list[str], set[str]]:
        """Memories and episodes holding a fragment of the query that their word index
        cannot match, one with a term no row of theirs has (in any namespace: an index
        keeps one vocabulary)."""
        needles = substring_needles(text)
        if not needles:
            return [], set()
        reach, limit = asked.reach, self.config.memory_top_k

        async def memories() -> list[tuple[str, float]]:
            unmatched = await self.memories.text.unmatched(needles) if asked.memories else []
            if not unmatched:
                return []
            return await self.memories.substring_search(
                reach.namespaces, unmatched, types=asked.types, limit=limit, shared=bool(reach.shared)
            )

        async def episodes() -> list[tuple[str, float]]:
            if asked.episodes is None:
                return []
            unmatched = await self.episode_search.text.unmatched(needles)
            return (
                await self.episode_search.substring_search(asked.episodes, unmatched, limit=limit) if unmatched else []
            )

        found = await asyncio.gather(memories(), episodes())
        return _merged(*found, limit)

    async def _pool(
        self,
        found: _VectorFound,
        words: _WordFound,
        asked: _Asked,
        limit: int,
        meta: RecallMeta,
        person_names: Sequence[str] = (),
    ) -> list[Hit]:
        """The best ``limit`` fused candidates that are live, above the similarity
        floor and not a repeat of a better one's text (a memory takes the place of an
        episode that says the same). A memory that names a person the query names is
        about her, whatever its similarity (she may be "my sister" in the query and
        "安娜" in the memory): no similarity floor applies to it."""
        fused: dict[str, float] = {}
        channels: dict[str, dict[str, int]] = {}
        for name, ids in (("vector", list(found.scores)), *words.ranked.items()):
            weight = CHANNEL_WEIGHTS[name]
            for rank, id_ in enumerate(ids, start=1):
                fused[id_] = fused.get(id_, 0.0) + weight / (RRF_K + rank)
                channels.setdefault(id_, {})[name] = rank
        ranked = sorted(fused, key=fused.__getitem__, reverse=True)[:limit]
        similarity = {id_: self._relevance(found.scores[id_]) for id_ in ranked if id_ in found.scores}
        lexical_only = [id_ for id_ in ranked if id_ not in similarity]
        if found.vector is not None and lexical_only:
            try:
                for record in await self.vectors.get(lexical_only):
                    similarity[record.id] = self._relevance(_cosine(found.vector, record.values))
            except VectorIndexError as error:  # those hits go on without a similarity
                meta.notes.append(f"vector lookup failed ({type(error).__name__}); some scores unknown")
        rows, told = dict(words.rows), dict(words.episodes)
        missing = [id_ for id_ in ranked if id_ not in rows and id_ not in told]
        vector_told = [id_ for id_ in missing if id_ in found.episodes]
        rows |= {m.id: m for m in await self.memories.get_many([i for i in missing if i not in found.episodes])}
        told |= {e.id: e for e in await self.episodes.get_many(vector_told)}
        pool: list[Hit] = []
        seen_text: dict[str, Hit] = {}
        for id_ in ranked:
            episode = told.get(id_)
            if episode is not None:
                if not self._admits(episode, asked):
                    if asked.prompt.holds(episode):
                        meta.in_prompt.append(id_)
                    continue
                memory = as_memory(episode)
            else:
                row = rows.get(id_)
                # The index is a mirror and may lag: the row decides what is live.
                if row is None or not _live(row, asked.reach, asked.types) or not self._open(row):
                    continue
                memory = row
            raw = similarity.get(id_)
            about_person = bool(person_names) and names_any(memory.content, person_names)
            if raw is not None and raw < self.config.memory_min_score and not about_person:
                meta.floored.append(id_)
                continue
            hit = Hit(
                memory=memory,
                score=fused[id_],
                raw_score=raw,
                channels=channels[id_],
                about_person=about_person,
                episode=episode,
            )
            key = normalised(memory.content)
            earlier = seen_text.get(key)
            if earlier is not None and not (earlier.episode is not None and episode is None):
                meta.deduped.append(id_)
                continue
            if earlier is not None:
                meta.deduped.append(earlier.memory.id)
                pool[pool.index(earlier)] = hit
            else:
                pool.append(hit)
            seen_text[key] = hit
        return pool

    @staticmethod
    def _admits(episode: Episode, asked: _Asked) -> bool:
        """An episode this recall may return: in its scope, and not one the prompt holds."""
        return asked.episodes is not None and asked.episodes.admits(episode) and not asked.prompt.holds(episode)

    def _relevance(self, cosine: float) -> float:
        """Cosine similarity on the embedder's own scale, mapped onto 0–1."""
        unrelated, identical = self.embedder.similarity_range
        return min(1.0, max(0.0, (cosine - unrelated) / (identical - unrelated)))

    async def _rerank(self, text: str, pool: list[Hit], meta: RecallMeta) -> None:
        if self.reranker is None or not self.config.enable_memory_reranker or not pool:
            meta.reranker = "off"
            return
        floor = self.config.memory_filter_min_score
        meta.floored.extend(h.memory.id for h in pool if h.raw_score is not None and h.raw_score < floor)
        pool[:] = [h for h in pool if h.raw_score is None or h.raw_score >= floor]
        limit = self.config.memory_filter_max_content_chars
        try:
            scores = await self.reranker.rerank(text, [h.memory.content[:limit] for h in pool])
        # Keep the fused order: a slow or failing reranker is not an empty answer, nor is a
        # document it cannot take (ValueError: an imported memory without text).
        except (ModelError, ValueError) as error:
            meta.reranker = "failed"
            meta.notes.append(f"reranker failed ({type(error).__name__}: {error}); fused order kept")
            return
        by_index = {s.index: s.score for s in scores}
        for index, hit in enumerate(pool):
            hit.raw_score = hit.score = by_index.get(index, 0.0)
        pool.sort(key=lambda h: h.score, reverse=True)
        meta.reranker = self.reranker.model

    # -- gates ------------------------------------------------------------------

    async def _gate(self, pool: list[Hit], namespace: str, floor: float, meta: RecallMeta) -> list[Hit]:
        precious = [gate_tokens(t) for t in await PreciousStore(self.db).newest_contents(namespace, _PRECIOUS_CHECKED)]
        window = timedelta(minutes=self.config.memory_inject_decay_window_min)
        now = self.clock.now()
        kept: list[Hit] = []
        for hit in pool:
            tokens = gate_tokens(hit.memory.content) if precious else set()
            if any(jaccard(tokens, p) >= PRECIOUS_OVERLAP for p in precious):
                meta.precious_overlap.append(hit.memory.id)
                continue
            if hit.raw_score is not None and hit.raw_score < floor and not hit.about_person:
                meta.floored.append(hit.memory.id)
                continue
            relevance, decay = hit.score, 1.0
            if hit.episode is None:
                weight = weigh(hit.memory, now)
                importance, freshness, authored, factor = (
                    weight.importance,
                    weight.freshness,
                    weight.authored,
                    weight.factor,
                )
            else:
                importance, freshness, authored, factor = 0.0, 1.0, 1.0, EPISODE_WEIGHT
            injected = hit.memory.last_injected_at
            if injected and now - parse_iso(injected) < window:
                decay = DECAY_FACTOR
                hit.decayed = True
                meta.decayed.append(hit.memory.id)
            hit.score = relevance * factor * decay
            meta.components[hit.memory.id] = ScoreParts(
                relevance=relevance,
                raw_score=hit.raw_score,
                importance=importance,
                freshness=freshness,
                authored=authored,
                weight=factor,
                decay=decay,
                score=hit.score,
            )
            kept.append(hit)
        kept.sort(key=lambda h: h.score, reverse=True)
        return kept

    async def _expand(self, pool: list[Hit], edges: _Edges, asked: _Asked) -> list[Hit]:
        """One hop along relation edges: a memory gains a weighted share of its best
        related memory's score, and a related memory outside the pool joins with that
        share. A ``contradicts`` edge lends nothing (see _contradictions). An episode's
        neighbours in its conversation (the turns said just before and after it) are
        related to it as a ``same_thread`` edge of weight 1 relates two memories."""
        by_id = {h.memory.id: h for h in pool}
        fused = {id_: h.score for id_, h in by_id.items()}
        lent: dict[str, tuple[float, str]] = {}

        def lend(here: str, there: str, weight: float) -> None:
            share = RELATION_SHARE * weight * fused[here]
            if share > lent.get(there, (0.0, ""))[0]:
                lent[there] = (share, here)

        for edge in await edges.touching([i for i, h in by_id.items() if h.episode is None]):
            for here, there in ((edge["source_id"], edge["target_id"]), (edge["target_id"], edge["source_id"])):
                if here in by_id and edge["relation"] != "contradicts":
                    lend(here, there, float(edge["weight"]))
        told = [h.episode for h in pool if h.episode is not None]
        around = await self.episodes.adjacent(told) if told else []
        for hit in pool:
            if hit.episode is not None:
                hit.thread = [e for e in adjacent_to(hit.episode, around) if self._admits(e, asked)]
                for neighbour in hit.thread:
                    lend(hit.episode.id, neighbour.id, EPISODE_THREAD_WEIGHT)
        for id_, (share, _) in lent.items():
            if id_ in by_id:
                by_id[id_].score += share
        outside = [id_ for id_ in lent if id_ not in by_id]
        for memory in await self.memories.get_many(outside):
            if _live(memory, asked.reach, asked.types) and self._open(memory):
                share, source = lent[memory.id]
                pool.append(Hit(memory=memory, score=share, raw_score=None, via=source))
        for neighbour in around:
            if neighbour.id in outside and self._admits(neighbour, asked):
                share, source = lent[neighbour.id]
                pool.append(Hit(as_memory(neighbour), score=share, raw_score=None, via=source, episode=neighbour))
        pool.sort(key=lambda h: h.score, reverse=True)
        return pool

    def _open(self, memory: Memory) -> bool:
        """Not a plan, or a plan that has not ended (the nightly job may not have marked it yet)."""
        return is_open(memory, self.clock.now(), self.config.dream_time_zone)

    async def _contradictions(
        self, pool: list[Hit], edges: _Edges, reach: Reach, types: Sequence[str], meta: RecallMeta
    ) -> list[Hit]:
        """A ``contradicts`` edge between two live memories is a question the owner has
        not answered yet: the newer memory stands and is flagged, the older stays out.
        When the query found only the older, the newer takes its place (and its scores:
        the two are about the same thing)."""
        by_id = {h.memory.id: h for h in pool}
        memory_ids = [i for i, h in by_id.items() if h.episode is None]
        contradictions = [e for e in await edges.touching(memory_ids) if e["relation"] == "contradicts"]
        if not contradictions:
            return pool
        rows = {h.memory.id: h.memory for h in pool}
        ends = {e["source_id"] for e in contradictions} | {e["target_id"] for e in contradictions}
        rows.update((m.id, m) for m in await self.memories.get_many([i for i in ends if i not in rows]))
        for edge in contradictions:
            source, target = rows.get(edge["source_id"]), rows.get(edge["target_id"])
            if source is None or target is None or not (_live(source, reach, ()) and _live(target, reach, ())):
                continue
            # The edge points from the newer claim; creation time decides for edges drawn by hand.
            newer, older = (target, source) if target.created_at > source.created_at else (source, target)
            held = by_id.pop(older.id, None)
            if held is not None:
                meta.contradicted.append(older.id)
            hit = by_id.get(newer.id)
            if hit is None:
                if held is None or not _live(newer, reach, types):
                    continue
                hit = by_id[newer.id] = Hit(memory=newer, score=held.score, raw_score=held.raw_score, via=older.id)
            if older.id not in hit.contradicted_by:
                hit.contradicted_by.append(older.id)
                hit.contradicted_claims.append(older.content)
        return sorted(by_id.values(), key=lambda h: h.score, reverse=True)

    async def _glossary_hits(self, namespace: str, text: str) -> list[MentionedTerm]:
        lowered = text.lower()
        found = []
        for entry in await GlossaryStore(self.db).entries(namespace):
            matched = [n for n in entry.names if len(n) >= 2 and mentions(lowered, n.lower())]
            if matched:
                found.append(MentionedTerm(**vars(entry), matched=matched[0]))
        return found


class _Edges:
    """The relation edges one recall reads: expansion and the contradiction check look at
    mostly the same memories, whose edges are read once."""

    def __init__(self, memories: MemoryStore) -> None:
        self.memories = memories
        self.read: set[str] = set()
        self.found: dict[tuple[str, str, str], dict[str, Any]] = {}

    async def touching(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        missing = [id_ for id_ in ids if id_ not in self.read]
        if missing:
            for edge in await self.memories.neighbours(missing):
                self.found[(edge["source_id"], edge["target_id"], edge["relation"])] = edge
            self.read.update(missing)
        wanted = set(ids)
        return [e for e in self.found.values() if e["source_id"] in wanted or e["target_id"] in wanted]


async def _nothing() -> _VectorFound:
    return _VectorFound({}, set(), None)


async def _none() -> list[tuple[str, float]]:
    return []


def _merged(
    memories: list[tuple[str, float]], episodes: list[tuple[str, float]], limit: int
) -> tuple[list[str], set[str]]:
    """One channel's memories and episodes (each (id, bm25), best first) in one ranking,
    the best ``limit``, and which of them are episodes. bm25 is lower for a better match;
    at the same score the memory comes first."""
    ranked = sorted([*((r, 0, i) for i, r in memories), *((r, 1, i) for i, r in episodes)])[:limit]
    return [i for _, _, i in ranked], {i for _, kind, i in ranked if kind}


def _live(memory: Memory, reach: Reach, types: Sequence[str]) -> bool:
    return (
        reach.sees(memory)
        and memory.status == "active"
        and memory.version_status == "current"
        and (not types or memory.type in types)
    )


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    # Embedders and indexes hold unit vectors, so the dot product is the cosine.
    return math.fsum(map(operator.mul, a, b))
