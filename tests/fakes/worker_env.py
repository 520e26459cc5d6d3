"""A Worker's ``env`` built from the binding fakes, declared as wrangler.toml declares
them: D1 ``DB``, Vectorize ``VECTORIZE`` (with the metadata indexes the deploy script
creates), Workers AI ``AI`` and the Queue producer ``TASKS``; ``vars`` are the Worker's
variables and secrets."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations
from tests.fakes.d1 import FakeD1Database, ResultStyle
from tests.fakes.queues import FakeQueue
from tests.fakes.vectorize import FakeVectorize
from tests.fakes.workers_ai import FakeWorkersAI

# The properties the vector mirror stores and recall filters on.
MIRROR_INDEXES = {"namespace": "string", "status": "string", "type": "string", "kind": "string", "pinned": "boolean"}


def worker_env(*, result_style: ResultStyle = "jsproxy", **vars: Any) -> SimpleNamespace:
    """``result_style``: bindings answer with JsProxy objects, or with already-converted
    Python values as recent Python Workers SDKs hand them over."""
    return SimpleNamespace(
        DB=FakeD1Database(result_style=result_style),
        VECTORIZE=FakeVectorize(1024, metadata_indexes=MIRROR_INDEXES, result_style=result_style),
        AI=FakeWorkersAI(result_style=result_style),
        TASKS=FakeQueue(result_style=result_style),
        **vars,
    )


async def migrate(env: SimpleNamespace) -> None:
    """What ``wrangler d1 migrations apply`` does to the fake D1 database."""
    await apply_migrations(D1Database(env.DB), load_migrations(default_migrations_dir()))
