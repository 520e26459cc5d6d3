"""The local database works off the event loop: a long statement holds one of the
adapter's threads, not the loop, so another request's short query goes on meanwhile.

The long statement calls ``hold()``, a SQL function that returns only once the test lets
it: the statement is in progress until then, however fast or slow the machine. On a
blocked loop the test could never let it, so ``hold()`` gives up after ``HOLD_LIMIT``
seconds and the test fails on the order of events instead of hanging."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from companion_memory.adapters.local import sqlite as local_sqlite
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.ports import DatabaseError, Statement

HOLD_LIMIT = 5.0


class Hold:
    def __init__(self) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()

    def __call__(self) -> int:
        self.entered.set()
        self.released.wait(HOLD_LIMIT)
        return 2


@pytest.fixture
def hold(monkeypatch: pytest.MonkeyPatch) -> Hold:
    """``hold()`` on every connection the adapter opens."""
    held = Hold()
    connect = local_sqlite.connect

    def with_hold(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection = connect(*args, **kwargs)
        connection.create_function("hold", 0, held)
        return connection

    monkeypatch.setattr(local_sqlite, "connect", with_hold)
    return held


async def table(path: Path) -> SqliteDatabase:
    db = SqliteDatabase.open(path)
    await db.run("CREATE TABLE t (x INTEGER)")
    await db.batch([Statement("INSERT INTO t VALUES (1)")])
    return db


async def test_a_long_read_leaves_the_loop_to_a_short_query(tmp_path: Path, hold: Hold) -> None:
    db = await table(tmp_path / "db.sqlite3")
    finished: list[str] = []

    async def long_read() -> None:
        assert await db.all("SELECT hold() AS held, x FROM t") == [{"held": 2, "x": 1}]
        finished.append("long read")

    reading = asyncio.create_task(long_read())
    await asyncio.to_thread(hold.entered.wait, HOLD_LIMIT)
    assert await db.first("SELECT COUNT(*) AS n FROM t") == {"n": 1}
    finished.append("short query")
    hold.released.set()
    await reading
    assert finished == ["short query", "long read"]
    db.close()


async def test_a_long_write_leaves_readers_the_last_commit(tmp_path: Path, hold: Hold) -> None:
    db = await table(tmp_path / "db.sqlite3")
    finished: list[str] = []

    async def long_write() -> None:
        await db.batch([Statement("INSERT INTO t SELECT hold()")])
        finished.append("long write")

    writing = asyncio.create_task(long_write())
    await asyncio.to_thread(hold.entered.wait, HOLD_LIMIT)
    # WAL: a reader sees the last commit while the write is under way, and does not wait for it.
    assert await db.all("SELECT x FROM t") == [{"x": 1}]
    finished.append("read")
    hold.released.set()
    await writing
    assert finished == ["read", "long write"]
    assert await db.all("SELECT x FROM t ORDER BY x") == [{"x": 1}, {"x": 2}]  # and a read after it sees it
    db.close()


async def test_a_write_sent_as_a_query_is_refused_not_raced(tmp_path: Path) -> None:
    """Queries go to reader connections, which may not write: a write that reads like a
    query fails where it would otherwise race the writer."""
    db = await table(tmp_path / "db.sqlite3")
    with pytest.raises(DatabaseError, match="readonly"):
        await db.all("WITH v AS (SELECT 5 AS x) INSERT INTO t SELECT x FROM v RETURNING x")
    assert await db.all("SELECT x FROM t") == [{"x": 1}]
    db.close()


async def test_closing_stops_the_threads(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    databases = [await table(tmp_path / "db.sqlite3"), SqliteDatabase.open(":memory:")]
    started = set(threading.enumerate()) - before
    assert started  # a writer and readers for the file, one thread for the memory
    for db in databases:
        db.close()
    assert not [thread for thread in started if thread.is_alive()]
    with pytest.raises(DatabaseError, match="closed"):  # and a closed database says so, it does not hang
        await databases[0].all("SELECT x FROM t")
