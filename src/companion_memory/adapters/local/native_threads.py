"""The native thread pools of the local runtime: how many embedder threads run, at what
priority, and numpy's BLAS held to one thread before it loads.

The embedder runs ``EMBEDDER_THREADS`` engine threads side by side, each its own calls on
one core (onnxruntime with one intra-op thread, ``e5_onnx``): a call's work does not shrink
much with more threads, and a team of several meets at a barrier many times in one forward
pass, waiting there whenever the event loop or another program has one of its threads off
a core, while side-by-side calls never wait for each other.

numpy's BLAS (OpenBLAS, with a pool whose idle workers spin) is held to one thread: the
vector index multiplies one vector by a matrix, which more threads do not speed up. OpenBLAS
starts its pool when numpy is imported, so ``configure`` sets its variable in this
process's environment; the CLI calls it first thing, and the embedder again before it loads
(the index also limits it through threadpoolctl, for whatever imported numpy first).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping

from ...settings import Settings

log = logging.getLogger("companion_memory")


def embedder_threads(settings: Settings) -> int:
    """How many engine calls run at once: ``EMBEDDER_THREADS``, else one per core, plus
    the query lane where there are two cores or more. On 2 cores, one thread held 16 chats
    at about 28 req/s (its core full) while the other core sat half idle; and with the
    lane one of the two, passages had one core: 64 a second through the embedder against
    113 with a passage thread per core (bench/embedder_speed.py; their lower priority
    leaves a query the core it needs)."""
    if settings.EMBEDDER_THREADS:
        return settings.EMBEDDER_THREADS
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1 if cores > 1 else 1


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


def configure(environ: MutableMapping[str, str] = os.environ) -> None:
    """Sets ``OPENBLAS_NUM_THREADS=1`` in ``environ`` (the process environment: OpenBLAS
    reads it when it loads)."""
    environ["OPENBLAS_NUM_THREADS"] = "1"
