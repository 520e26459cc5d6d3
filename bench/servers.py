"""What the benches that run ``companion-memory serve`` as a user runs it share: a store of
LoCoMo turns with their real passage vectors, servers in processes of their own (this
tree's, or an older revision's from a temporary git worktree), waiting until they answer
and until they are idle, and percentiles.

The LoCoMo turns are ../shared/data/locomo-dev.json (Maharana et al., ACL 2024; CC BY-NC
4.0); their vectors come from the bundled embedder, computed once and then kept in
.bench-cache/. Past the corpus's 2,760 turns, turns repeat with a serial number and their
vector.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".bench-cache"
# How long a server may take to finish its own work after starting.
SETTLE_SECONDS = 900


T = TypeVar("T")


def run_as_served(main: Coroutine[Any, Any, T]) -> T:
    """Runs ``main`` on the event loop the server runs on: uvicorn's, uvloop where it is
    installed (the local extra installs it but on Windows)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")


# -- processes -----------------------------------------------------------------------------------


# Where the benches' servers and embedders find the bundled embedder's int8 graph, built
# once (a server's first start builds it in its own data dir otherwise).
MODELS = CACHE / "models"


def server_environment(src: Path = ROOT / "src", **settings: str) -> dict[str, str]:
    """This process's environment for a server running the code in ``src``, without the
    embedder's and BLAS's variables (each server sets its own), plus ``settings``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "EMBEDDER_"))}
    return base | {"PYTHONPATH": str(src), "EMBEDDER_MODEL_DIR": str(MODELS)} | settings


def serve_command(data_dir: Path, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "companion_memory.hosts.cli",
        "--data-dir",
        str(data_dir),
        "serve",
        "--port",
        str(port),
    ]


def launch(name: str, command: list[str], env: dict[str, str], log: Path, ready: Callable[[], bool]) -> Any:
    """Starts ``command`` (its output to ``log``) and waits until ``ready()`` answers true;
    returns the process and the seconds that took."""
    started = time.perf_counter()
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT, cwd=ROOT)
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise SystemExit(f"{name} did not start: {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(httpx.TransportError):
            if ready():
                return process, time.perf_counter() - started
        if time.monotonic() > deadline:
            stop(process)
            raise SystemExit(f"{name} did not answer within 120 s")
        time.sleep(0.02)


def cpu_seconds(process: subprocess.Popen[Any]) -> float:
    """CPU time ``process`` has used so far (all its threads)."""
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(process: subprocess.Popen[Any]) -> float | None:
    for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def stop(process: subprocess.Popen[Any]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def settle(processes: dict[str, subprocess.Popen[Any]], limit: float = SETTLE_SECONDS) -> None:
    """Waits until no server does work of its own (under 5% of a core over 2 s), so that
    none measures while another runs in the background: a server at an older revision
    may re-embed the whole store at start (when the store's text form changed since),
    and one that was just written to embeds the writes' backlog."""
    started = time.monotonic()
    for name, process in processes.items():
        while True:
            before = cpu_seconds(process)
            time.sleep(2)
            if cpu_seconds(process) - before < 0.1:
                break
            if time.monotonic() - started > limit:
                raise SystemExit(f"{name} was still busy after {limit:.0f} s")
    if time.monotonic() - started > 10:
        print(f"servers idle after {time.monotonic() - started:.0f} s", flush=True)


@contextlib.contextmanager
def worktree(rev: str | None) -> Iterator[Path | None]:
    """The source tree of ``rev``, checked out for the run (removed after it, also when
    the run is stopped by SIGTERM, if the bench turns that into SystemExit)."""
    if rev is None:
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="bench-baseline-"))
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev], check=True, capture_output=True
    )
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)


@contextlib.contextmanager
def burner(seconds: float) -> Iterator[None]:
    """One process spinning on a core; it stops itself after ``seconds`` whatever happens here."""
    process = subprocess.Popen(
        [sys.executable, "-c", f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"]
    )
    try:
        yield
    finally:
        process.kill()
        process.wait()


# -- the store -----------------------------------------------------------------------------------


def passage_vectors(texts: list[str]) -> np.ndarray:
    """The bundled embedder's passage vectors of ``texts``, kept in .bench-cache/ (the
    vectors of the whole corpus take minutes to compute on 2 cores)."""
    from companion_memory.adapters.local.embedder import BundledEmbedder
    from companion_memory.memory.vector_mirror import EMBEDDED_TEXT_FORM, embedding_text

    path = CACHE / f"locomo-dev-{BundledEmbedder.model}-{EMBEDDED_TEXT_FORM}.npy"
    stored = np.load(path) if path.exists() else np.zeros((0, 384), dtype=np.float32)
    if len(stored) >= len(texts):
        return stored[: len(texts)]
    missing = texts[len(stored) :]
    print(f"embedding {len(missing)} LoCoMo turns, once (kept in {path.relative_to(ROOT)}) ...", flush=True)

    async def embed() -> list[list[float]]:
        embedder, vectors = BundledEmbedder(models=MODELS), []
        for start in range(0, len(missing), 32):
            vectors += await embedder.embed([embedding_text(t) for t in missing[start : start + 32]], kind="passage")
        return vectors

    vectors = np.concatenate([stored, np.asarray(asyncio.run(embed()), dtype=np.float32)])
    CACHE.mkdir(exist_ok=True)
    np.save(path, vectors)
    return vectors


def build_store(directory: Path, count: int, turns: list[str], *, threads: int = 0) -> None:
    """A data dir holding ``count`` memories, LoCoMo turns with their vectors. With
    ``threads``, also ``same_thread`` relations between each run of ``threads``
    neighbouring memories (a conversation's turns), for the star map to draw."""
    from companion_memory.adapters.local.embedder import BundledEmbedder
    from companion_memory.adapters.local.runtime import build_local_runtime
    from companion_memory.clock import iso
    from companion_memory.domain.memory import Memory
    from companion_memory.memory.vector_sources import vector_metadata
    from companion_memory.ports import VectorRecord
    from companion_memory.settings import Settings
    from companion_memory.store.memories import MemoryStore

    distinct = turns[: min(count, len(turns))]
    vectors = passage_vectors(distinct)

    async def fill() -> None:
        runtime = await build_local_runtime(Settings(), directory, embedder=BundledEmbedder(engine=_NoEngine()))
        await runtime.mirror.mismatch()  # the index is claimed by the bundled embedder, as a server would
        now = iso(runtime.clock.now())
        for start in range(0, count, 1000):
            memories = [
                Memory(
                    id=f"m{i:07d}",
                    namespace="default",
                    type=("fact", "preference", "event", "habit")[i % 4],
                    content=distinct[i % len(distinct)] + (f" #{i}" if i >= len(distinct) else ""),
                    fact_key=f"k{i}",
                    created_at=now,
                    updated_at=now,
                )
                for i in range(start, min(count, start + 1000))
            ]
            edges = [
                MemoryStore.add_relation(f"r{i:07d}", "default", f"m{i - 1:07d}", f"m{i:07d}", "same_thread", 0.5, now)
                for i in range(start, min(count, start + 1000))
                if threads and i % threads
            ]
            await runtime.db.batch([*(MemoryStore.insert(m) for m in memories), *edges])
            await runtime.vectors.upsert(
                [
                    VectorRecord(m.id, vectors[int(m.id[1:]) % len(distinct)].tolist(), vector_metadata(m))
                    for m in memories
                ]
            )
        runtime.db.close()  # type: ignore[attr-defined]

    asyncio.run(fill())


class _NoEngine:
    """The bundled embedder's name and width for the store's bookkeeping, without loading
    the engine in the bench's process (the vectors come from the cache)."""

    dim = 384

    def cut(self, text: str, is_query: bool, limit: int) -> tuple[str, int]:
        return text, len(text)

    def encode(self, cuts: Any, is_query: bool = False) -> Any:
        raise RuntimeError("the bench embeds nothing here")
