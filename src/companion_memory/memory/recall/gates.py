"""Recall's gates: what rests (domain/layers.py), what repeats a precious row, the floor
on the raw score, and each hit weighed by its importance and freshness
(domain/weight.py), a recently injected one ranked lower."""

from __future__ import annotations

from datetime import datetime, timedelta

from ...clock import parse_iso
from ...domain.layers import REVIVE_RELEVANCE, LayerPolicy, instant_phase
from ...domain.search_text import gate_tokens, jaccard
from ...domain.weight import EPISODE_WEIGHT, weigh
from ..episode_recall import ARCHIVED_BY_MEANING, WORD_CHANNELS, episode_phase
from .hits import Hit, RecallMeta, ScoreParts

PRECIOUS_OVERLAP = 0.6
DECAY_FACTOR = 0.5
# The newest precious rows a hit is compared with.
PRECIOUS_CHECKED = 500


def awake(pool: list[Hit], resting: bool, meta: RecallMeta, now: datetime, policy: LayerPolicy) -> list[Hit]:
    """The pool without what rests: cold memories, instant ones past their sleep, and
    asleep ones the query does not name (found by their words, clearly relevant).
    ``resting`` (search) keeps all but the instant memories past their sleep. An
    episode past its sleep is archived: found by its words, or by search."""
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


def gate(
    pool: list[Hit], precious: list[str], floor: float, meta: RecallMeta, now: datetime, window: timedelta
) -> list[Hit]:
    """The pool without what repeats one of the ``precious`` contents or falls under
    ``floor``, each hit weighed (and decayed when injected within ``window``), best first."""
    precious_tokens = [gate_tokens(t) for t in precious]
    kept: list[Hit] = []
    for hit in pool:
        tokens = gate_tokens(hit.memory.content) if precious_tokens else set()
        if any(jaccard(tokens, p) >= PRECIOUS_OVERLAP for p in precious_tokens):
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
