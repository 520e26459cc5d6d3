"""A fake of the Cloudflare D1 binding (``env.DB``) on an in-memory sqlite3 database.

It reproduces the Worker binding API (workerd ``cloudflare-internal:d1-api``) as a Python
Worker sees it through Pyodide:

- ``prepare(sql)`` → statement; ``bind(*values)`` returns a *new* statement and checks the
  types like D1: numbers, strings, JS null, booleans (stored as 1/0) and byte arrays are
  accepted; ``None`` is what Pyodide sends as JS ``undefined`` and is refused with
  ``D1_TYPE_ERROR``, as are big ints (which Pyodide sends as BigInt) and other objects.
- ``all()`` / ``run()`` → ``D1Result`` ``{results, success, meta}``; ``first(col=None)`` →
  the first row, one column of it, or null; ``raw(columnNames=...)`` → arrays;
  ``batch([...])`` → one ``D1Result`` per statement, all-or-nothing; ``exec(sql)`` runs one
  query per line and returns ``{count, duration}``.
- SQLite's variable limit is set to D1's 100, so oversized statements fail with D1's
  ``too many SQL variables ...: SQLITE_ERROR``.
- Only the PRAGMAs D1 allows run (``quick_check``, ``table_list``, …, see
  ``D1_PRAGMAS``); any other (``integrity_check``, ``page_count``) fails as D1's authorizer
  makes it fail: ``D1_ERROR: not authorized: SQLITE_AUTH``.
- Values come back as JS would hand them over: BLOBs as arrays of byte values, integral
  numbers as ``int`` (JS has one number type), ``null`` as ``ffi.JS_NULL``.

``result_style="jsproxy"`` (default) returns ``FakeJsProxy`` objects needing ``.to_py()``,
whose conversions keep JS null as ``jsnull`` (Pyodide >= 0.28 behaviour);
``result_style="python"`` returns plain dicts/lists with ``None``, as newer ``workers``
SDKs do. Errors are raised as ``FakeJsException`` with D1's message text.
"""

from __future__ import annotations

import copy
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from companion_memory.adapters.cloudflare import ffi
from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.ports import MAX_BOUND_PARAMETERS

MAX_SAFE_INTEGER = 2**53 - 1
# The PRAGMAs D1 runs (developers.cloudflare.com/d1/sql-api/sql-statements), plus
# data_version, which FTS5 issues itself on every query.
D1_PRAGMAS = frozenset(
    {
        "table_list",
        "table_info",
        "table_xinfo",
        "index_list",
        "index_info",
        "index_xinfo",
        "quick_check",
        "foreign_key_check",
        "foreign_key_list",
        "case_sensitive_like",
        "ignore_check_constraints",
        "legacy_alter_table",
        "recursive_triggers",
        "reverse_unordered_selects",
        "foreign_keys",
        "defer_foreign_keys",
        "optimize",
        "data_version",
    }
)
ResultStyle = Literal["jsproxy", "python"]


class _Undefined:
    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()


class FakeJsException(Exception):
    """How a rejected JS promise surfaces in Python (like ``pyodide.ffi.JsException``)."""

    def __init__(self, message: str, name: str = "Error") -> None:
        super().__init__(message)
        self.name = name
        self.message = message

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class FakeJsProxy:
    """A JsProxy of a plain JS object or array: attribute/index access and ``to_py()``."""

    __slots__ = ("_value",)

    def __init__(self, value: dict[str, Any] | list[Any]) -> None:
        self._value = value

    def __getattr__(self, name: str) -> Any:
        value = object.__getattribute__(self, "_value")
        if isinstance(value, dict) and name in value:
            return _wrap(value[name])
        raise AttributeError(name)

    def __getitem__(self, index: int) -> Any:
        if not isinstance(self._value, list):
            raise TypeError("'JsProxy' object is not subscriptable")
        return _wrap(self._value[index])

    def __len__(self) -> int:
        return len(self._value)

    def __iter__(self) -> Iterator[Any]:
        if isinstance(self._value, dict):
            raise TypeError("'JsProxy' object is not iterable")
        return (_wrap(item) for item in self._value)

    def to_py(self) -> Any:
        return copy.deepcopy(self._value)

    def __repr__(self) -> str:
        return f"[object {'Array' if isinstance(self._value, list) else 'Object'}]"


def _wrap(value: Any) -> Any:
    return FakeJsProxy(value) if isinstance(value, (dict, list)) else value


def _type_error(js_type: str, shown: str) -> FakeJsException:
    return FakeJsException(f"D1_TYPE_ERROR: Type '{js_type}' not supported for value '{shown}'")


def _bind_value(value: Any) -> Any:
    """What D1's bind() accepts, seen from Python: returns the value SQLite will get."""
    if ffi.JS_NULL is not None and value is ffi.JS_NULL:
        return None
    if value is None or value is UNDEFINED:
        raise _type_error("undefined", "undefined")
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise _type_error("bigint", str(value))
        return value
    if isinstance(value, float):
        # JS has one number type and D1 ships params as JSON, so 3.0 arrives as 3.
        return int(value) if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER else value
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, list) and all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in value):
        return bytes(value)
    raise _type_error("object", "[object Object]")


def _variable_offset(sql: str, ordinal: int) -> int:
    """Byte offset of the ``ordinal``-th ``?`` outside quotes (for the error text)."""
    seen, quote = 0, ""
    for index, char in enumerate(sql):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == "?":
            seen += 1
            if seen == ordinal:
                return len(sql[:index].encode())
    return 0


def _d1_error(error: sqlite3.Error, sql: str) -> FakeJsException:
    message = str(error)
    if message.startswith("Incorrect number of bindings"):
        return FakeJsException("D1_ERROR: Wrong number of parameter bindings for SQL query.")
    if message == "too many SQL variables":
        message += f" at offset {_variable_offset(sql, MAX_BOUND_PARAMETERS + 1)}"
    name = getattr(error, "sqlite_errorname", None) or "SQLITE_ERROR"
    primary = "_".join(name.split("_")[:2])  # SQLITE_CONSTRAINT_UNIQUE -> SQLITE_CONSTRAINT
    return FakeJsException(f"D1_ERROR: {message}: {primary}")


class FakeD1PreparedStatement:
    def __init__(self, database: FakeD1Database, statement: str, params: tuple[Any, ...] = ()) -> None:
        self._database = database
        self.statement = statement
        self.params = params

    def bind(self, *values: Any) -> FakeD1PreparedStatement:
        return FakeD1PreparedStatement(self._database, self.statement, tuple(_bind_value(value) for value in values))

    async def all(self) -> Any:
        return self._database._out(self._database._result(self.statement, self.params))

    async def run(self) -> Any:
        # run() and all() are aliases in today's D1 (both return rows and meta).
        return await self.all()

    async def first(self, colName: str | None = None) -> Any:
        database = self._database
        rows = database._result(self.statement, self.params)["results"]
        if not rows:
            return database._null
        row = rows[0]
        if colName is None:
            return database._out(row)
        if colName not in row:
            raise FakeJsException(f"D1_COLUMN_NOTFOUND: Column not found ({colName})")
        return database._out(row[colName])

    async def raw(self, options: Any = None, *, columnNames: bool = False) -> Any:
        if isinstance(options, FakeJsProxy):
            options = options.to_py()
        if isinstance(options, dict):
            columnNames = bool(options.get("columnNames", columnNames))
        database = self._database
        columns, rows, _ = database._execute(self.statement, self.params)
        arrays = [[database._js_value(value) for value in row] for row in rows]
        return database._out(([list(columns)] if columnNames else []) + arrays)


class FakeD1Database:
    """The fake ``env.DB``. ``apply_sql`` loads a schema the way a migration file is applied."""

    def __init__(self, *, result_style: ResultStyle = "jsproxy") -> None:
        self.result_style = result_style
        self.connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self.connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, MAX_BOUND_PARAMETERS)
        self.connection.set_authorizer(self._authorize)
        self._measuring = False  # the fake reading its own size for meta.size_after
        self._null = ffi.JS_NULL if result_style == "jsproxy" else None

    def _authorize(self, action: int, name: str | None, *_: str | None) -> int:
        if action == sqlite3.SQLITE_PRAGMA and not self._measuring and (name or "").lower() not in D1_PRAGMAS:
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    # -- the binding API -------------------------------------------------------------
    def prepare(self, query: str) -> FakeD1PreparedStatement:
        return FakeD1PreparedStatement(self, query)

    async def batch(self, statements: Sequence[FakeD1PreparedStatement]) -> Any:
        statements = list(statements)
        if not all(isinstance(s, FakeD1PreparedStatement) for s in statements):
            raise FakeJsException("D1_ERROR: batch() expects an array of prepared statements", "TypeError")
        connection = self.connection
        connection.execute("BEGIN")
        try:
            results = [self._result(s.statement, s.params) for s in statements]
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return self._out(results)

    async def exec(self, query: str) -> Any:
        # D1 sends each line as its own query, so a statement spanning lines fails here too.
        lines = query.strip().split("\n")
        started = time.perf_counter()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                self.connection.executescript(line)
            except sqlite3.Error as error:
                detail = _d1_error(error, line).message.removeprefix("D1_ERROR: ")
                raise FakeJsException(f"D1_EXEC_ERROR: Error in line {number}: {line}: {detail}") from None
        return self._out({"count": len(lines), "duration": (time.perf_counter() - started) * 1000})

    # -- test helpers (not part of D1) ---------------------------------------------------
    def apply_sql(self, script: str) -> None:
        """Run a multi-statement SQL script, as ``wrangler d1 migrations apply`` does."""
        self.connection.executescript(script)

    # -- internals -----------------------------------------------------------------------
    def _js_value(self, value: Any) -> Any:
        if value is None:
            return self._null
        if isinstance(value, bytes):
            return list(value)
        if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
            return int(value)  # Pyodide turns integral JS numbers into int
        if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
            return float(value)
        return value

    def _out(self, value: Any) -> Any:
        if self.result_style == "jsproxy":
            return _wrap(value)
        return copy.deepcopy(value)

    def _execute(self, sql: str, params: tuple[Any, ...]) -> tuple[list[str], list[tuple[Any, ...]], dict[str, Any]]:
        connection = self.connection
        started = time.perf_counter()
        total_before = connection.total_changes
        try:
            cursor = connection.execute(sql, params)
            rows = cursor.fetchall()
        except sqlite3.Error as error:
            raise _d1_error(error, sql) from None
        columns = [description[0] for description in cursor.description or ()]
        changes = cursor.rowcount if cursor.rowcount > 0 else 0
        (last_row_id,) = connection.execute("SELECT last_insert_rowid()").fetchone()
        self._measuring = True
        try:
            (page_count,) = connection.execute("PRAGMA page_count").fetchone()
            (page_size,) = connection.execute("PRAGMA page_size").fetchone()
        finally:
            self._measuring = False
        duration = (time.perf_counter() - started) * 1000
        meta = {
            "served_by": "fake-d1",
            "served_by_region": "LOCAL",
            "served_by_primary": True,
            "timings": {"sql_duration_ms": duration},
            "duration": duration,
            "changes": changes,
            "last_row_id": last_row_id,
            "changed_db": connection.total_changes != total_before,
            "size_after": page_count * page_size,
            "rows_read": len(rows),
            "rows_written": changes,
        }
        return columns, rows, meta

    def _result(self, sql: str, params: tuple[Any, ...]) -> dict[str, Any]:
        columns, rows, meta = self._execute(sql, params)
        results = [{column: self._js_value(value) for column, value in zip(columns, row, strict=False)} for row in rows]
        return {"success": True, "meta": meta, "results": results}


def make_d1_database(*, schema_sql: str | None = None, result_style: ResultStyle = "jsproxy") -> D1Database:
    """A ``D1Database`` adapter over a fresh fake binding, optionally with a schema applied."""
    fake = FakeD1Database(result_style=result_style)
    if schema_sql:
        fake.apply_sql(schema_sql)
    return D1Database(fake)
