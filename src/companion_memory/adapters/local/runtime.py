"""Builds the local Runtime: SQLite database, SQLite-backed vector index, bundled embedder."""

from __future__ import annotations

from pathlib import Path

from ...clock import SystemClock
from ...migrations import apply_migrations, default_migrations_dir, load_migrations
from ...ports import Clock, Embedder
from ...runtime import Runtime
from ...settings import LOCAL_DEFAULT_EMBEDDING_MODEL, Settings
from .embedder import load_embedder
from .sqlite import SqliteDatabase
from .vector_index import LocalVectorIndex

DATABASE_FILE = "companion-memory.sqlite3"
VECTORS_FILE = "vectors.sqlite3"


async def build_local_runtime(
    settings: Settings, data_dir: Path, *, embedder: Embedder | None = None, clock: Clock | None = None
) -> Runtime:
    """Open (and migrate) the data dir. The vector index catches up in the background
    when it is new or was built for another embedder."""
    data_dir.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase.open(data_dir / DATABASE_FILE)
    await apply_migrations(db, load_migrations(default_migrations_dir()))
    embedder = embedder or load_embedder(settings.embedding_model(LOCAL_DEFAULT_EMBEDDING_MODEL))
    vectors = LocalVectorIndex(data_dir / VECTORS_FILE, embedder.dimensions, embedder.model)
    return Runtime(settings=settings, db=db, vectors=vectors, embedder=embedder, clock=clock or SystemClock())
