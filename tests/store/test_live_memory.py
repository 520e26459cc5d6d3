"""A "live memory" is declared once (domain/memory.LIVE): the Python predicate that recall,
sharing and the vector index apply to rows, and the SQL the stores filter with, agree on
every status a memory row can hold."""

from __future__ import annotations

import itertools

from companion_memory.domain.memory import Memory, is_live
from companion_memory.runtime import Runtime
from companion_memory.store.memories import MemoryStore
from companion_memory.store.sql import live_sql

STATUSES = ("active", "superseded", "archived", "expired", "deleted")
VERSIONS = ("current", "historical")


async def test_the_sql_and_the_python_predicates_agree(runtime: Runtime) -> None:
    rows = [
        Memory(
            id=f"{status}-{version}",
            namespace="default",
            type="note",
            content=f"a {status} {version} memory",
            status=status,
            version_status=version,
            created_at="2026-01-01T00:00:00Z",
            updated_at="2026-01-01T00:00:00Z",
        )
        for status, version in itertools.product(STATUSES, VERSIONS)
    ]
    await runtime.db.batch([MemoryStore.insert(m) for m in rows])
    found = await runtime.db.all(f"SELECT id FROM memories WHERE {live_sql()}")
    assert {r["id"] for r in found} == {m.id for m in rows if is_live(m)} == {"active-current"}
    aliased = await runtime.db.all(f"SELECT m.id AS id FROM memories m WHERE NOT ({live_sql('m')})")
    assert {r["id"] for r in aliased} == {m.id for m in rows if not is_live(m)}
    assert await MemoryStore(runtime.db).count_live() == 1
