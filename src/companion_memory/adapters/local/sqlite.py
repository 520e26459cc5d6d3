"""The Database port on a local SQLite file (WAL), with D1's limits enforced, off the event loop.

Every statement runs on a thread of this adapter's, never on the event loop. On the loop,
one long read held every other request for as long as it took: a second client's recall
(29 ms idle) took 540 ms while others read the star map's 2,000 nodes, and a second
during health reports (issue 28). So:

- Writes (``batch``, and ``run`` of anything but a query) go to one writer thread with
  the one connection that writes: SQLite has one writer at a time anyway, and one
  connection keeps ``batch``'s BEGIN…COMMIT its own.
- Queries go to ``READERS`` reader threads, each with a connection of its own (sqlite3
  connections stay on the thread that opened them), which WAL lets read while the writer
  writes: each statement reads the last commit as it was when the statement started, so
  a query awaited after a write sees that write. A reader's connection is ``query_only``,
  so a write sent there by mistake fails instead of racing the writer.
- An in-memory database lives in one connection: there, one thread runs everything.

sqlite3 lets go of the GIL while SQLite works, so a long query on a reader leaves the
loop free to serve the others; only turning rows into dicts holds it.
"""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ...ports import (
    ConstraintError,
    DatabaseError,
    QueryResult,
    SqlValue,
    Statement,
    StorageCheck,
    check_parameter_count,
)

# integrity_check stops after this many problems: enough to say what is wrong.
REPORTED_PROBLEMS = 20
# Reader threads (and connections). A heavy read holds one for as long as it runs; the
# application lets few of those run at once (application/heavy_reads.py), so the rest
# are free for the short queries of every other request.
READERS = 4
BUSY_TIMEOUT_SECONDS = 5.0
# The statements a reader may run: queries (a write after WITH fails there, query_only).
_QUERIES = frozenset({"SELECT", "WITH", "VALUES", "EXPLAIN"})

T = TypeVar("T")
_Job = tuple[Callable[[sqlite3.Connection], Any], "Future[Any]"]


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> dict[str, Any]:
    return {column[0]: value for column, value in zip(cursor.description, row, strict=False)}


@contextmanager
def _translated() -> Iterator[None]:
    """sqlite3's errors as the port's: a step or a fetch can fail as well as the
    statement (a locked file at COMMIT, a full disk mid-query)."""
    try:
        yield
    except sqlite3.IntegrityError as error:
        raise ConstraintError(str(error)) from error
    except sqlite3.Error as error:
        raise DatabaseError(str(error)) from error


def connect(
    path: Path | str, *, busy_timeout: float = BUSY_TIMEOUT_SECONDS, reader: bool = False
) -> sqlite3.Connection:
    """Open a connection in autocommit mode (``batch`` manages its own transactions),
    for the thread that calls this only."""
    connection = sqlite3.connect(str(path), isolation_level=None)
    connection.row_factory = _dict_row
    connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
    if reader:
        connection.execute("PRAGMA query_only = ON")
    elif str(path) != ":memory:":
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
    return connection


def _serve(
    open_connection: Callable[[], sqlite3.Connection], jobs: queue.SimpleQueue[_Job | None], opened: Future[None]
) -> None:
    """A thread of a lane: its own connection, then jobs until told to stop."""
    try:
        connection = open_connection()
    except BaseException as error:  # noqa: BLE001 - the opener hears of it, whatever it is
        opened.set_exception(error)
        return
    opened.set_result(None)
    try:
        while (job := jobs.get()) is not None:
            work, future = job
            if not future.set_running_or_notify_cancel():
                continue  # its caller gave up before it started
            try:
                result = work(connection)
            except BaseException as error:  # noqa: BLE001 - the caller hears of it, whatever it is
                future.set_exception(error)
            else:
                future.set_result(result)
    finally:
        connection.close()


def _stop(jobs: queue.SimpleQueue[_Job | None], threads: list[threading.Thread]) -> None:
    for _ in threads:
        jobs.put(None)
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join()
    # What came in as it closed would wait for ever: its callers hear why instead.
    while True:
        try:
            job = jobs.get_nowait()
        except queue.Empty:
            return
        if job is not None and job[1].set_running_or_notify_cancel():
            job[1].set_exception(DatabaseError("the database is closed"))


class _Lane:
    """Threads taking jobs from one queue, each with a connection of its own."""

    def __init__(self, name: str, open_connection: Callable[[], sqlite3.Connection], threads: int) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        opened: list[Future[None]] = []
        self._threads: list[threading.Thread] = []
        for number in range(threads):
            opened.append(Future())
            thread = threading.Thread(
                target=_serve, args=(open_connection, self._jobs, opened[-1]), name=f"{name}-{number}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        # The threads hold the queue, not the lane: when the lane goes unclosed, they stop.
        self._finalizer = weakref.finalize(self, _stop, self._jobs, self._threads)
        try:
            for future in opened:
                future.result()
        except BaseException:  # broad on purpose: the threads that did start stop, then it is raised again
            self.close()
            raise

    def close(self) -> None:
        self._finalizer()

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if not self._finalizer.alive:
            raise DatabaseError("the database is closed")
        future: Future[T] = Future()
        self._jobs.put((work, future))
        return await asyncio.wrap_future(future)


def _reads(sql: str) -> bool:
    words = sql.split(None, 1)
    return bool(words) and words[0].upper() in _QUERIES


def _execute(connection: sqlite3.Connection, sql: str, params: Sequence[SqlValue]) -> sqlite3.Cursor:
    with _translated():
        return connection.execute(sql, tuple(params))


def _result(cursor: sqlite3.Cursor) -> QueryResult:
    rows = cursor.fetchall() if cursor.description else []
    changes = cursor.rowcount if cursor.rowcount > 0 else 0
    return QueryResult(rows=rows, changes=changes, last_row_id=cursor.lastrowid)


def _fetch_all(sql: str, params: Sequence[SqlValue]) -> Callable[[sqlite3.Connection], list[dict[str, Any]]]:
    def work(connection: sqlite3.Connection) -> list[dict[str, Any]]:
        with _translated():
            return _execute(connection, sql, params).fetchall()

    return work


def _fetch_first(sql: str, params: Sequence[SqlValue]) -> Callable[[sqlite3.Connection], dict[str, Any] | None]:
    def work(connection: sqlite3.Connection) -> dict[str, Any] | None:
        with _translated():
            cursor = _execute(connection, sql, params)
            try:
                return cursor.fetchone()
            finally:
                cursor.close()  # ends its read at once: an open one would keep the WAL from being checkpointed

    return work


def _run(sql: str, params: Sequence[SqlValue]) -> Callable[[sqlite3.Connection], QueryResult]:
    def work(connection: sqlite3.Connection) -> QueryResult:
        with _translated():
            return _result(_execute(connection, sql, params))

    return work


def _batch(statements: Sequence[Statement]) -> Callable[[sqlite3.Connection], list[QueryResult]]:
    def work(connection: sqlite3.Connection) -> list[QueryResult]:
        with _translated():
            try:
                connection.execute("BEGIN IMMEDIATE")
                results = [_result(_execute(connection, s.sql, s.params)) for s in statements]
                connection.execute("COMMIT")
            except BaseException:  # broad on purpose: undone, then raised again as it was
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        return results

    return work


def _storage_check(connection: sqlite3.Connection) -> StorageCheck:
    with _translated():
        rows = connection.execute(f"PRAGMA integrity_check({REPORTED_PROBLEMS})").fetchall()
        pages = connection.execute("PRAGMA page_count").fetchone()["page_count"]
        page_size = connection.execute("PRAGMA page_size").fetchone()["page_size"]
    problems = tuple(str(r["integrity_check"]) for r in rows if r["integrity_check"] != "ok")
    return StorageCheck("integrity_check", problems, pages * page_size)


class SqliteDatabase:
    def __init__(self, path: Path | str, *, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> None:
        self.path = str(path)
        self._writer = _Lane("sqlite-writer", lambda: connect(path, busy_timeout=busy_timeout), 1)
        if self.path == ":memory:":
            self._readers = self._writer
        else:
            try:
                self._readers = _Lane(
                    "sqlite-reader", lambda: connect(path, busy_timeout=busy_timeout, reader=True), READERS
                )
            except BaseException:  # broad on purpose: the writer stops too, then it is raised again
                self._writer.close()
                raise

    @classmethod
    def open(cls, path: Path | str, *, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> SqliteDatabase:
        """The database at ``path`` (``:memory:``: a new empty one); ``busy_timeout`` is
        how long a statement waits for a lock another process holds."""
        with _translated():
            return cls(path, busy_timeout=busy_timeout)

    def close(self) -> None:
        """Stop the threads; each closes its connection."""
        self._readers.close()
        self._writer.close()

    async def all(self, sql: str, params: Sequence[SqlValue] = ()) -> list[dict[str, Any]]:
        check_parameter_count(params)
        return await self._lane(sql).run(_fetch_all(sql, params))

    async def first(self, sql: str, params: Sequence[SqlValue] = ()) -> dict[str, Any] | None:
        check_parameter_count(params)
        return await self._lane(sql).run(_fetch_first(sql, params))

    async def run(self, sql: str, params: Sequence[SqlValue] = ()) -> QueryResult:
        check_parameter_count(params)
        return await self._lane(sql).run(_run(sql, params))

    async def batch(self, statements: Sequence[Statement]) -> list[QueryResult]:
        for statement in statements:
            check_parameter_count(statement.params)
        return await self._writer.run(_batch(list(statements)))

    async def storage_check(self) -> StorageCheck:
        """The full ``integrity_check`` (its first problems, if any) and the file's size in pages."""
        return await self._readers.run(_storage_check)

    def _lane(self, sql: str) -> _Lane:
        return self._readers if _reads(sql) else self._writer
