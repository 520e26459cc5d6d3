"""Builds the local Runtime: SQLite database, SQLite-backed vector index, bundled embedder."""

from __future__ import annotations

from pathlib import Path

import httpx

from ...clock import SystemClock
from ...migrations import apply_migrations, default_migrations_dir, load_migrations
from ...ports import Clock, Embedder
from ...runtime import Runtime
from ...settings import Settings
from ..chat.routing import Router
from ..remote.factory import remote_embedder, remote_reranker
from ..remote.http_client import HttpxClient, upstream_timeout
from .backups import FileBackups
from .embedder import BundledEmbedder, model_dir
from .public_http import public_http_client
from .sqlite import SqliteDatabase
from .task_queue import LocalTaskQueue
from .uploads import FileUploads
from .vector_index import LocalVectorIndex

DATABASE_FILE = "companion-memory.sqlite3"
# Where `companion-memory doctor --repair` (and POST /v1/health/repair) keep their export first.
BACKUPS_DIR = "backups"
VECTORS_FILE = "vectors.sqlite3"
# Where a history export uploaded to the server waits until its import has ended.
UPLOADS_DIR = "uploads"


async def build_local_runtime(
    settings: Settings, data_dir: Path, *, embedder: Embedder | None = None, clock: Clock | None = None
) -> Runtime:
    """Open (and migrate) the data dir. The vector index catches up in the background
    when it is new or was built for another embedder. This is where the local server's
    ports are chosen: the runtime imports no adapter."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase.open(data_dir / DATABASE_FILE)
    await apply_migrations(db, load_migrations(default_migrations_dir()))
    # One client for every call out: models, embeddings, reranking, GitHub.
    http = httpx.AsyncClient(timeout=upstream_timeout(settings))
    embedder = (
        embedder
        or remote_embedder(settings, http)
        or BundledEmbedder(settings=settings, models=model_dir(settings, data_dir))
    )
    vectors = LocalVectorIndex(
        data_dir / VECTORS_FILE, embedder.dimensions, ann_threshold=settings.VECTOR_ANN_THRESHOLD
    )
    clock = clock or SystemClock()
    queue = LocalTaskQueue(db, clock)
    await queue.prepare()
    return Runtime(
        settings=settings,
        db=db,
        vectors=vectors,
        embedder=embedder,
        clock=clock,
        router=Router(settings, http),
        http=HttpxClient(http),
        reranker=remote_reranker(settings, http),
        queue=queue,
        backups=FileBackups(data_dir / BACKUPS_DIR),
        uploads=FileUploads(data_dir / UPLOADS_DIR),
        public_http=public_http_client(),
    )
