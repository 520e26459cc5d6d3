"""Fixtures: every service test runs on the local SQLite adapter and on the D1 adapter,
over the fake D1 binding and over the real D1 engine (``d1-real``: Miniflare's workerd).

Embedders: ``embedder`` is a deterministic hashing embedder (``tests/fakes/embedder.py``)
that knows words, not meaning, and costs next to nothing. Tests about meaning (paraphrases
in English and Chinese find the right memory, what counts as unrelated) carry
``@pytest.mark.embedding_quality``: their ``runtime`` (and ``client``) then runs on the real
bundled embedder; a live server that needs it takes ``real_embedder``."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from companion_memory.adapters.chat.routing import Router
from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.adapters.local.vector_index import DEFAULT_ANN_THRESHOLD, LocalVectorIndex
from companion_memory.adapters.remote.http_client import HttpxClient, upstream_timeout
from companion_memory.api.app import create_app
from companion_memory.clock import FixedClock
from companion_memory.migrations import default_migrations_dir, load_migrations
from companion_memory.ports import Database, Embedder, EmbeddingKind, VectorIndexError, VectorMatch, VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.fakes.d1 import make_d1_database
from tests.fakes.d1_real import MiniflareD1, RealD1Database, migration_statements
from tests.fakes.embedder import HashEmbedder
from tests.upstreams import RecordingUpstream

# The bundled embedder builds its int8 graph once (some seconds) where it is told: every test
# process and the servers they start (which inherit the environment) share one, kept
# between runs (its name says which weights and recipe it holds).
MODEL_DIR = os.environ.setdefault(
    "EMBEDDER_MODEL_DIR", os.path.join(tempfile.gettempdir(), "companion-memory-tests", "models")
)

OWNER_KEY = "test-owner-key"
MCP_KEY = "test-mcp-key"
IM_KEY = "test-im-key"
DEBUG_KEY = "test-debug-key"
GUIDE_DOG_KEY = "test-guide-dog-key"


EMBEDDING_QUALITY = "embedding_quality"

# Single tests that take a process for many seconds (Pyodide; wrangler starting Miniflare once
# per migration). Run first: worksteal hands out the end of the collection last, and one of
# them there kept a worker busy while the others had finished.
LONG_FIRST = ("test_pyodide_tier.py", "test_wrangler_migrations.py")


# What the ``db`` fixture runs on, and the tests parametrized by database kind besides it.
DATABASES = ("sqlite", "d1", "d1-real")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--db",
        action="append",
        choices=DATABASES,
        help="run the tests that take a database on this one only (repeatable; default: all of them). "
        "`--db sqlite` is the fast tier's, which starts no Miniflare",
    )


def on_databases(item: pytest.Item) -> set[str]:
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec else ()
    kinds = {value for value in params if isinstance(value, str) and value in DATABASES}
    if {"d1_bridge", "real_d1"} & set(getattr(item, "fixturenames", ())):
        kinds.add("d1-real")
    return kinds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name not in LONG_FIRST)
    chosen = config.getoption("--db")
    if chosen:
        left_out = set(DATABASES) - set(chosen)
        kept: list[pytest.Item] = []
        deselected: list[pytest.Item] = []
        for item in items:
            (deselected if on_databases(item) & left_out else kept).append(item)
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.fixture(scope="session")
def embedder() -> HashEmbedder:
    """The deterministic fake: words, not meaning (``tests/fakes/embedder.py``)."""
    return HashEmbedder(dimensions=384, model="test-words")


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """The bundled multilingual-e5-small, loaded on first use only."""
    from companion_memory.adapters.local.embedder import BundledEmbedder

    return BundledEmbedder(models=Path(MODEL_DIR))


class RememberedEmbedder:
    """An embedder that computes each (kind, text) once per test process. The
    ``embedding_quality`` tests run once per database (SQLite, fake D1, real D1) on the same
    texts, and what the model answers for a text does not depend on the database: the real
    model's time went three times into the same vectors."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self.similarity_range = inner.similarity_range
        self._vectors: dict[tuple[str, str], list[float]] = {}

    async def embed(self, texts: Sequence[str], *, kind: EmbeddingKind) -> list[list[float]]:
        missing = list(dict.fromkeys(text for text in texts if (kind, text) not in self._vectors))
        if missing:
            for text, vector in zip(missing, await self.inner.embed(missing, kind=kind), strict=True):
                self._vectors[(kind, text)] = vector
        return [list(self._vectors[(kind, text)]) for text in texts]


@pytest.fixture(scope="session")
def remembered_real_embedder(real_embedder: Embedder) -> RememberedEmbedder:
    return RememberedEmbedder(real_embedder)


@pytest.fixture
def runtime_embedder(request: pytest.FixtureRequest, embedder: HashEmbedder) -> Embedder:
    """The embedder of ``runtime`` and ``vectors``: the real one for tests marked
    ``embedding_quality`` (each text's vectors computed once per process), the fake one
    otherwise."""
    if request.node.get_closest_marker(EMBEDDING_QUALITY):
        real: Embedder = request.getfixturevalue("remembered_real_embedder")
        return real
    return embedder


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))


def all_keys_settings() -> Settings:
    """Settings with every key profile configured, each with its test key."""
    return Settings(
        CHATBOX_API_KEY=OWNER_KEY,
        MEMORY_MCP_API_KEY=MCP_KEY,
        IM_API_KEY=IM_KEY,
        DEBUG_API_KEY=DEBUG_KEY,
        GUIDE_DOG_API_KEY=GUIDE_DOG_KEY,
    )


@pytest.fixture
def settings() -> Settings:
    return all_keys_settings()


@pytest.fixture(scope="session")
def d1_bridge() -> Iterator[MiniflareD1]:
    """The real D1 engine (Miniflare/workerd), one per test process, stopped by its PID."""
    bridge = MiniflareD1()
    try:
        yield bridge
    finally:
        bridge.stop()


@pytest.fixture
def real_d1(d1_bridge: MiniflareD1) -> RealD1Database:
    """``env.DB`` on the real engine, emptied for this test."""
    d1_bridge.reset()
    return RealD1Database(d1_bridge)


# The migrator's statements, split once per process and replayed in one batch (test_migrations
# runs the migrator itself, on each kind of database).
_MIGRATED = migration_statements(load_migrations(default_migrations_dir()))


@pytest.fixture(params=DATABASES)
async def db(request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    """The local SQLite adapter, then the D1 adapter on the in-process fake and on the real
    engine."""
    if request.param == "sqlite":
        yield await migrated_sqlite()
    elif request.param == "d1":
        database = make_d1_database()
        await database.batch(_MIGRATED)
        yield database
    else:
        bridge: MiniflareD1 = request.getfixturevalue("d1_bridge")
        bridge.fresh(_MIGRATED)
        yield D1Database(RealD1Database(bridge))


_sqlite_image: bytes | None = None


async def migrated_sqlite() -> SqliteDatabase:
    """A new in-memory database, migrated: the first of a process by the statements, the
    others loaded from its image (half a millisecond instead of twelve). An in-memory
    database lives in the adapter's one writer connection."""
    global _sqlite_image
    database = SqliteDatabase.open(":memory:")
    if _sqlite_image is None:
        await database.batch(_MIGRATED)
        _sqlite_image = await database._writer.run(lambda connection: connection.serialize())
    else:
        image = _sqlite_image
        await database._writer.run(lambda connection: connection.deserialize(image))
    return database


class FlakyIndex:
    """The local index, with an outage switch: while ``down``, every call fails as the
    port says an index fails (the services catch exactly that)."""

    def __init__(self, inner: LocalVectorIndex) -> None:
        self.inner = inner
        self.dimensions = inner.dimensions
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise VectorIndexError("vector index unavailable")

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        self._check()
        await self.inner.upsert(records)

    async def query(self, vector: Sequence[float], *, top_k: int, filter=None) -> list[VectorMatch]:  # type: ignore[no-untyped-def]
        self._check()
        return await self.inner.query(vector, top_k=top_k, filter=filter)

    async def get(self, ids: Sequence[str]) -> list[VectorRecord]:
        self._check()
        return await self.inner.get(ids)

    async def delete(self, ids: Sequence[str]) -> None:
        self._check()
        await self.inner.delete(ids)

    async def count(self) -> int:
        return await self.inner.count()


@pytest.fixture
def vectors(runtime_embedder: Embedder) -> FlakyIndex:
    # TEST_VECTOR_ANN_THRESHOLD=0 runs the services' tests through the HNSW graph.
    threshold = int(os.environ.get("TEST_VECTOR_ANN_THRESHOLD", DEFAULT_ANN_THRESHOLD))
    return FlakyIndex(LocalVectorIndex(":memory:", runtime_embedder.dimensions, ann_threshold=threshold))


# Shared by the tests' clients for calls out: a client that makes its own spends 30 ms
# on it, and most tests call out nowhere.
_TLS = httpx.create_ssl_context()


def outbound(settings: Settings) -> tuple[Router, HttpxClient]:
    """A runtime's router and HTTP client over one new client, as the local runtime has them."""
    http = httpx.AsyncClient(timeout=upstream_timeout(settings), verify=_TLS)
    return Router(settings, http), HttpxClient(http)


@pytest.fixture
def runtime(
    settings: Settings, db: Database, vectors: FlakyIndex, runtime_embedder: Embedder, clock: FixedClock
) -> Runtime:
    router, http = outbound(settings)
    return Runtime(
        settings=settings, db=db, vectors=vectors, embedder=runtime_embedder, clock=clock, router=router, http=http
    )


_shared_app: FastAPI | None = None


def app_on(runtime: Runtime) -> FastAPI:
    """``create_app(runtime)``, but one app object for the in-process tests of a process, each
    test's runtime swapped in: FastAPI builds every route's state (dependencies, validation
    models) on an app's first request, 30 ms or more of CPU for each test otherwise. The app
    keeps nothing else of a test; should it ever keep more, each test gets a new app again.
    Not for two apps on different runtimes at once."""
    global _shared_app
    if _shared_app is None or set(_shared_app.state._state) != {"runtime"}:
        _shared_app = create_app(runtime)
    _shared_app.state.runtime = runtime
    return _shared_app


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app_on(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


def auth(key: str = OWNER_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# The nightly job's steps, in the order it runs them (the local scheduler, the CLI and the
# Worker's cron run the same job).
NIGHTLY_STEPS = (
    "dream",
    "retention",
    "plans",
    "layers",
    "consolidate",
    "people",
    "github_daily",
    "weekly_rollup",
    "monthly_rollup",
    "imports",
    "vector_mirror",
    "night_dreams",
)


@pytest.fixture
def upstream() -> Iterator[RecordingUpstream]:
    """A local server speaking the providers' wire formats, recording what it was sent."""
    with RecordingUpstream() as fake:
        yield fake


@pytest.fixture
def dreaming(runtime: Runtime, upstream: RecordingUpstream) -> Runtime:
    """The runtime with DREAM_MODEL answered by ``upstream`` (the router reads the new
    settings; services built on the model are made again on first use)."""
    runtime.settings = runtime.settings.model_copy(
        update={"CHAT_BASE_URL": upstream.url + "/v1", "DREAM_MODEL": "dreamer"}
    )
    runtime.router, runtime.http = outbound(runtime.settings)
    for cached in ("dream", "backfill", "dream_model", "rollups", "gateway", "recall", "folding", "night_dreams"):
        runtime.__dict__.pop(cached, None)
    return runtime
