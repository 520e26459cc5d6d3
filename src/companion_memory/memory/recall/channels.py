"""The channels that find recall's candidates: the vector index (meaning), the full-text
index (words) and the substring index (fragments no word matches). Each asks the memories
and the episodes, and merges what both answer by the same measure (cosine, bm25)."""

from __future__ import annotations

import asyncio
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

from ...domain.episode import EPISODE_KIND
from ...domain.search_text import embedding_text, query_terms, substring_needles
from ...ports import ModelError, VectorFilterValue, VectorIndexError
from ...store.episode_search import EpisodeSearch
from ...store.memories import MemoryStore
from ...store.text_search import substring_counts, word_counts
from ..config import MemoryConfig
from ..vector_mirror import MEMORY_FILTER, VectorMirror
from .hits import RecallMeta
from .reach import Asked


@dataclass
class WordFound:
    """What the word channels found: ids best first per channel, and which are episodes."""

    ranked: dict[str, list[str]]
    episodes: set[str]


@dataclass
class VectorFound:
    """What the vector channel found: id → cosine, best first, which of them are
    episodes, and the query's vector (None when the channel is down)."""

    scores: dict[str, float]
    episodes: set[str]
    vector: list[float] | None


class Channels:
    def __init__(
        self,
        mirror: VectorMirror,
        memories: MemoryStore,
        episode_search: EpisodeSearch,
        config: MemoryConfig,
    ) -> None:
        self.mirror = mirror
        self.memories = memories
        self.episode_search = episode_search
        self.top_k = config.memory_top_k

    def ask_vector(self, text: str) -> asyncio.Task[list[float]]:
        """The vector of ``text`` as a query, asked for now (``vector`` takes it): it is what
        recall waits for longest, and needs nothing but the query's words."""
        task = asyncio.ensure_future(self._asked(text))
        # Left unused when the query changes (``vector`` asks again) or the channel is
        # down: its failure, if it fails, is then nobody's to hear.
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    async def _asked(self, text: str) -> list[float]:
        # Nothing is embedded while the index cannot be used (``vector`` says why).
        return [] if await self.mirror.mismatch() else await self._embedded(text)

    async def _embedded(self, text: str) -> list[float]:
        return (await self.mirror.embedder.embed([embedding_text(text)], kind="query"))[0]

    async def vector(
        self, text: str, asked: Asked, meta: RecallMeta, asked_for: tuple[str, asyncio.Task[list[float]]] | None = None
    ) -> VectorFound:
        """id → cosine similarity, best first, of the memories and the episodes (one query
        each, by ``kind``), and the query's vector; nothing (and a note) when the channel
        is down. Shared memories are scored one by one and ranked with the namespaces' own.
        ``asked_for``: a text and its vector asked for already (``ask_vector``)."""
        early = asked_for[1] if asked_for is not None and asked_for[0] == text else None
        if asked_for is not None and early is None:
            asked_for[1].cancel()
        problem = await self.mirror.mismatch()
        if problem:
            meta.notes.append(f"vector search off: {problem}; lexical results only")
            return VectorFound({}, set(), None)
        reach, top_k = asked.reach, self.top_k
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
        vectors = self.mirror.vectors
        try:
            vector = await (early or self._embedded(text))
            answers = await asyncio.gather(*(vectors.query(vector, top_k=top_k, filter=f) for f in filters))
            # The index may lag behind the row (type, status): the pool's row check decides.
            shared = await vectors.get(list(reach.shared)) if reach.shared and asked.memories else []
        except (ModelError, VectorIndexError) as error:  # recall still answers from the words alone
            meta.notes.append(f"vector search unavailable ({type(error).__name__}: {error}); lexical results only")
            return VectorFound({}, set(), None)
        scores = {m.id: m.score for answer in answers for m in answer} | {
            r.id: cosine(vector, r.values) for r in shared
        }
        told_apart = {m.id for m in answers[-1]} if asked.episodes is not None else set()
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:top_k]
        return VectorFound({id_: scores[id_] for id_ in best}, told_apart & set(best), vector)

    async def words(self, text: str, said: str, asked: Asked) -> WordFound:
        """The word channels: this needs only the query's words, so it is done while the
        query is embedded. Each channel merges the memories and the episodes it finds by
        bm25, which scores both alike. Their rows are read once the channels are fused:
        only those of the candidates kept."""
        terms = query_terms(text)
        needles = {needle: query_terms(needle) for needle in substring_needles(said)}
        # One read of the word indexes' vocabularies serves both channels: the postings
        # budget of the query's terms, and which needles only the substring index can find.
        memory_index, episode_index = self.memories.text, self.episode_search.text
        looked_in = [
            i for i, looked in ((memory_index, asked.memories), (episode_index, asked.episodes is not None)) if looked
        ]
        counts = dict(zip(looked_in, await word_counts(looked_in, terms, needles), strict=True))
        memory_counts, episode_counts = counts.get(memory_index, {}), counts.get(episode_index, {})
        (lexical, lexical_told), (substring, substring_told) = await asyncio.gather(
            self._lexical(terms, asked, memory_counts, episode_counts),
            self._substring(needles, asked, memory_counts, episode_counts),
        )
        return WordFound({"lexical": lexical, "substring": substring}, lexical_told | substring_told)

    async def _lexical(
        self, terms: list[str], asked: Asked, memory_counts: dict[str, int], episode_counts: dict[str, int]
    ) -> tuple[list[str], set[str]]:
        """Ids best first, and which of them are episodes."""
        if not terms:
            return [], set()
        reach, limit = asked.reach, self.top_k
        memories, episodes = await asyncio.gather(
            self.memories.lexical_search(
                reach.namespaces, terms, types=asked.types, limit=limit, shared=bool(reach.shared), counts=memory_counts
            )
            if asked.memories
            else _none(),
            self.episode_search.lexical_search(asked.episodes, terms, limit=limit, counts=episode_counts)
            if asked.episodes is not None
            else _none(),
        )
        return _merged(memories, episodes, limit)

    async def _substring(
        self,
        needles: dict[str, list[str]],
        asked: Asked,
        memory_counts: dict[str, int],
        episode_counts: dict[str, int],
    ) -> tuple[list[str], set[str]]:
        """Memories and episodes holding a fragment of the query (``needles``, each with
        its terms) that their word index cannot match, one with a term no row of theirs
        has (in any namespace: an index keeps one vocabulary)."""
        reach, limit = asked.reach, self.top_k
        memory_index, episode_index = self.memories.text, self.episode_search.text
        in_memories = memory_index.unmatched(needles, memory_counts) if asked.memories else []
        in_episodes = episode_index.unmatched(needles, episode_counts) if asked.episodes is not None else []
        # One read of the substring indexes' vocabularies serves both searches.
        looked_in = [
            (index, unmatched)
            for index, unmatched in ((memory_index, in_memories), (episode_index, in_episodes))
            if unmatched
        ]
        counts = dict(zip((index for index, _ in looked_in), await substring_counts(looked_in), strict=True))
        memories, episodes = await asyncio.gather(
            self.memories.substring_search(
                reach.namespaces,
                in_memories,
                types=asked.types,
                limit=limit,
                shared=bool(reach.shared),
                counts=counts[memory_index],
            )
            if in_memories
            else _none(),
            self.episode_search.substring_search(asked.episodes, in_episodes, limit=limit, counts=counts[episode_index])
            if asked.episodes is not None and in_episodes
            else _none(),
        )
        return _merged(memories, episodes, limit)


async def no_vector() -> VectorFound:
    """The vector channel's answer when it is not asked (answers from the words alone)."""
    return VectorFound({}, set(), None)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    # Embedders and indexes hold unit vectors, so the dot product is the cosine.
    return math.fsum(map(operator.mul, a, b))


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
