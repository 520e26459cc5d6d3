"""The migrator: statement splitting and wrangler-compatible bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations, split_statements
from companion_memory.ports import Database
from companion_memory.store.memories import MemoryStore
from tests.fakes.d1 import make_d1_database


def test_split_respects_quotes_comments_and_trigger_bodies() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (a TEXT DEFAULT 'x;y', "b;c" INT); /* block; comment */
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN
      UPDATE t SET a = CASE WHEN new.a = 'end;' THEN 'e' ELSE 'f' END;
      DELETE FROM t WHERE a = 'z';
    END;
    INSERT INTO t (a) VALUES ('it''s; fine')
    """
    statements = split_statements(script)
    assert len(statements) == 3
    assert statements[0].startswith("CREATE TABLE t") and "'x;y'" in statements[0]
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END")
    assert statements[2] == "INSERT INTO t (a) VALUES ('it''s; fine')"


async def test_migrations_apply_once_with_wrangler_bookkeeping(db: Database) -> None:
    # The db fixture already applied them; a second run applies nothing.
    assert await apply_migrations(db, load_migrations(default_migrations_dir())) == []
    rows = await db.all("SELECT id, name, applied_at FROM d1_migrations")
    assert [r["name"] for r in rows] == [m.name for m in load_migrations(default_migrations_dir())]
    assert rows[0]["name"] == "0001_initial.sql" and rows[0]["applied_at"]


def empty_database(request: pytest.FixtureRequest, kind: str) -> Database:
    """A database with no migration applied yet, of each kind the ``db`` fixture has."""
    if kind == "sqlite":
        return SqliteDatabase.open(":memory:")
    if kind == "d1":
        return make_d1_database()
    return D1Database(request.getfixturevalue("real_d1"))


@pytest.mark.parametrize("kind", ["sqlite", "d1", "d1-real"])
async def test_the_substring_index_takes_in_the_memories_written_before_it(
    request: pytest.FixtureRequest, kind: str
) -> None:
    db = empty_database(request, kind)
    initial, *later = load_migrations(default_migrations_dir())
    await apply_migrations(db, [initial])
    # Written with the first migration's columns, as an older server wrote it.
    await db.run(
        "INSERT INTO memories (id, namespace, type, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        ("m1", "default", "fact", "Locker code ZQW4471K", "2026-11-30T00:00:00.000Z", "2026-11-30T00:00:00.000Z"),
    )
    await apply_migrations(db, later)
    assert [i for i, _ in await MemoryStore(db).substring_search("default", ["qw447"])] == ["m1"]
    await db.run("INSERT INTO memories_substring (memories_substring, rank) VALUES ('integrity-check', 1)")


@pytest.mark.parametrize("kind", ["sqlite", "d1", "d1-real"])
async def test_the_candidates_rebuild_keeps_rows_and_indexes(request: pytest.FixtureRequest, kind: str) -> None:
    db = empty_database(request, kind)
    migrations = load_migrations(default_migrations_dir())
    await apply_migrations(db, migrations[:1])
    at = "2026-11-30T12:00:00.000Z"
    await db.run(
        "INSERT INTO memory_candidates (id, kind, content, evidence, status, created_at, updated_at) "
        "VALUES ('c1', 'update', 'Lives in Lisbon', '[{\"quote\": \"Lisbon\"}]', 'approved', ?, ?)",
        (at, at),
    )
    await apply_migrations(db, migrations)
    row = await db.first("SELECT kind, content, evidence, status, created_at FROM memory_candidates WHERE id = 'c1'")
    assert row == {
        "kind": "update",
        "content": "Lives in Lisbon",
        "evidence": '[{"quote": "Lisbon"}]',
        "status": "approved",
        "created_at": at,
    }
    await db.run(
        "INSERT INTO memory_candidates (id, kind, created_at, updated_at) VALUES ('c2', 'contradiction', ?, ?)",
        (at, at),
    )
    indexes = await db.all("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memory_candidates'")
    assert {"memory_candidates_status", "memory_candidates_target"} <= {r["name"] for r in indexes}


def test_wrangler_toml_names_the_same_migrations_folder() -> None:
    root = Path(__file__).resolve().parents[2]
    toml = (root / "wrangler.toml").read_text(encoding="utf-8")
    assert 'migrations_dir = "migrations"' in toml
    assert default_migrations_dir().resolve() == (root / "migrations").resolve()
