"""What the gateway adds to a chat turn, beside the direct provider, a bare pass-through and
itself with memory off, all in one run. Every server is a process of its own, as a user runs
it; the clients are the official openai SDK.

    .venv/bin/python bench/gateway_overhead.py [--quick] [--contended] [--baseline REV]
        [--turns 200] [--clients 16] [--seconds 30] [--memories N] [--targets direct bare off on]

Targets: ``direct`` (the provider), ``bare`` (a 30-line Starlette/httpx pass-through),
``off`` (``companion-memory serve`` with ENABLE_AUTO_MEMORY=false), ``on`` (memory on), and
with ``--baseline REV`` the gateway at git revision REV (a temporary worktree), memory on
(its store must be one that revision's embedder claims: before the int8 engine, build the
store with that revision too).

- The store holds LoCoMo turns (../shared/data/locomo-dev.json; Maharana et al., ACL 2024;
  CC BY-NC 4.0) with their real passage embeddings from the bundled embedder (computed once,
  then kept in .bench-cache/), so recall injects what it would for a user: the table says
  how many memories the provider received per turn. Past the corpus's 2,760 turns, turns
  repeat with a serial number and their vector.
- Single turns: each turn's question goes to every target in a rotating order, full reply,
  not streamed; a target's overhead is its time minus the direct provider's for the same
  turn. Printed: p50/p95/max of that, and turns over 500 ms.
- Concurrency: ``--clients`` streaming clients for ``--seconds`` against each target in
  turn, each request with a question of its own (so the query cache never helps). Printed:
  requests per second, the server's CPU time per request (all its threads), what the
  clients (this process) and the provider took beside it, and first-chunk p50/p95: on
  one machine, all three share its cores.
- ``--contended``: one process burns a core for the whole run (it stops itself at a
  deadline, and the bench stops it when done).
- Cold start: from launch to the first answered request; RSS after the run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from recall_latency import DATA, corpus  # noqa: E402
from servers import (  # noqa: E402
    SETTLE_SECONDS,
    build_store,
    burner,
    cpu_seconds,
    free_port,
    launch,
    pct,
    rss_mb,
    serve_command,
    server_environment,
    settle,
    stop,
    worktree,
)

KEY = "bench-key"
REPLY = "A short answer from the provider, streamed in a few pieces."
LABELS = {
    "direct": "direct provider",
    "bare": "bare pass-through",
    "off": "ours, memory off",
    "on": "ours, memory on",
    "baseline": "ours at {rev}, memory on, PASSIVE",
}
OURS = ("off", "on", "baseline")


# -- the servers ---------------------------------------------------------------------------------


def provider_main() -> None:
    """The provider: tests/upstreams.py's fake, in this process. Prints its URL; on each
    line read from stdin, prints what it received since the last time, as JSON: each
    request's model (which names the target that sent it) and what its last user turn
    carried (memory lines, characters)."""
    from tests.upstreams import RecordingUpstream

    with RecordingUpstream() as upstream:
        upstream.reply_text = REPLY
        print(upstream.url, flush=True)
        for _ in sys.stdin:
            received, upstream.requests[:] = upstream.requests[:], []
            summary = [[(r.json or {}).get("model"), *_carried(_last_user_text(r.json))] for r in received]
            print(json.dumps(summary), flush=True)


def _last_user_text(body: Any) -> str:
    users = [m for m in (body or {}).get("messages", []) if m.get("role") == "user"]
    content = users[-1]["content"] if users else ""
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def _carried(text: str) -> tuple[int, int]:
    """Recalled memories ("1. [fact, 2026-…] …" in the block's first section) and characters."""
    block = text.partition("<memories>")[2]
    return len(re.findall(r"^\d+\. \[", block, re.MULTILINE)), len(text)


BARE_PROXY = """
import sys, httpx, uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

upstream = sys.argv[1]
client = httpx.AsyncClient(base_url=upstream, timeout=120)


async def forward(request: Request) -> StreamingResponse:
    sent = client.build_request(
        "POST", "/v1/chat/completions", content=await request.body(),
        headers={"content-type": "application/json", "authorization": "Bearer x"},
    )
    answer = await client.send(sent, stream=True)
    headers = {k: v for k, v in answer.headers.items() if k.lower() in ("content-type", "x-request-id")}
    return StreamingResponse(answer.aiter_raw(), answer.status_code, headers, background=BackgroundTask(answer.aclose))


app = Starlette(routes=[Route("/v1/chat/completions", forward, methods=["POST"])])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


class Provider:
    """``provider_main`` in a process of its own."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve-provider"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdin and self.process.stdout
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.url = self.stdout.readline().strip()

    def received(self) -> list[tuple[str, int, int]]:
        """(model, memory lines, characters) of each request since the last call."""
        self.stdin.write("\n")
        self.stdin.flush()
        return [tuple(r) for r in json.loads(self.stdout.readline())]  # type: ignore[misc]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


@dataclass
class Target:
    name: str
    url: str
    process: subprocess.Popen[Any] | None = None
    cold_start: float | None = None
    overheads: list[float] = field(default_factory=list)
    full: list[float] = field(default_factory=list)
    first_chunks: list[float] = field(default_factory=list)
    rate: float = 0.0
    # The server's CPU time (all its threads) per request while the clients ran, and
    # the clients' and the provider's.
    cpu_per_request: float | None = None
    others_per_request: float | None = None
    errors: int = 0
    injected: list[tuple[int, int]] = field(default_factory=list)

    @property
    def ours(self) -> bool:
        return self.name in OURS

    @property
    def key(self) -> str:
        return KEY if self.ours else "x"

    @property
    def model(self) -> str:
        """What the client asks for; ours ask for ``companion``, which is ``provider_model``."""
        return "companion" if self.ours else self.name

    @property
    def provider_model(self) -> str:
        return f"local/{self.name}" if self.ours else self.name

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (all its threads)."""
        return cpu_seconds(self.process) if self.process is not None else 0.0

    def rss_mb(self) -> float | None:
        return rss_mb(self.process) if self.process is not None else None

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)


def start(name: str, command: list[str], port: int, env: dict[str, str], log: Path) -> Target:
    """Starts a server and waits for its first answered chat request."""
    target = Target(name, f"http://127.0.0.1:{port}/v1")

    def answers() -> bool:
        answer = httpx.post(
            target.url + "/chat/completions",
            json={"model": target.model, "messages": [{"role": "user", "content": "hello"}]},
            headers={"authorization": f"Bearer {target.key}"},
            timeout=30,
        )
        return answer.status_code == 200

    target.process, target.cold_start = launch(name, command, env, log, answers)
    return target


# -- the measurements ----------------------------------------------------------------------------


def single_turns(targets: list[Target], questions: list[str]) -> None:
    """Each question to every target, in a rotating order; full replies."""
    clients = {t.name: openai.OpenAI(base_url=t.url, api_key=t.key, max_retries=0, timeout=60) for t in targets}
    for turn, question in enumerate(questions):
        order = targets[turn % len(targets) :] + targets[: turn % len(targets)]
        times: dict[str, float] = {}
        for target in order:
            started = time.perf_counter()
            try:
                clients[target.name].chat.completions.create(
                    model=target.model, messages=[{"role": "user", "content": question}]
                )
            except openai.OpenAIError:
                target.errors += 1
                continue
            times[target.name] = 1000 * (time.perf_counter() - started)
        for target in targets:
            if target.name in times:
                target.full.append(times[target.name])
                if "direct" in times:
                    target.overheads.append(times[target.name] - times["direct"])


async def _clients(target: Target, questions: list[str], clients: int, seconds: float, provider: Provider) -> None:
    sdk = openai.AsyncOpenAI(
        base_url=target.url,
        api_key=target.key,
        max_retries=0,
        timeout=60,
        http_client=httpx.AsyncClient(limits=httpx.Limits(max_connections=clients)),
    )
    numbers = iter(range(10**9))
    deadline = time.perf_counter() + seconds
    done = 0

    async def client() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            n = next(numbers)
            question = f"{questions[n % len(questions)]} ({n})"  # each one new: no cached embedding
            started = time.perf_counter()
            first = None
            try:
                stream = await sdk.chat.completions.create(
                    model=target.model, messages=[{"role": "user", "content": question}], stream=True
                )
                async for _ in stream:
                    first = first or 1000 * (time.perf_counter() - started)
            except openai.OpenAIError:
                target.errors += 1
                continue
            target.first_chunks.append(first or 0.0)
            done += 1

    def others() -> float:
        return time.process_time() + cpu_seconds(provider.process)

    started, cpu, others_cpu = time.perf_counter(), target.cpu_seconds(), others()
    await asyncio.gather(*(client() for _ in range(clients)))
    target.rate = done / (time.perf_counter() - started)
    if done:
        target.others_per_request = 1000 * (others() - others_cpu) / done
    if target.process is not None and done:
        target.cpu_per_request = 1000 * (target.cpu_seconds() - cpu) / done
    await sdk.close()


def concurrency(targets: list[Target], questions: list[str], clients: int, seconds: float, provider: Provider) -> None:
    for target in targets:
        asyncio.run(_clients(target, questions, clients, seconds, provider))


# -- the report ----------------------------------------------------------------------------------


def report(targets: list[Target], args: argparse.Namespace, memories: int) -> None:
    direct = next(t for t in targets if t.name == "direct")
    print()
    print(
        f"{memories} memories with real passage vectors; {len(direct.full)} single turns; {args.clients} streaming "
        f"clients x {args.seconds:g} s per target; "
        f"{'CONTENDED: another process burns a core' if args.contended else 'no load added'}; {os.cpu_count()} CPUs"
    )
    head = (
        f"{'target':<38}{'overhead/turn p50':>18}{'p95':>7}{'max':>7}{'>500ms':>7}{'full reply p50':>18}"
        f"{'req/s':>14}{'CPU ms/req':>11}{'+others':>8}{'1st chunk p50':>20}{'p95':>7}{'cold s':>7}{'RSS MB':>7}{'memories':>9}"
    )
    print(head)
    print("-" * len(head))
    for t in targets:
        label = LABELS[t.name].format(rev=args.baseline)
        over = t.overheads if t is not direct else []
        overhead = (
            f"{pct(over, 0.5):>16.1f}ms{pct(over, 0.95):>7.1f}{max(over):>7.1f}{sum(o > 500 for o in over):>7}"
            if over
            else f"{'':>18}{'':>7}{'':>7}{'':>7}"
        )
        full = statistics.median(t.full)
        first = pct(t.first_chunks, 0.5)
        print(
            f"{label:<38}{overhead}"
            f"{full:>8.1f}ms ({full / statistics.median(direct.full):4.2f}x)"
            f"{t.rate:>6.1f} ({t.rate / direct.rate:4.2f}x)"
            + (f"{t.cpu_per_request:>11.1f}" if t.cpu_per_request is not None else f"{'':>11}")
            + (f"{t.others_per_request:>8.1f}" if t.others_per_request is not None else f"{'':>8}")
            + f"{first:>8.0f}ms ({first / pct(direct.first_chunks, 0.5):5.2f}x){pct(t.first_chunks, 0.95):>7.0f}"
            f"{t.cold_start or 0:>7.1f}{t.rss_mb() or 0:>7.0f}"
            + (f"{statistics.mean(n for n, _ in t.injected):>9.1f}" if t.injected else f"{'':>9}")
            + (f"  errors: {t.errors}" if t.errors else "")
        )
    for t in targets:
        if t.injected:
            print(
                f"{LABELS[t.name].format(rev=args.baseline)}: the provider received "
                f"{sum(n > 0 for n, _ in t.injected)}/{len(t.injected)} single turns with memories, "
                f"{statistics.mean(n for n, _ in t.injected):.1f} memories and "
                f"{statistics.median(c for _, c in t.injected):.0f} characters per user turn (median)"
            )
    print("overhead/turn: the target's full reply time minus the direct provider's, for the same turn")
    print("CPU ms/req: the server's, under the clients' load; +others: the clients' and the provider's beside it")
    print("command: .venv/bin/python " + " ".join(["bench/gateway_overhead.py", *sys.argv[1:]]))


def start_targets(names: list[str], provider: Provider, work: Path, baseline: Path | None) -> list[Target]:
    base = server_environment(CHATBOX_API_KEY=KEY, CHAT_BASE_URL=provider.url + "/v1")
    targets = []
    for name in names:
        if name == "direct":
            targets.append(Target("direct", provider.url + "/v1"))
            continue
        port = free_port()
        if name == "bare":
            command = [sys.executable, "-c", BARE_PROXY, provider.url, str(port)]
            targets.append(start(name, command, port, base, work / f"{name}.log"))
            continue
        data = work / name
        if name != "off":
            shutil.copytree(work / "store", data)
        env = base | {"CHAT_MODEL": f"local/{name}"}
        if name == "off":
            env["ENABLE_AUTO_MEMORY"] = "false"
        if name == "baseline":
            assert baseline is not None
            env |= {"PYTHONPATH": str(baseline / "src")}
        targets.append(start(name, serve_command(data, port), port, env, work / f"{name}.log"))
    return targets


def main(args: argparse.Namespace) -> None:
    turns, _, questions = corpus(DATA)
    asked = random.Random(3).sample(questions, min(args.turns, len(questions)))
    memories = args.memories or len(turns)
    names = args.targets + (["baseline"] if args.baseline else [])
    work = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    targets: list[Target] = []
    provider = Provider()
    try:
        if {"on", "baseline"} & set(names):
            build_store(work / "store", memories, turns)
        bound = 180 + SETTLE_SECONDS + len(names) * (2 * args.seconds + 2 * args.turns)  # far more than the run takes
        with burner(bound) if args.contended else contextlib.nullcontext(), worktree(args.baseline) as baseline:
            targets = start_targets(names, provider, work, baseline)
            settle({t.name: t.process for t in targets if t.process is not None})
            single_turns(targets, asked[:5])  # warm up every path
            for target in targets:
                target.full.clear()
                target.overheads.clear()
            provider.received()
            print(f"{len(asked)} single turns on {len(targets)} targets ...", flush=True)
            single_turns(targets, asked)
            received = provider.received()
            for target in targets:
                if target.name in ("on", "baseline"):
                    target.injected = [(n, c) for model, n, c in received if model == target.provider_model]
            print(f"{args.clients} clients for {args.seconds:g} s on each target ...", flush=True)
            concurrency(targets, questions, args.clients, args.seconds, provider)
            report(targets, args, memories)
    finally:
        for target in targets:
            target.stop()
        provider.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve-provider"]:
        provider_main()
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60 turns, 10 s of concurrency per target")
    parser.add_argument("--contended", action="store_true", help="one other process burns a core for the run")
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--memories", type=int, default=0, help="default: the corpus's 2,760 turns")
    parser.add_argument("--targets", nargs="+", default=["direct", "bare", "off", "on"], choices=list(LABELS)[:4])
    parser.add_argument("--baseline", metavar="REV", help="also the gateway at this git revision, with PASSIVE")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.turns, arguments.seconds = min(arguments.turns, 60), min(arguments.seconds, 10)
    # Stopped by a signal (timeout, kill), the run still stops its servers and removes the
    # baseline's worktree: its cleanup is in finally blocks, which SystemExit runs.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    main(arguments)
