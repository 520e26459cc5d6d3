"""Whether one heavy request stalls everyone else (issue 28, item 6): a second client's
recall on the local server, idle and then while other clients keep it busy with each heavy
load in turn. The server is ``companion-memory serve`` in a process of its own, as a user
runs it; the loads come from another process, so the client that measures does nothing
else; everything is on 127.0.0.1.

    .venv/bin/python bench/availability.py [--baseline REV] [--queries 40] [--memories 3000]
        [--clients 4] [--writers 8] [--loads graph health starmap export writes]

- The store holds LoCoMo turns with their real passage vectors (see ``servers.py``), the
  turns of each conversation's run of 20 linked by ``same_thread`` relations, so the star
  map has edges to draw.
- Recall: ``POST /v1/memory/recall`` with a LoCoMo question (a serial number makes each
  one new, so the query cache never answers), one after another, ``--queries`` of them
  per load after a second of the load getting going.
- The loads, each for as long as recall is measured: ``--clients`` clients reading
  ``GET /v1/admin/graph?limit=2000``, asking for ``GET /v1/health/report``, for the star
  map as SVG (``/v1/admin/starmap?limit=2000``) and for ``GET /api/memories/export?all=true``;
  then ``--writers`` clients writing 20,000-character memories (LoCoMo text) to a namespace
  of their own. Each client sends its next request when its last one is answered.
- ``--baseline REV`` runs the same against a server at git revision REV (a temporary
  worktree) on a copy of the same store, load by load beside this tree's, their order
  alternating, so both come from one run on one machine.

Printed: per load and server, recall p50/p95 and the p95 as a multiple of that server's
idle p95, and how many requests the load's clients had answered (and failed) meanwhile.
Figures from a busy machine mean little: run it on a quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from recall_latency import DATA, corpus  # noqa: E402
from servers import (  # noqa: E402
    build_store,
    free_port,
    launch,
    pct,
    serve_command,
    server_environment,
    settle,
    stop,
    worktree,
)

KEY = "bench-key"
LOADS = ("graph", "health", "starmap", "export", "writes")
BIG = 20_000
# One recall may take this long before the run calls it failed; a load phase ends after
# this many seconds whatever it measured by then.
RECALL_TIMEOUT = 60.0
PHASE_SECONDS = 180.0
WARM_UP_SECONDS = 1.0


# -- the loads (in a process of their own) --------------------------------------------------------


def _request(load: str, client: int, number: int, text: str) -> tuple[str, str, dict[str, Any] | None]:
    """(method, path, JSON body) of a load client's next request."""
    if load == "graph":
        return "GET", "/v1/admin/graph?limit=2000", None
    if load == "health":
        return "GET", "/v1/health/report", None
    if load == "starmap":
        return "GET", "/v1/admin/starmap?format=svg&limit=2000", None
    if load == "export":
        return "GET", "/api/memories/export?all=true", None
    start = (client * 7919 + number * 104_729) % (len(text) - BIG)
    body = {"namespace": "writes", "fact_key": f"big.{client}.{number}", "type": "note", "content": text[start:][:BIG]}
    return "POST", "/v1/memories", body


async def _run_load(url: str, load: str, clients: int, seconds: float, data: Path) -> dict[str, Any]:
    """``clients`` clients for ``seconds``, or until stdin closes (the bench is done
    measuring): then the requests in flight are dropped."""
    text = " ".join(corpus(data)[0]) if load == "writes" else ""
    done = failed = started_clients = 0
    spent: list[float] = []
    async with httpx.AsyncClient(
        base_url=url, headers={"authorization": f"Bearer {KEY}"}, timeout=300, limits=httpx.Limits(max_connections=64)
    ) as http:

        async def client(number: int) -> None:
            nonlocal done, failed, started_clients
            sent = 0
            while True:
                method, path, body = _request(load, number, sent, text)
                if not sent:
                    started_clients += 1
                    if started_clients == clients:
                        print("started", flush=True)
                sent += 1
                started = time.perf_counter()
                try:
                    async with http.stream(method, path, json=body) as answer:
                        async for _ in answer.aiter_raw():
                            pass
                    ok = answer.status_code < 400
                except httpx.HTTPError:
                    ok = False
                done += ok
                failed += not ok
                if ok:
                    spent.append(1000 * (time.perf_counter() - started))

        loop = asyncio.get_running_loop()
        closed = asyncio.Event()
        loop.add_reader(sys.stdin.fileno(), closed.set)  # the bench writes nothing: readable means closed
        tasks = [asyncio.create_task(client(n)) for n in range(clients)]
        await asyncio.wait([asyncio.create_task(closed.wait())], timeout=seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"done": done, "failed": failed, "p50": pct(spent, 0.5)}


def load_main(url: str, load: str, clients: int, seconds: float, data: Path) -> None:
    """Prints "started" once every client has sent its first request and, once stopped,
    what they managed as one JSON line."""
    print(json.dumps(asyncio.run(_run_load(url, load, clients, seconds, data))), flush=True)


class Load:
    """``load_main`` in a process of its own, started and stopped by the bench."""

    def __init__(self, url: str, load: str, clients: int, data: Path) -> None:
        command = [sys.executable, __file__, "--run-load", load, "--url", url, "--clients", str(clients)]
        command += ["--data", str(data)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.process.stdout
        if self.process.stdout.readline().strip() != "started":
            raise SystemExit(f"the {load} load did not start")

    def stop(self) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.close()
        line = self.process.stdout.readline()
        self.process.wait(30)
        return json.loads(line) if line else {"done": 0, "failed": 0, "p50": float("nan")}


# -- the servers and the measurement --------------------------------------------------------------


@dataclass
class Server:
    name: str
    url: str
    process: subprocess.Popen[Any]
    recall: dict[str, list[float]] = field(default_factory=dict)
    load: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)


def start_server(name: str, store: Path, work: Path, src: Path) -> Server:
    data = work / name
    shutil.copytree(store, data)
    port = free_port()
    url = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        return httpx.get(url + "/health", timeout=10).status_code == 200

    process, _ = launch(
        name, serve_command(data, port), server_environment(src, CHATBOX_API_KEY=KEY), work / f"{name}.log", answers
    )
    return Server(name, url, process)


def measure(server: Server, phase: str, questions: list[str], serial: int) -> None:
    """``len(questions)`` recalls one after another, or as many as fit in PHASE_SECONDS."""
    timings: list[float] = []
    failed = 0
    deadline = time.monotonic() + PHASE_SECONDS
    with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {KEY}"}, timeout=RECALL_TIMEOUT) as http:
        for number, question in enumerate(questions):
            if time.monotonic() > deadline:
                break
            started = time.perf_counter()
            try:
                answer = http.post("/v1/memory/recall", json={"query": f"{question} ({serial + number})", "k": 10})
                ok = answer.status_code == 200
            except httpx.HTTPError:
                ok = False
            if ok:
                timings.append(1000 * (time.perf_counter() - started))
            else:
                failed += 1
    server.recall[phase] = timings
    server.failed[phase] = failed


def run_phase(servers: list[Server], phase: str, questions: list[str], args: argparse.Namespace, turn: int) -> None:
    order = servers[turn % len(servers) :] + servers[: turn % len(servers)]
    for server in order:
        print(f"{phase:<8} on {server.name} ...", flush=True)
        load = None
        if phase != "idle":
            load = Load(server.url, phase, args.writers if phase == "writes" else args.clients, args.data)
            time.sleep(WARM_UP_SECONDS)
        try:
            measure(server, phase, questions, serial=turn * 10_000)
        finally:
            if load is not None:
                server.load[phase] = load.stop()
        settle({s.name: s.process for s in servers})


def report(servers: list[Server], phases: list[str], args: argparse.Namespace) -> None:
    print()
    print(
        f"{args.memories} memories; {args.queries} recalls per load, one at a time; {args.clients} clients per "
        f"read load, {args.writers} writers of {BIG:,}-character memories; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the end"
    )
    head = f"{'load':<10}{'server':<22}{'recall p50':>11}{'p95':>8}{'p95/idle':>10}{'load req':>10}{'failed':>8}{'load p50':>10}"
    print(head)
    print("-" * len(head))
    for phase in phases:
        for server in servers:
            timings = server.recall.get(phase, [])
            idle = pct(server.recall["idle"], 0.95)
            load = server.load.get(phase, {})
            p95 = pct(timings, 0.95)
            print(
                f"{phase:<10}{server.name:<22}{pct(timings, 0.5):>9.0f}ms{p95:>6.0f}ms{p95 / idle:>9.1f}x"
                + (f"{load['done']:>10}{load['failed']:>8}{load['p50']:>8.0f}ms" if load else f"{'':>28}")
                + (f"  recalls failed: {server.failed[phase]}" if server.failed.get(phase) else "")
            )
    print("load req: requests the load's clients had answered while recall was measured; load p50: their time")
    print("command: .venv/bin/python " + " ".join(["bench/availability.py", *sys.argv[1:]]))


def main(args: argparse.Namespace) -> None:
    turns, _, questions = corpus(args.data)
    asked = questions[: args.queries]
    phases = ["idle", *args.loads]
    work = Path(tempfile.mkdtemp(prefix="availability-bench-"))
    servers: list[Server] = []
    try:
        build_store(work / "store", args.memories, turns, threads=20)
        with worktree(args.baseline) as baseline:
            servers.append(start_server("this tree", work / "store", work, ROOT / "src"))
            if baseline is not None:
                servers.append(start_server(f"at {args.baseline}", work / "store", work, baseline / "src"))
            settle({s.name: s.process for s in servers})
            for server in servers:
                measure(server, "warm-up", questions[-5:], serial=0)
            for turn, phase in enumerate(phases):
                run_phase(servers, phase, asked, args, turn)
            report(servers, phases, args)
    finally:
        for server in servers:
            stop(server.process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", metavar="REV", help="also a server at this git revision, on the same store")
    parser.add_argument("--queries", type=int, default=40, help="recalls per load")
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=4, help="clients per read load")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--data", type=Path, default=DATA, help=f"LoCoMo's JSON (default: {DATA})")
    parser.add_argument("--loads", nargs="+", default=list(LOADS), choices=LOADS)
    parser.add_argument("--run-load", choices=LOADS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.run_load:
        load_main(arguments.url, arguments.run_load, arguments.clients, PHASE_SECONDS + 30, arguments.data)
        sys.exit(0)
    # Stopped by a signal (timeout, kill), the run still stops its servers and removes the
    # baseline's worktree: the cleanup is in finally blocks, which SystemExit runs.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    main(arguments)
