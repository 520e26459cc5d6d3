"""The Database port over a Cloudflare D1 binding (``env.DB``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NoReturn

from ...ports import (
    ConstraintError,
    DatabaseError,
    QueryResult,
    SqlValue,
    Statement,
    StorageCheck,
    check_parameter_count,
)
from . import ffi

_SQL_TYPES = (str, int, float, bytes, bytearray, memoryview)


def _raise_translated(error: Exception) -> NoReturn:
    # D1 failures reach Python as JsException("Error: D1_ERROR: <sqlite message>: SQLITE_<CODE>").
    # Anything else the binding throws (a lost connection, a reset isolate) is a failed
    # statement all the same: the port raises DatabaseError and nothing else.
    message = str(error).removeprefix("Error: ")
    if "D1_" in message and "SQLITE_CONSTRAINT" in message:
        raise ConstraintError(message) from error
    if "D1_" not in message:
        message = f"D1: {type(error).__name__}: {message or 'no detail'}"
    raise DatabaseError(message) from error


def _value(value: Any) -> Any:
    # D1 returns BLOBs as JS arrays of byte values; no other SQL value is an array.
    if isinstance(value, list):
        return bytes(value)
    return value


def _row(row: dict[str, Any]) -> dict[str, Any]:
    return {column: _value(value) for column, value in row.items()}


def _rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [_row(row) for row in result.get("results") or []]


# D1 refuses PRAGMA integrity_check and page_count ("not authorized"); quick_check is on its
# list of allowed statements, and every result's meta carries the database's size.
QUICK_CHECK = "PRAGMA quick_check"


def _query_result(result: dict[str, Any]) -> QueryResult:
    meta = result.get("meta") or {}
    last_row_id = meta.get("last_row_id")
    return QueryResult(
        rows=_rows(result),
        changes=int(meta.get("changes") or 0),
        last_row_id=int(last_row_id) if last_row_id is not None else None,
    )


class D1Database:
    """Implements ``ports.Database`` on a D1 binding object (``self.env.DB`` in the Worker)."""

    def __init__(self, binding: Any) -> None:
        self._binding = binding

    def _prepare(self, sql: str, params: Sequence[SqlValue]) -> Any:
        check_parameter_count(params)
        for value in params:
            if value is not None and not isinstance(value, _SQL_TYPES):
                raise TypeError(f"cannot bind {type(value).__name__} to SQL: {value!r}")
        try:
            statement = self._binding.prepare(sql)
            if params:
                statement = statement.bind(*[ffi.to_js(value) for value in params])
        except Exception as error:  # noqa: BLE001 - D1_TYPE_ERROR is raised by bind() itself
            _raise_translated(error)
        return statement

    async def _settle(self, call: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return ffi.to_py(await call())
        except Exception as error:  # noqa: BLE001 - whatever the binding throws is translated to our errors
            _raise_translated(error)

    async def all(self, sql: str, params: Sequence[SqlValue] = ()) -> list[dict[str, Any]]:
        statement = self._prepare(sql, params)
        return _rows(await self._settle(statement.all))

    async def first(self, sql: str, params: Sequence[SqlValue] = ()) -> dict[str, Any] | None:
        statement = self._prepare(sql, params)
        row = await self._settle(statement.first)
        return _row(row) if row is not None else None

    async def run(self, sql: str, params: Sequence[SqlValue] = ()) -> QueryResult:
        statement = self._prepare(sql, params)
        return _query_result(await self._settle(statement.run))

    async def batch(self, statements: Sequence[Statement]) -> list[QueryResult]:
        if not statements:
            return []
        prepared = [self._prepare(s.sql, s.params) for s in statements]
        results = await self._settle(lambda: self._binding.batch(ffi.to_js(prepared)))
        return [_query_result(result) for result in results]

    async def storage_check(self) -> StorageCheck:
        """``quick_check`` (integrity_check without the index-to-table comparison) and
        the size D1 reports after the statement (``meta.size_after``)."""
        result = await self._settle(self._prepare(QUICK_CHECK, ()).all)
        problems = tuple(str(value) for row in _rows(result) for value in row.values() if str(value).lower() != "ok")
        size = (result.get("meta") or {}).get("size_after")
        if size is None:
            return StorageCheck("quick_check", problems, None, "D1 did not report the database size")
        return StorageCheck("quick_check", problems, int(size))
