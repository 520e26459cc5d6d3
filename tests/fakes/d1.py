"""A fake of the Cloudflare D1 binding (``env.DB``) on an in-memory sqlite3 database.

It reproduces the Worker binding API (workerd ``cloudflare-internal:d1-api``) as a Python
Worker sees it through Pyodide:

- ``prepare(sql)`` → statement; ``bind(*values)`` returns a *new* statement and checks the
  types like D1: numbers, strings, JS null, booleans (stored as 1/0) and byte arrays are
  accepted; ``None`` is what Pyodide sends as JS ``undefined`` and is refused with
  ``D1_TYPE_ERROR``, as are ints from 2^53 - 1 on (which Pyodide sends as BigInt) and other objects.
- ``all()`` / ``run()`` → ``D1Result`` ``{results, success, meta}``; ``first(col=None)`` →
  the first row, one column of it, or null; ``raw(columnNames=...)`` → arrays;
  ``batch([...])`` → one ``D1Result`` per statement, all-or-nothing; ``exec(sql)`` runs one
  query per line and returns ``{count, duration}``.
- D1's limits, set with ``setlimit``: 100 bound variables (``too many SQL variables ...:
  SQLITE_ERROR``), 100,000 bytes of SQL (``statement too long: SQLITE_TOOBIG``), 2,000,000
  bytes per string or BLOB (``string or blob too big: SQLITE_TOOBIG``), 100 columns.
- D1's authorizer: only the PRAGMAs D1 allows run (``quick_check``, ``table_list``, …, see
  ``D1_PRAGMAS``; ``page_size`` read-only), and ATTACH, temp tables and temp virtual tables
  fail as ``D1_ERROR: not authorized: SQLITE_AUTH``; ``sqlite_version()`` is refused;
  BEGIN/COMMIT/SAVEPOINT get the Durable Object's "use the transaction() API" error. Every
  query runs in its own transaction, as on D1, so VACUUM fails.
- What D1 does differently from plain SQLite: foreign keys are enforced; ``prepare`` of
  several statements runs them all (atomically) and returns the last one's rows (only the
  last may have parameters); an empty
  statement or batch is ``No SQL statements detected.``; ``exec`` is all-or-nothing;
  constraint errors carry ``(extended: SQLITE_CONSTRAINT_UNIQUE)``; errors SQLite can place
  carry ``at offset N``; NaN and infinities are bound as NULL (D1 ships params as JSON).
- Values come back as JS would hand them over: BLOBs as arrays of byte values, integral
  numbers as ``int`` (JS has one number type), ``null`` as ``ffi.JS_NULL``.

``result_style="jsproxy"`` (default) returns ``FakeJsProxy`` objects needing ``.to_py()``,
whose conversions keep JS null as ``jsnull`` (Pyodide >= 0.28 behaviour);
``result_style="python"`` returns plain dicts/lists with ``None``, as newer ``workers``
SDKs do. Errors are raised as ``FakeJsException`` with D1's message text.
"""

from __future__ import annotations

import contextlib
import copy
import math
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from companion_memory.adapters.cloudflare import ffi
from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.migrations import split_statements
from companion_memory.ports import MAX_BOUND_PARAMETERS

MAX_SAFE_INTEGER = 2**53 - 1
# Pyodide 0.28 hands a Python int to JS as a Number only below MAX_SAFE_INTEGER in size;
# from 2^53 - 1 on it is a BigInt (measured), which D1 refuses.
LARGEST_NUMBER_INT = 2**53 - 2
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
# D1's limits (developers.cloudflare.com/d1/platform/limits), as workerd sets them.
MAX_SQL_BYTES = 100_000
MAX_VALUE_BYTES = 2_000_000
MAX_COLUMNS = 100
NO_STATEMENTS = "D1_ERROR: No SQL statements detected."
MULTI_STATEMENT_PARAMETERS = (
    "D1_ERROR: When executing multiple SQL statements in a single call, only the last statement can have parameters."
)
# What the Durable Object under D1 answers to SQL transaction statements.
TRANSACTION_REFUSED = (
    "To execute a transaction, please use the state.storage.transaction() or "
    "state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT "
    "statements. The JavaScript API is safer because it will automatically roll back on "
    "exceptions, and because it interacts correctly with Durable Objects' automatic atomic "
    "write coalescing."
)
_REFUSED_FUNCTIONS = frozenset({"sqlite_version"})
_TEMP_CREATES = frozenset(
    {
        sqlite3.SQLITE_CREATE_TEMP_INDEX,
        sqlite3.SQLITE_CREATE_TEMP_TABLE,
        sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
        sqlite3.SQLITE_CREATE_TEMP_VIEW,
    }
)


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
        if abs(value) > LARGEST_NUMBER_INT:
            raise _type_error("bigint", str(value))
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None  # JSON has no NaN or Infinity: D1 receives null
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


def _token_offset(sql: str, token: str) -> int:
    """Where SQLite would point for an error about ``token``: its first occurrence as a word
    (Python's sqlite3 does not expose ``sqlite3_error_offset``, which D1 reports)."""
    match = re.search(rf"(?<![\w$]){re.escape(token)}(?![\w$])", sql, re.IGNORECASE)
    return len(sql[: match.start()].encode()) if match else 0


def _with_offset(message: str, sql: str) -> str:
    if message == "too many SQL variables":
        return f"{message} at offset {_variable_offset(sql, MAX_BOUND_PARAMETERS + 1)}"
    located = re.fullmatch(
        r'near "(.+)": syntax error|no such column: (.+)|not authorized to use function: (.+)', message
    )
    if located:
        token = next(group for group in located.groups() if group)
        return f"{message} at offset {_token_offset(sql, token.split('.')[-1])}"
    return message


def _d1_error(error: sqlite3.Error, sql: str, refusal: str | None = None) -> FakeJsException:
    message = str(error)
    if refusal:
        return FakeJsException(f"D1_ERROR: {refusal}")
    if message.startswith("Incorrect number of bindings"):
        return FakeJsException("D1_ERROR: Wrong number of parameter bindings for SQL query.")
    if message == "query string is too large":  # Python's own check of SQLITE_LIMIT_SQL_LENGTH
        return FakeJsException("D1_ERROR: statement too long: SQLITE_TOOBIG")
    name = getattr(error, "sqlite_errorname", None) or "SQLITE_ERROR"
    primary = "_".join(name.split("_")[:2])  # SQLITE_CONSTRAINT_UNIQUE -> SQLITE_CONSTRAINT
    suffix = f" (extended: {name})" if name != primary else ""
    return FakeJsException(f"D1_ERROR: {_with_offset(message, sql)}: {primary}{suffix}")


def _placeholders(sql: str) -> int:
    """How many ``?`` a statement binds (outside quotes)."""
    count, quote = 0, ""
    for char in sql:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char == "?":
            count += 1
    return count


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
        connection = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        connection.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, MAX_BOUND_PARAMETERS)
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_COLUMN, MAX_COLUMNS)
        connection.execute("PRAGMA foreign_keys = ON")
        connection.set_authorizer(self._authorize)
        self.connection = connection
        self._internal = False  # the fake's own transactions and size readings
        self._refusal: str | None = None  # why the authorizer refused, when SQLite cannot say
        self._null = ffi.JS_NULL if result_style == "jsproxy" else None

    def _authorize(
        self, action: int, name: str | None, detail: str | None, database: str | None, *_: str | None
    ) -> int:
        if self._internal:
            return sqlite3.SQLITE_OK
        refused = False
        if action == sqlite3.SQLITE_PRAGMA:
            pragma = (name or "").lower()
            refused = pragma not in D1_PRAGMAS and not (pragma == "page_size" and detail is None)
        elif action in (sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT):
            self._refusal = TRANSACTION_REFUSED
            refused = True
        elif action == sqlite3.SQLITE_FUNCTION:
            refused = (detail or "").lower() in _REFUSED_FUNCTIONS
        elif action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH) or action in _TEMP_CREATES:
            refused = True
        elif action == sqlite3.SQLITE_CREATE_VTABLE:
            refused = database == "temp"
        return sqlite3.SQLITE_DENY if refused else sqlite3.SQLITE_OK

    def _own(self, sql: str) -> Any:
        # Marked: sqlite3 caches prepared statements by their text, and the authorizer only
        # sees a statement when it is prepared, so the fake's own must never be the user's.
        self._internal = True
        try:
            return self.connection.execute(f"{sql} -- fake-d1")
        finally:
            self._internal = False

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """All of it or none of it, as each D1 query, batch and exec is; nested ones join."""
        if self.connection.in_transaction:
            yield
            return
        self._own("BEGIN")
        try:
            yield
        except BaseException:
            self._own("ROLLBACK")
            raise
        self._own("COMMIT")

    # -- the binding API -------------------------------------------------------------
    def prepare(self, query: str) -> FakeD1PreparedStatement:
        return FakeD1PreparedStatement(self, query)

    async def batch(self, statements: Sequence[FakeD1PreparedStatement]) -> Any:
        statements = list(statements)
        if not all(isinstance(s, FakeD1PreparedStatement) for s in statements):
            raise FakeJsException("D1_ERROR: batch() expects an array of prepared statements", "TypeError")
        if not statements:
            raise FakeJsException(NO_STATEMENTS)
        with self._transaction():
            results = [self._result(s.statement, s.params) for s in statements]
        return self._out(results)

    async def exec(self, query: str) -> Any:
        # D1 sends each line as its own query, so a statement spanning lines fails here too.
        lines = query.strip().split("\n")
        started = time.perf_counter()
        with self._transaction():
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    self._execute(line, ())
                except FakeJsException as error:
                    detail = error.message.removeprefix("D1_ERROR: ")
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

    def _statements(self, sql: str, params: tuple[Any, ...]) -> list[tuple[str, tuple[Any, ...]]]:
        """D1 runs every statement of a query; only the last may take the bindings."""
        body = sql.strip().rstrip(";")
        if ";" not in body and "--" not in body and "/*" not in body:
            return [(sql, params)] if body else []
        statements = split_statements(sql)
        if any(_placeholders(statement) for statement in statements[:-1]):
            raise FakeJsException(MULTI_STATEMENT_PARAMETERS)
        return [
            (statement, params if index == len(statements) - 1 else ()) for index, statement in enumerate(statements)
        ]

    def _execute(self, sql: str, params: tuple[Any, ...]) -> tuple[list[str], list[tuple[Any, ...]], dict[str, Any]]:
        connection = self.connection
        started = time.perf_counter()
        total_before = connection.total_changes
        statements = self._statements(sql, params)
        if not statements:
            raise FakeJsException(NO_STATEMENTS)
        changes = 0
        with self._transaction():
            for statement, bound in statements:
                self._refusal = None
                try:
                    cursor = connection.execute(statement, bound)
                    rows = cursor.fetchall()
                except sqlite3.Error as error:
                    raise _d1_error(error, statement, self._refusal) from None
                changes += max(cursor.rowcount, 0)
        columns = [description[0] for description in cursor.description or ()]
        (last_row_id,) = self._own("SELECT last_insert_rowid()").fetchone()
        (page_count,) = self._own("PRAGMA page_count").fetchone()
        (page_size,) = self._own("PRAGMA page_size").fetchone()
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
