"""Where a chat turn's CPU time goes: the gateway's memory work for one turn (recall, the
memories block, storing the turn and embedding its reply), in this process, by thread
(the event loop, the embedder's threads, SQLite's readers and writer) and by SQL statement.
No HTTP and no provider: what is left of ``gateway_overhead``'s CPU per request once the
pass-through (its memory-off line) is taken away.

    .venv/bin/python bench/turn_cpu.py [--turns 300] [--memories N] [--statements 15]

The store is ``gateway_overhead``'s (LoCoMo turns with their real passage vectors); each
turn asks a LoCoMo question of its own, as one user after another, and waits for the
reply's embedding, so a turn's figures hold all of its work. CPU times are the kernel's
per thread, so they mean something on a busy machine too; wall times do not. The event
loop is the server's (uvloop where installed).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]

from recall_latency import DATA, corpus  # noqa: E402
from servers import MODELS, build_store, pct, run_as_served  # noqa: E402

from companion_memory.adapters.local import sqlite  # noqa: E402
from companion_memory.adapters.local.embedder import BundledEmbedder  # noqa: E402
from companion_memory.adapters.local.runtime import build_local_runtime  # noqa: E402
from companion_memory.settings import Settings  # noqa: E402

REPLY = "A short answer from the provider, streamed in a few pieces."
# SQL text -> [statements run, CPU seconds of the thread that ran them]
statements: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])


def _timed(make: Callable[..., Callable[[Any], Any]]) -> Callable[..., Callable[[Any], Any]]:
    """One of the SQLite adapter's job makers, its jobs timed by the CPU of their thread."""

    def timed_make(sql: str, params: Any) -> Callable[[Any], Any]:
        work = make(sql, params)

        def timed_work(connection: Any) -> Any:
            started = time.thread_time()
            try:
                return work(connection)
            finally:
                entry = statements[" ".join(sql.split())[:110]]
                entry[0] += 1
                entry[1] += time.thread_time() - started

        return timed_work

    return timed_make


for _maker in ("_fetch_all", "_fetch_first", "_run"):
    setattr(sqlite, _maker, _timed(getattr(sqlite, _maker)))


def thread_cpu() -> dict[str, float]:
    """CPU seconds so far of each of this process's threads, by name (numbers dropped)."""
    names = {t.native_id: t.name.rstrip("0123456789-") for t in threading.enumerate()}
    seconds: dict[str, float] = defaultdict(float)
    for task in os.listdir("/proc/self/task"):
        fields = Path(f"/proc/self/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
        seconds[names.get(int(task), "other")] += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


async def run(args: argparse.Namespace, data: Path) -> None:
    _, _, questions = corpus(DATA)
    settings = Settings(CHAT_BASE_URL="http://127.0.0.1:9/v1", CHATBOX_API_KEY="bench")
    runtime = await build_local_runtime(settings, data, embedder=BundledEmbedder(models=MODELS))
    gateway = runtime.gateway
    asked = random.Random(3).sample(questions, min(len(questions), args.turns + 20))

    async def turn(question: str) -> None:
        body = {"model": "companion", "messages": [{"role": "user", "content": question}], "stream": True}
        started = await gateway.start(body)
        started.reply.append(REPLY)
        await gateway.keep(started)
        await runtime.mirror.drain()

    for question in asked[:20]:  # warm up every path
        await turn(question)
    statements.clear()
    cpu_before, wall = thread_cpu(), []
    for question in asked[20:]:
        started = time.perf_counter()
        await turn(question)
        wall.append(1000 * (time.perf_counter() - started))
    cpu = {name: seconds - cpu_before.get(name, 0.0) for name, seconds in thread_cpu().items()}
    n = len(wall)
    print(f"{n} turns, {args.memories or 'all'} memories; {os.cpu_count()} CPUs")
    print(f"CPU per turn: {1000 * sum(cpu.values()) / n:.2f} ms")
    for name, seconds in sorted(cpu.items(), key=lambda item: -item[1]):
        if seconds:
            print(f"  {name:<16}{1000 * seconds / n:7.2f} ms")
    print(f"wall per turn (one at a time): p50 {pct(wall, 0.5):.1f} ms, p95 {pct(wall, 0.95):.1f} ms")
    print(f"SQL per turn: {sum(c for c, _ in statements.values()) / n:.1f} statements, most CPU first:")
    for sql, (count, seconds) in sorted(statements.items(), key=lambda item: -item[1][1])[: args.statements]:
        print(f"  {1000 * seconds / n:6.3f} ms {count / n:5.2f}x  {sql}")
    print("command: .venv/bin/python " + " ".join(["bench/turn_cpu.py", *sys.argv[1:]]))


def main(args: argparse.Namespace) -> None:
    turns, _, _ = corpus(DATA)
    work = Path(tempfile.mkdtemp(prefix="turn-cpu-"))
    try:
        build_store(work, args.memories or len(turns), turns)
        run_as_served(run(args, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--memories", type=int, default=0, help="default: the corpus's 2,760 turns")
    parser.add_argument("--statements", type=int, default=15, help="how many SQL statements to list")
    main(parser.parse_args())
