"""Calibrating RECALL_MIN_SCORE: how well recall's floor decides to inject or not, on LoCoMo.

Data: ../shared/data/locomo-dev.json (see bench/locomo_recall.py; CC BY-NC 4.0). Every
dialog turn becomes a memory, one namespace per conversation, written as
bench/locomo_recall.py writes them. Each question of categories 1–4 then gives:

- positives: its evidence turns, each with the raw score the floor reads (the cosine of
  the question and the turn, mapped onto 0–1 by the embedder's ``similarity_range``, as
  recall does without a reranker): the floor should let them through;
- negatives: the same question asked of every other conversation, with the best raw
  score there, which is what recall would inject first: the floor should stop it.

At a floor t, a positive scoring t or more is injected rightly (TP), a negative wrongly
(FP): precision = TP / (TP + FP), recall = TP / positives. Printed: both, with F1, at the
default RECALL_MIN_SCORE and over a sweep of floors.

    .venv/bin/python bench/recall_floor.py [--data PATH] [--conversations N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import operator
import tempfile
from pathlib import Path
from typing import Any

from locomo_recall import CATEGORIES, DEFAULT_DATA, evidence_ids, index_conversation

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.domain.search_text import embedding_text
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings

SWEEP = [round(0.025 * step, 3) for step in range(21)]


async def scores(runtime: Runtime, samples: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """The raw scores of every positive and every negative (see the module docstring)."""
    unrelated, identical = runtime.embedder.similarity_range

    def relevance(cosine: float) -> float:
        return min(1.0, max(0.0, (cosine - unrelated) / (identical - unrelated)))

    namespaces = [f"locomo-{sample['sample_id']}" for sample in samples]
    positives: list[float] = []
    negatives: list[float] = []
    for sample, namespace in zip(samples, namespaces, strict=True):
        ids = {m.fact_key: m.id for m in await _memories(runtime, namespace)}
        questions = [
            (qa["question"], [ids[e] for e in evidence_ids(qa.get("evidence", [])) if e in ids])
            for qa in sample["qa"]
            if qa["category"] in CATEGORIES
        ]
        questions = [(q, evidence) for q, evidence in questions if evidence]
        vectors = await runtime.embedder.embed([embedding_text(q) for q, _ in questions], kind="query")
        for (_, evidence), vector in zip(questions, vectors, strict=True):
            for record in await runtime.vectors.get(evidence):
                positives.append(relevance(math.fsum(map(operator.mul, vector, record.values))))
            for other in namespaces:
                if other != namespace:
                    best = await runtime.vectors.query(vector, top_k=1, filter={"namespace": other, "status": "active"})
                    negatives.append(relevance(best[0].score) if best else 0.0)
    return positives, negatives


async def _memories(runtime: Runtime, namespace: str) -> list[Any]:
    found, cursor = [], None
    while True:
        page, cursor = await runtime.writer.store.page(namespace, limit=500, cursor=cursor)
        found += page
        if cursor is None:
            return found


def decision(positives: list[float], negatives: list[float], floor: float) -> tuple[float, float, float]:
    """Precision, recall and F1 of injecting what scores ``floor`` or more."""
    true = sum(score >= floor for score in positives)
    false = sum(score >= floor for score in negatives)
    precision = true / (true + false) if true + false else 1.0
    recall = true / len(positives) if positives else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


async def main(data: Path, limit: int | None) -> None:
    samples = json.loads(data.read_text(encoding="utf-8"))[:limit]
    settings = Settings()
    with tempfile.TemporaryDirectory() as directory:
        runtime = await build_local_runtime(settings, Path(directory))
        for sample in samples:
            await index_conversation(runtime, sample, relations=False)
        positives, negatives = await scores(runtime, samples)
    print(
        f"LoCoMo: {len(samples)} conversations; {len(positives)} positives (question, evidence turn), "
        f"{len(negatives)} negatives (question, another conversation's best); embedder {runtime.embedder.model}"
    )
    default = settings.RECALL_MIN_SCORE
    print(f"{'floor':>7}{'precision':>11}{'recall':>8}{'F1':>7}")
    for floor in sorted({*SWEEP, default}):
        precision, recall, f1 = decision(positives, negatives, floor)
        mark = "  <- RECALL_MIN_SCORE" if floor == default else ""
        print(f"{floor:>7.3f}{precision:>11.3f}{recall:>8.3f}{f1:>7.3f}{mark}")
    best = max(SWEEP, key=lambda floor: decision(positives, negatives, floor)[2])
    print(f"best F1 at floor {best:.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.data, arguments.conversations))
