"""The local index's metadata filter stays right as vectors are added, changed and
removed (its filter columns are kept in step, not rebuilt after each write)."""

from __future__ import annotations

from companion_memory.adapters.local.vector_index import LocalVectorIndex
from companion_memory.ports import VectorRecord


async def test_the_filter_follows_every_change() -> None:
    index = LocalVectorIndex(":memory:", 2)

    async def active() -> set[str]:
        return {m.id for m in await index.query([1.0, 0.0], top_k=500, filter={"status": "active"})}

    def record(id_: str, status: str) -> VectorRecord:
        return VectorRecord(id_, [1.0, 0.0], {"namespace": "default", "status": status})

    await index.upsert([record("a", "active"), record("b", "archived")])
    assert await active() == {"a"}  # the column is built here, then kept in step
    # Past the first allocation (64 rows): the columns grow with the storage.
    await index.upsert([record(f"n{i}", "active" if i % 2 else "archived") for i in range(100)])
    expected = {"a"} | {f"n{i}" for i in range(100) if i % 2}
    assert await active() == expected
    await index.upsert([record("a", "archived"), record("b", "active")])
    await index.delete(["n1", "n0"])  # a hole filled by the last row
    assert await active() == (expected - {"a", "n1"}) | {"b"}
