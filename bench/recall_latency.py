"""Recall latency on the local runtime at 10k, 100k and 1M memories, beside Chroma; with
``--episodes N``, N episodes beside each size's memories (the issue-29 case: 100k
memories and 1M episodes, ``--sizes 100000 --episodes 1000000``).

Memory texts are LoCoMo dialog turns (../shared/data/locomo-dev.json; Maharana et al.,
ACL 2024; CC BY-NC 4.0), cycled with a serial number to reach each size, and the
queries are LoCoMo questions: real conversational vocabulary for the full-text index.
The stored vectors are the turns' real embeddings (bundled embedder, embedded once per
run), cycled the same way; each copy gets a little noise (σ 0.01 a dimension, cosine to
its turn about 0.97), as a paraphrase would, because an HNSW graph over hundreds of
identical vectors is not a store anyone has. Every query is embedded with the real
embedder.

Episodes are the same turns as said, one episode per turn and copy (``<speaker>: <text>``
as the word index sees it, the speaker's name in what is embedded, ``Episode.said``),
their vectors the turns' (as memories) noised the same way with another seed, said over the last year
(most of them archived, as in a store that old), 20 turns a conversation; they share the
one vector index, told apart by ``kind``, as on Cloudflare. Recall then asks the memories
and the episodes in one ranking, each channel both tables.

Per size, printed: p50/p95 of ``Recall.run`` (k=10, no bookkeeping, hybrid: embedding,
vector and word channels, fusion) and of Chroma (HNSW, the same embedder: query embedding
plus ``collection.query`` with the same namespace/status filter, the answer recall
needs), interleaved query by query in this one process, with their ratio; Chroma again
with no filter at all (its best case: a where-clause sends Chroma through its metadata
store first, measured 50–90 ms more at 20k on 2 cores, but without one it answers across
namespaces and statuses, which recall must not); the query embedding alone; the share of the
exact vector top 10 that the index's vector search finds; how long our runtime takes to
start on the filled data dir and the RSS it then adds; and how long each store took to
fill. Chroma's column needs the bench extra (``pip install -e ".[local,bench]"``);
``--no-chroma`` leaves it out.

With ``--chatting``, each of our recalls follows a chat turn's writes, as in a chat: the
turn's two messages' vectors go into the index (as episodes, outside the timing), so a
recall meets an index that changed since the last one.

    .venv/bin/python bench/recall_latency.py [--sizes 10000 100000 1000000] [--queries 200]
        [--no-chroma] [--ann-threshold N] [--episodes N] [--chatting]

Figures from a contended machine mean little: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import resource
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.clock import iso
from companion_memory.domain.episode import EPISODE_KIND, Episode
from companion_memory.domain.memory import Memory
from companion_memory.domain.search_text import embedding_text
from companion_memory.memory.vector_mirror import MEMORY_FILTER
from companion_memory.memory.vector_sources import episode_metadata, vector_metadata
from companion_memory.ports import Embedder, VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from companion_memory.store.episodes import EpisodeStore
from companion_memory.store.memories import MemoryStore

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
BATCH = 2000
NOISE = 0.01
FILTER = {"namespace": "default", "status": "active", **MEMORY_FILTER}
EPISODE_TURNS_PER_CONVERSATION = 20
EPISODE_DAYS = 365
CHROMA_FILTER = {"$and": [{"namespace": "default"}, {"status": "active"}]}
# What a chat turn's two messages put into the index (``--chatting``).
CHAT_TURN = [
    {"namespace": "default", "status": "active", "kind": EPISODE_KIND, "type": EPISODE_KIND, "role": role}
    for role in ("user", "assistant")
]


def corpus(data: Path) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """The turns as memories, as episodes (speaker, words), and the questions."""
    turns, said, questions = [], [], []
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        number = 1
        while f"session_{number}" in conversation:
            date = conversation[f"session_{number}_date_time"]
            turns += [f'({date}) {t["speaker"]} said, "{t["text"]}"' for t in conversation[f"session_{number}"]]
            said += [(t["speaker"], t["text"]) for t in conversation[f"session_{number}"]]
            number += 1
        questions += [qa["question"] for qa in sample["qa"]]
    return turns, said, questions


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def percentiles(timings: list[float]) -> tuple[float, float]:
    ordered = sorted(timings)
    return ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)]


def batches(count: int, turns: np.ndarray, seed: int = 7) -> Iterator[tuple[int, np.ndarray]]:
    """The stored vectors, batch by batch, the same for every store: turn i % len, noised."""
    generator = np.random.default_rng(seed)
    for start in range(0, count, BATCH):
        rows = np.arange(start, min(count, start + BATCH))
        vectors = turns[rows % len(turns)] + NOISE * generator.standard_normal((rows.size, turns.shape[1]))
        yield start, (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def memory(i: int, texts: list[str], now: str) -> Memory:
    return Memory(
        id=f"m{i:07d}",
        namespace="default",
        type=("fact", "preference", "event", "habit")[i % 4],
        content=f"{texts[i % len(texts)]} #{i}",
        fact_key=f"k{i}",
        created_at=now,
        updated_at=now,
    )


def episode(i: int, count: int, said: list[tuple[str, str]], now: datetime) -> Episode:
    """The i-th of ``count`` episodes said over the last EPISODE_DAYS, oldest first."""
    speaker, words = said[i % len(said)]
    at = iso(now - timedelta(days=EPISODE_DAYS * (1 - i / count)))
    return Episode(
        id=f"e{i:08d}",
        namespace="default",
        conversation_id=f"c{i // EPISODE_TURNS_PER_CONVERSATION}",
        role=("user", "assistant")[i % 2],
        speaker=speaker,
        source="ingest",
        content=f"{words} #{i}",
        created_at=at,
        stored_at=at,
    )


async def add_episodes(runtime: Runtime, count: int, said: list[tuple[str, str]], turns: np.ndarray) -> None:
    now = runtime.clock.now()
    for start, vectors in batches(count, turns, seed=11):
        episodes = [episode(i, count, said, now) for i in range(start, start + len(vectors))]
        await runtime.db.batch([EpisodeStore.insert_if_new(e) for e in episodes])
        await runtime.vectors.upsert(
            [VectorRecord(e.id, v.tolist(), episode_metadata(e)) for e, v in zip(episodes, vectors, strict=True)]
        )


async def populate(runtime: Runtime, count: int, texts: list[str], turns: np.ndarray, queries: np.ndarray) -> list:
    """Fills the store; answers the exact vector top 10 of every query, found on the way."""
    now = iso(runtime.clock.now())
    best = [np.empty(0, dtype=np.int64)] * len(queries)
    scores = [np.empty(0, dtype=np.float32)] * len(queries)
    for start, vectors in batches(count, turns):
        memories = [memory(i, texts, now) for i in range(start, start + len(vectors))]
        await runtime.db.batch([MemoryStore.insert(m) for m in memories])
        await runtime.vectors.upsert(
            [VectorRecord(m.id, v.tolist(), vector_metadata(m)) for m, v in zip(memories, vectors, strict=True)]
        )
        found = queries @ vectors.T
        for q in range(len(queries)):
            ids = np.concatenate([best[q], np.arange(start, start + len(vectors))])
            values = np.concatenate([scores[q], found[q]])
            keep = np.argsort(-values)[:10]
            best[q], scores[q] = ids[keep], values[keep]
    return [{f"m{i:07d}" for i in b.tolist()} for b in best]


def chroma_collection(directory: Path, count: int, texts: list[str], turns: np.ndarray) -> Any:
    import chromadb

    client = chromadb.PersistentClient(path=str(directory / "chroma"))
    collection = client.create_collection("bench", metadata={"hnsw:space": "cosine"})
    now = "2024-01-01T00:00:00Z"
    step = min(BATCH, client.get_max_batch_size())
    for start, vectors in batches(count, turns):
        for offset in range(0, len(vectors), step):
            chunk = vectors[offset : offset + step]
            memories = [memory(start + offset + i, texts, now) for i in range(len(chunk))]
            collection.add(
                ids=[m.id for m in memories],
                embeddings=chunk,
                documents=[m.content for m in memories],
                metadatas=[vector_metadata(m) for m in memories],
            )
    return collection


async def embed_turns(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return np.asarray(await embedder.embed([embedding_text(t) for t in texts], kind="passage"), dtype=np.float32)


async def run_size(
    size: int,
    texts: list[str],
    turns: np.ndarray,
    questions: list[str],
    settings: Settings,
    chroma: bool,
    said: list[tuple[str, str]],
    episodes: int,
    chatting: bool,
) -> None:
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        runtime = await build_local_runtime(settings, directory / "ours")
        embedder = runtime.embedder
        queries = np.asarray(
            await embedder.embed([embedding_text(q) for q in questions], kind="query"), dtype=np.float32
        )
        started = time.perf_counter()
        truth = await populate(runtime, size, texts, turns, queries)
        if episodes:
            await add_episodes(runtime, episodes, said, turns)
        filled = time.perf_counter() - started
        runtime.vectors.close()  # type: ignore[attr-defined]
        runtime.db.close()  # type: ignore[attr-defined]
        del runtime
        gc.collect()

        # A start on the filled data dir, as the server's.
        before = rss_mb()
        started = time.perf_counter()
        runtime = await build_local_runtime(settings, directory / "ours", embedder=embedder)
        await runtime.recall.run("warm up", k=10)
        start_seconds = time.perf_counter() - started
        added_rss = rss_mb() - before

        found = 0
        for query, exact in zip(queries, truth, strict=True):
            matches = await runtime.vectors.query(query.tolist(), top_k=10, filter=FILTER)
            found += len(exact & {m.id for m in matches})
        vector_recall = found / (10 * len(queries))

        collection = None
        chroma_fill = 0.0
        if chroma:
            started = time.perf_counter()
            collection = chroma_collection(directory, size, texts, turns)
            chroma_fill = time.perf_counter() - started
            collection.query(query_embeddings=queries[:1], n_results=10, where=CHROMA_FILTER)

        ours: list[float] = []
        embedding: list[float] = []
        theirs: dict[str, list[float]] = {"filtered": [], "unfiltered": []}
        for number, question in enumerate(questions):
            # Interleaved, the order rotating, so all see the same machine.
            for turn in (0, 1, 2)[number % 3 :] + (0, 1, 2)[: number % 3]:
                started = time.perf_counter()
                if turn == 0:
                    await runtime.recall.run(question, k=10)
                    ours.append(1000 * (time.perf_counter() - started))
                    if chatting:
                        await runtime.vectors.upsert(
                            [
                                VectorRecord(
                                    f"chat-{number}-{n}", turns[(2 * number + n) % len(turns)].tolist(), metadata
                                )
                                for n, metadata in enumerate(CHAT_TURN)
                            ]
                        )
                elif collection is not None:
                    where = CHROMA_FILTER if turn == 1 else None
                    vector = await embedder.embed([embedding_text(question)], kind="query")
                    collection.query(query_embeddings=vector, n_results=10, where=where)
                    theirs["filtered" if where else "unfiltered"].append(1000 * (time.perf_counter() - started))
            started = time.perf_counter()
            await embedder.embed([embedding_text(question)], kind="query")
            embedding.append(1000 * (time.perf_counter() - started))

        p50, p95 = percentiles(ours)
        e50, e95 = percentiles(embedding)
        line = f"{size:>9}  {p50:>7.1f} / {p95:>6.1f}"
        for timings in theirs.values():
            if timings:
                c50, c95 = percentiles(timings)
                line += f"  {c50:>7.1f} / {c95:>6.1f}  {p50 / c50:>5.2f}× / {p95 / c95:>5.2f}×"
            else:
                line += f"  {'-':>16}  {'-':>16}"
        mode = "graph" if getattr(runtime.vectors, "approximate", False) else "exact"
        line += (
            f"  {e50:>6.1f} / {e95:>5.1f}  {vector_recall:>6.3f} {mode:<5}  {start_seconds:>6.1f}  {added_rss:>7.0f}"
            f"  {filled:>7.0f}  {chroma_fill:>7.0f}"
        )
        print(line, flush=True)
        runtime.vectors.close()  # type: ignore[attr-defined]
        runtime.db.close()  # type: ignore[attr-defined]


async def main(
    sizes: list[int],
    query_count: int,
    chroma: bool,
    ann_threshold: int | None,
    turn_vectors: Path | None,
    episodes: int,
    chatting: bool,
) -> None:
    texts, said, questions = corpus(DATA)
    questions = random.Random(42).sample(questions, min(query_count, len(questions)))
    # No query cache: each question is embedded for every recall and every Chroma query,
    # as a new question is (the interleaving would otherwise hand one of them a cached vector).
    threshold = {} if ann_threshold is None else {"VECTOR_ANN_THRESHOLD": ann_threshold}
    models = str(Path(__file__).resolve().parents[1] / ".bench-cache" / "models")  # built once
    settings = Settings(EMBEDDER_QUERY_CACHE_SECONDS=0, EMBEDDER_MODEL_DIR=models, **threshold)
    if turn_vectors and turn_vectors.exists():
        turns = np.load(turn_vectors)
    else:
        with tempfile.TemporaryDirectory() as name:
            runtime = await build_local_runtime(settings, Path(name))
            started = time.perf_counter()
            turns = await embed_turns(runtime.embedder, texts)
            print(f"embedded {len(texts)} LoCoMo turns in {time.perf_counter() - started:.0f} s")
            runtime.db.close()  # type: ignore[attr-defined]
        if turn_vectors:
            np.save(turn_vectors, turns)
    print(
        f"{'memories':>9}  {'ours p50 / p95 ms':>17}  {'Chroma p50 / p95':>16}  {'ours/Chroma':>16}"
        f"  {'Chroma unfiltered':>16}  {'ours/unfiltered':>16}"
        f"  {'embed p50/p95':>13}  {'vec R@10':>8}{'':>6}  {'start s':>6}  {'RSS +MB':>7}"
        f"  {'fill s':>7}  {'Chroma fill s':>7}"
    )
    if episodes:
        print(f"each size with {episodes} episodes beside its memories")
    for size in sizes:
        await run_size(size, texts, turns, questions, settings, chroma, said, episodes, chatting)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-chroma", action="store_true", help="leave the Chroma column out")
    parser.add_argument("--ann-threshold", type=int, default=None, help="VECTOR_ANN_THRESHOLD (default: the setting's)")
    parser.add_argument(
        "--turn-vectors",
        type=Path,
        default=None,
        help="a .npy of the turns' embeddings: read if it exists, else written",
    )
    parser.add_argument("--episodes", type=int, default=0, help="episodes beside each size's memories")
    parser.add_argument("--chatting", action="store_true", help="a chat turn's writes before each of our recalls")
    arguments = parser.parse_args()
    asyncio.run(
        main(
            arguments.sizes,
            arguments.queries,
            not arguments.no_chroma,
            arguments.ann_threshold,
            arguments.turn_vectors,
            arguments.episodes,
            arguments.chatting,
        )
    )
