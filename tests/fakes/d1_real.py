"""The real D1 engine (workerd's D1, in Miniflare) as a drop-in for ``FakeD1Database``.

``tools/cloudflare/d1-bridge.mjs`` serves Miniflare's ``env.DB`` over loopback HTTP;
``RealD1Database`` forwards every ``prepare/bind/all/run/first/raw/batch/exec`` to it. Values
cross as Pyodide would convert them: Python ``None`` is JS ``undefined``, ``ffi.JS_NULL`` is
``null``, ints from 2^53 - 1 on are BigInts, bytes are a ``Uint8Array``; on the way back JS
``null`` is ``jsnull`` (or ``None`` with ``result_style="python"``), unsafe integers are
floats, and a rejected promise raises ``FakeJsException`` with the engine's own message.

``bind`` only records the values: the engine checks them when the statement runs, so a
``D1_TYPE_ERROR`` surfaces from the awaited call instead of from ``bind`` itself (the D1
adapter translates both the same way).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import math
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from companion_memory.adapters.cloudflare import ffi
from companion_memory.migrations import MIGRATIONS_TABLE_DDL, Migration, split_statements
from companion_memory.ports import Statement
from tests.cloudflare_tools import TOOLS, require_toolchain, tool_env
from tests.fakes.d1 import LARGEST_NUMBER_INT, MAX_SAFE_INTEGER, UNDEFINED, FakeJsException, ResultStyle, _wrap

KEEP_ALIVE_SECONDS = 1.0


def _to_wire(value: Any) -> Any:
    """A Python value as Pyodide's ``to_js`` hands it to JS, in the bridge's JSON."""
    if ffi.JS_NULL is not None and value is ffi.JS_NULL:
        return None
    if value is None or value is UNDEFINED:
        return {"$undefined": True}
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) <= LARGEST_NUMBER_INT else {"$bigint": str(value)}
    if isinstance(value, float):
        return (
            value if math.isfinite(value) else {"$number": str(value).replace("inf", "Infinity").replace("nan", "NaN")}
        )
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$blob": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, (list, tuple)):
        return [_to_wire(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _to_wire(item) for key, item in value.items()}
    return {}  # any other Python object reaches JS as an opaque proxy: an object to D1


def _statements(statements: Sequence[Statement]) -> list[dict[str, Any]]:
    return [{"sql": s.sql, "params": [_to_wire(p) for p in s.params]} for s in statements]


class MiniflareD1:
    """One bridge process (Miniflare + workerd), started once per test session."""

    def __init__(self) -> None:
        node = require_toolchain()
        # stdin stays open: the bridge exits when it closes, so a killed test run leaves no workerd.
        self.process = subprocess.Popen(
            [str(node), str(TOOLS / "d1-bridge.mjs")],
            cwd=TOOLS,
            env=tool_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            _, stderr = self.process.communicate(timeout=10)
            raise RuntimeError(f"the D1 bridge did not start: {stderr.decode(errors='replace')[-2000:]}")
        ready = json.loads(line)
        self.pid = int(ready["pid"])
        address = urlsplit(ready["url"])
        self._address = (address.hostname or "127.0.0.1", address.port)
        self._open: http.client.HTTPConnection | None = None
        self._idle_since = 0.0

    def call(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        connection = self._connection()
        try:
            body = json.dumps(payload or {})
            connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            text = response.read()
        except BaseException:
            self._drop()
            raise
        self._idle_since = time.monotonic()
        if response.status != 200:
            raise RuntimeError(f"the D1 bridge answered {response.status}: {text[:500]!r}")
        answer = json.loads(text)
        if "error" in answer:
            error = answer["error"]
            raise FakeJsException(error["message"], error["name"])
        return answer["value"]

    def _connection(self) -> http.client.HTTPConnection:
        # Kept alive while the calls come back to back (a new connection per call costs
        # workerd and us more than many a statement); workerd closes one that sat idle
        # (after more than 6 s, measured), and a call is never retried (it may have run),
        # so one idle for a second is replaced before it is used.
        if self._open is not None and time.monotonic() - self._idle_since > KEEP_ALIVE_SECONDS:
            self._drop()
        if self._open is None:
            self._open = http.client.HTTPConnection(*self._address, timeout=60)
        return self._open

    def _drop(self) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None

    def reset(self, setup: Sequence[Statement] = ()) -> None:
        """Drop every table, view and trigger and run ``setup``, in one batch: the next test
        starts from an empty database (or one ``setup`` built)."""
        self.call("/reset", {"statements": _statements(setup)})

    def fresh(self, setup: Sequence[Statement]) -> None:
        """The database ``setup`` builds from empty, with no rows written since: as ``reset``,
        but when the schema is unchanged only the rows are deleted (DDL is slow on workerd)."""
        self.call("/fresh", {"statements": _statements(setup)})

    def stop(self) -> None:
        self._drop()
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self.process.wait()


class RealD1PreparedStatement:
    def __init__(self, database: RealD1Database, statement: str, params: list[Any] | None = None) -> None:
        self._database = database
        self.statement = statement
        self.params = params

    def bind(self, *values: Any) -> RealD1PreparedStatement:
        return RealD1PreparedStatement(self._database, self.statement, [_to_wire(value) for value in values])

    def _wire(self) -> dict[str, Any]:
        return {"sql": self.statement, "params": self.params}

    async def all(self) -> Any:
        return self._database._call("all", [self])

    async def run(self) -> Any:
        return self._database._call("run", [self])

    async def first(self, colName: str | None = None) -> Any:
        return self._database._call("first", [self], colName=colName)

    async def raw(self, options: Any = None, *, columnNames: bool = False) -> Any:
        plain = options.to_py() if hasattr(options, "to_py") else options
        wire = _to_wire(plain) if isinstance(plain, dict) else {"columnNames": columnNames}
        return self._database._call("raw", [self], options=wire)


class RealD1Database:
    """``env.DB`` on the real engine; same surface as ``FakeD1Database``."""

    def __init__(self, bridge: MiniflareD1, *, result_style: ResultStyle = "jsproxy") -> None:
        self.bridge = bridge
        self.result_style = result_style
        self._null = ffi.JS_NULL if result_style == "jsproxy" else None

    def prepare(self, query: str) -> RealD1PreparedStatement:
        return RealD1PreparedStatement(self, query)

    async def batch(self, statements: Sequence[RealD1PreparedStatement]) -> Any:
        return self._call("batch", list(statements))

    async def exec(self, query: str) -> Any:
        return self._out(self.bridge.call("/", {"op": "exec", "sql": query}))

    def apply_sql(self, script: str) -> None:
        """Run a multi-statement SQL script in one batch, as ``wrangler d1 migrations apply`` does."""
        self.bridge.call(
            "/", {"op": "batch", "statements": [{"sql": s, "params": None} for s in split_statements(script)]}
        )

    def _call(self, op: str, statements: list[RealD1PreparedStatement], **extra: Any) -> Any:
        return self._out(self.bridge.call("/", {"op": op, "statements": [s._wire() for s in statements], **extra}))

    def _from_wire(self, value: Any) -> Any:
        if value is None:
            return self._null
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
            return float(value)  # a JS number beyond 2^53 reaches Python as a float
        if isinstance(value, list):
            return [self._from_wire(item) for item in value]
        if isinstance(value, dict):
            if value.keys() == {"$undefined"}:
                return None
            return {key: self._from_wire(item) for key, item in value.items()}
        return value

    def _out(self, value: Any) -> Any:
        converted = self._from_wire(value)
        return _wrap(converted) if self.result_style == "jsproxy" else converted


def migration_statements(migrations: Sequence[Migration]) -> list[Statement]:
    """What ``apply_migrations`` runs on an empty database, as one list of statements: the
    real-D1 tier rebuilds the migrated schema for each test in one round trip."""
    statements = [Statement(MIGRATIONS_TABLE_DDL)]
    for migration in migrations:
        statements += [Statement(sql) for sql in split_statements(migration.sql)]
        statements.append(Statement("INSERT INTO d1_migrations (name) VALUES (?)", (migration.name,)))
    return statements
