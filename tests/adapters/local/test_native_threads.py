"""The local runtime's native threads: the embedder's engine threads (one per core unless
told), and numpy's BLAS with one thread, set before numpy loads. Each test runs in a
process of its own, as a user starts one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.hosts.test_local_server import clean_env


def threading_env(**extra: str) -> dict[str, str]:
    """The environment of a new process: none of the variables this test is about
    inherited from ours (the in-process embedders of other tests set them)."""
    env = {k: v for k, v in clean_env().items() if not k.startswith("OPENBLAS_") and k != "EMBEDDER_THREADS"}
    return env | extra


def cores() -> int:
    return len(os.sched_getaffinity(0))


def run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in a new process with ``threading_env(**env)``; it must succeed."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path,
        env=threading_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_the_embedder_runs_an_engine_thread_per_core_and_the_query_lane_unless_told(tmp_path: Path) -> None:
    script = (
        "import asyncio, os, sys, threading\n"
        "from pathlib import Path\n"
        "from companion_memory.adapters.local.runtime import build_local_runtime\n"
        "from companion_memory.settings import Settings\n"
        # Kept while counting: once the runtime is collected, its engine threads stop.
        "runtime = asyncio.run(build_local_runtime(Settings.from_env(os.environ), Path(sys.argv[1])))\n"
        "print(sum(t.name.startswith('embedder-') for t in threading.enumerate()))\n"
    )
    default = cores() + 1 if cores() > 1 else 1
    assert run(tmp_path, "-c", script, str(tmp_path / "data")).stdout.split()[-1] == str(default)
    told = run(tmp_path, "-c", script, str(tmp_path / "data"), EMBEDDER_THREADS="5")
    assert told.stdout.split()[-1] == "5"


def test_numpy_blas_loads_with_one_thread_after_the_cli_starts(tmp_path: Path) -> None:
    """The CLI sets it before anything imports numpy, so OpenBLAS starts no idle workers
    (the vector index also limits it to one, for a process that imported numpy first)."""
    script = (
        "import json, os, sys, time\n"
        "from companion_memory.hosts.cli import main\n"
        "main(['--data-dir', sys.argv[1], 'migrate'])\n"
        # The database's threads are joined when migrate returns; the system may reap them a moment later.
        "deadline = time.monotonic() + 10\n"
        "while len(os.listdir('/proc/self/task')) > 1 and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "import numpy\n"
        "from threadpoolctl import threadpool_info\n"
        "blas = [p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas']\n"
        "print(json.dumps({'blas': blas, 'threads': len(os.listdir('/proc/self/task'))}))\n"
    )
    done = run(tmp_path, "-c", script, str(tmp_path / "data"))
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"blas": [1], "threads": 1}
