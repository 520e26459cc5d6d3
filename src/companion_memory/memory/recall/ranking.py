"""Recall's order: the channels' candidates fused into one pool by reciprocal rank, and
the pool reranked when a reranker is configured."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ...domain.search_text import normalised
from ...ports import Embedder, ModelError, Reranker, VectorIndex, VectorIndexError
from ..config import MemoryConfig
from ..episode_recall import as_memory
from ..people.names import names_any
from .channels import VectorFound, WordFound, cosine
from .hits import Hit, RecallMeta
from .reach import Asked
from .rows import Rows

# Reciprocal-rank fusion constant: small, so that the top ranks of each channel count
# for more than a long tail (measured on LoCoMo by bench/locomo_recall.py).
RRF_K = 10
# Meaning counts for a little more than shared words (LoCoMo R@5 0.663 vs 0.658 offline).
CHANNEL_WEIGHTS = {"vector": 1.3, "lexical": 1.0, "substring": 1.0}


class Fusion:
    def __init__(
        self,
        vectors: VectorIndex,
        embedder: Embedder,
        config: MemoryConfig,
    ) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self.min_score = config.memory_min_score

    async def pool(
        self,
        found: VectorFound,
        words: WordFound,
        asked: Asked,
        rows: Rows,
        limit: int,
        meta: RecallMeta,
        person_names: Sequence[str] = (),
    ) -> list[Hit]:
        """The best ``limit`` fused candidates that are live, above the similarity
        floor and not a repeat of a better one's text (a memory takes the place of an
        episode that says the same). A memory that names a person the query names is
        about that person, whatever its similarity (the query may say "my sister" and
        the memory "安娜"): no similarity floor applies to it."""
        fused: dict[str, float] = {}
        channels: dict[str, dict[str, int]] = {}
        for name, ids in (("vector", list(found.scores)), *words.ranked.items()):
            weight = CHANNEL_WEIGHTS[name]
            for rank, id_ in enumerate(ids, start=1):
                fused[id_] = fused.get(id_, 0.0) + weight / (RRF_K + rank)
                channels.setdefault(id_, {})[name] = rank
        ranked = sorted(fused, key=fused.__getitem__, reverse=True)[:limit]
        # Only the rows of the candidates kept are read (the channels find up to
        # MEMORY_TOP_K each, most never looked at), beside their similarities.
        episode_ids = words.episodes | found.episodes
        (memories, told), similarity = await asyncio.gather(
            rows.both([i for i in ranked if i not in episode_ids], [i for i in ranked if i in episode_ids]),
            self._similarity(found, ranked, meta),
        )
        pool: list[Hit] = []
        seen_text: dict[str, Hit] = {}
        for id_ in ranked:
            episode = told.get(id_)
            if episode is not None:
                if not asked.admits(episode):
                    if asked.prompt.holds(episode):
                        meta.in_prompt.append(id_)
                    continue
                memory = as_memory(episode)
            else:
                row = memories.get(id_)
                if row is None or not asked.returns(row):
                    continue
                memory = row
            raw = similarity.get(id_)
            about_person = bool(person_names) and names_any(memory.content, person_names)
            if raw is not None and raw < self.min_score and not about_person:
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

    async def _similarity(self, found: VectorFound, ranked: Sequence[str], meta: RecallMeta) -> dict[str, float]:
        """The relevance of the ranked candidates to the query: the vector channel's, and
        for one only the words found, its stored vector's (when the query has a vector)."""
        similarity = {id_: self._relevance(found.scores[id_]) for id_ in ranked if id_ in found.scores}
        lexical_only = [id_ for id_ in ranked if id_ not in similarity]
        if found.vector is not None and lexical_only:
            try:
                for record in await self.vectors.get(lexical_only):
                    similarity[record.id] = self._relevance(cosine(found.vector, record.values))
            except VectorIndexError as error:  # those hits go on without a similarity
                meta.notes.append(f"vector lookup failed ({type(error).__name__}); some scores unknown")
        return similarity

    def _relevance(self, cosine: float) -> float:
        """Cosine similarity on the embedder's own scale, mapped onto 0–1."""
        unrelated, identical = self.embedder.similarity_range
        return min(1.0, max(0.0, (cosine - unrelated) / (identical - unrelated)))


async def rerank_pool(
    reranker: Reranker | None, config: MemoryConfig, text: str, pool: list[Hit], meta: RecallMeta
) -> None:
    """The pool in the reranker's order, its scores as the hits' raw scores, below its
    floor left out; the fused order kept when there is none, or it fails."""
    if reranker is None or not config.enable_memory_reranker or not pool:
        meta.reranker = "off"
        return
    floor = config.memory_filter_min_score
    meta.floored.extend(h.memory.id for h in pool if h.raw_score is not None and h.raw_score < floor)
    pool[:] = [h for h in pool if h.raw_score is None or h.raw_score >= floor]
    limit = config.memory_filter_max_content_chars
    try:
        scores = await reranker.rerank(text, [h.memory.content[:limit] for h in pool])
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
    meta.reranker = reranker.model
