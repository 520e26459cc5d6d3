"""The Database port on a local SQLite file (WAL), with D1's limits enforced."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def connect(path: Path | str) -> sqlite3.Connection:
    """Open a connection in autocommit mode; ``batch`` manages its own transactions."""
    connection = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    connection.row_factory = _dict_row
    connection.execute("PRAGMA busy_timeout = 5000")
    if str(path) != ":memory:":
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
    return connection


class SqliteDatabase:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    @classmethod
    def open(cls, path: Path | str) -> SqliteDatabase:
        return cls(connect(path))

    def close(self) -> None:
        self._connection.close()

    async def all(self, sql: str, params: Sequence[SqlValue] = ()) -> list[dict[str, Any]]:
        with _translated():
            return self._execute(sql, params).fetchall()

    async def first(self, sql: str, params: Sequence[SqlValue] = ()) -> dict[str, Any] | None:
        with _translated():
            return self._execute(sql, params).fetchone()

    async def run(self, sql: str, params: Sequence[SqlValue] = ()) -> QueryResult:
        with _translated():
            return self._result(self._execute(sql, params))

    async def batch(self, statements: Sequence[Statement]) -> list[QueryResult]:
        for statement in statements:
            check_parameter_count(statement.params)
        connection = self._connection
        with _translated():
            try:
                connection.execute("BEGIN IMMEDIATE")
                results = [self._result(self._execute(s.sql, s.params)) for s in statements]
                connection.execute("COMMIT")
            except BaseException:  # broad on purpose: undone, then raised again as it was
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        return results

    async def storage_check(self) -> StorageCheck:
        """The full ``integrity_check`` (its first problems, if any) and the file's size in pages."""
        with _translated():
            rows = self._connection.execute(f"PRAGMA integrity_check({REPORTED_PROBLEMS})").fetchall()
            pages = self._connection.execute("PRAGMA page_count").fetchone()["page_count"]
            page_size = self._connection.execute("PRAGMA page_size").fetchone()["page_size"]
        problems = tuple(str(r["integrity_check"]) for r in rows if r["integrity_check"] != "ok")
        return StorageCheck("integrity_check", problems, pages * page_size)

    def _execute(self, sql: str, params: Sequence[SqlValue]) -> sqlite3.Cursor:
        check_parameter_count(params)
        with _translated():
            return self._connection.execute(sql, tuple(params))

    @staticmethod
    def _result(cursor: sqlite3.Cursor) -> QueryResult:
        rows = cursor.fetchall() if cursor.description else []
        changes = cursor.rowcount if cursor.rowcount > 0 else 0
        return QueryResult(rows=rows, changes=changes, last_row_id=cursor.lastrowid)
