"""One error family (``errors.py``): its shape, the adapters translating their library's
failures into the errors their port declares, and the rule that a broad ``except`` says
why it is broad."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from companion_memory import errors, ports
from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.adapters.cloudflare.queue import CloudflareQueue
from companion_memory.adapters.cloudflare.vectorize import VectorizeError, VectorizeIndex
from companion_memory.adapters.local.sqlite import SqliteDatabase
from companion_memory.adapters.local.vector_index import DimensionMismatch, LocalVectorIndex
from companion_memory.adapters.model_io import ModelAPIError
from companion_memory.adapters.workers_ai_format import WorkersAIError
from companion_memory.api.mcp.jsonrpc import INVALID_PARAMS, RpcError
from companion_memory.ports import Statement, VectorRecord
from tests.fakes.d1 import FakeD1Database, FakeJsException
from tests.fakes.queues import MAX_MESSAGE_BYTES, FakeQueue
from tests.fakes.vectorize import FakeVectorize

SRC = Path(__file__).resolve().parents[2] / "src" / "companion_memory"


def test_the_family_has_one_root_and_two_branches() -> None:
    service = (
        errors.InvalidInput,
        errors.NotFound,
        errors.Conflict,
        errors.SensitiveContent,
        errors.PermissionDenied,
        errors.Unauthenticated,
    )
    infrastructure = (
        errors.DatabaseError,
        errors.ConstraintError,
        errors.VectorIndexError,
        VectorizeError,
        DimensionMismatch,
        errors.ModelError,
        ModelAPIError,
        WorkersAIError,
        errors.TaskQueueError,
        errors.HttpUnanswered,
        errors.UpstreamError,
    )
    assert all(issubclass(cls, errors.ServiceError) for cls in service)
    assert all(issubclass(cls, errors.InfrastructureError) for cls in infrastructure)
    assert not issubclass(errors.InfrastructureError, errors.ServiceError)
    for cls in (errors.ServiceError, errors.InfrastructureError, RpcError):
        assert issubclass(cls, errors.CompanionError)
    assert issubclass(errors.ConstraintError, errors.DatabaseError)
    assert issubclass(DimensionMismatch, ValueError)  # as before it joined the family
    # The ports re-export the very classes (adapters import them from there).
    assert ports.DatabaseError is errors.DatabaseError and ports.UpstreamError is errors.UpstreamError
    assert ports.HttpUnanswered is errors.HttpUnanswered


def test_every_member_carries_its_message() -> None:
    assert errors.NotFound("no such memory").message == "no such memory"
    assert errors.DatabaseError("locked").message == "locked"
    upstream = errors.UpstreamError("slow", status=504, code="upstream_timeout")
    assert (upstream.message, upstream.status, upstream.code) == ("slow", 504, "upstream_timeout")
    model = ModelAPIError("refused", status=422)
    assert (model.message, model.status) == ("refused", 422)
    # The message first, its code by name, for every ServiceError, an OAuth refusal too.
    refused = errors.OAuthError("the access token expired", code="invalid_token", status=401)
    assert (refused.message, refused.code, refused.status) == ("the access token expired", "invalid_token", 401)
    assert errors.Conflict("taken", code="fact_key_taken").code == "fact_key_taken"
    rpc = RpcError(INVALID_PARAMS, "Invalid params: x", {"x": 1})
    assert (rpc.code, rpc.message, rpc.data, str(rpc)) == (INVALID_PARAMS, "Invalid params: x", {"x": 1}, rpc.message)


class Throwing:
    """A binding whose every call throws ``error``, as a JsProxy may (not only our codes)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        async def call(*_: Any) -> Any:
            raise self.error

        return call


async def test_d1_failures_outside_its_codes_are_database_errors_too() -> None:
    binding = FakeD1Database()
    db = D1Database(binding)
    lost = FakeJsException("Network connection lost.")

    def prepare(_: str) -> Any:
        raise lost

    binding.prepare = prepare  # type: ignore[method-assign]
    with pytest.raises(errors.DatabaseError, match=r"^D1: FakeJsException: Network connection lost\.$") as caught:
        await db.all("SELECT 1")
    assert caught.value.__cause__ is lost and not isinstance(caught.value, errors.ConstraintError)


async def test_vectorize_failures_outside_its_codes_are_index_errors_too() -> None:
    index = VectorizeIndex(Throwing(FakeJsException("Network connection lost.")), dimensions=4)
    with pytest.raises(VectorizeError, match=r"^Vectorize: FakeJsException: Network connection lost") as caught:
        await index.query([1.0, 0.0, 0.0, 0.0], top_k=1)
    assert isinstance(caught.value, errors.VectorIndexError)
    for call in (index.count(), index.get(["a"]), index.delete(["a"])):
        with pytest.raises(errors.VectorIndexError):
            await call
    # Its own codes keep their text, as before.
    index = VectorizeIndex(FakeVectorize(8), dimensions=4)
    with pytest.raises(VectorizeError, match=r"^VECTOR_UPSERT_ERROR \(code = 40012\)"):
        await index.upsert([VectorRecord("x", [1.0, 0.0, 0.0, 0.0])])


async def test_the_queue_binding_failures_are_task_queue_errors() -> None:
    queue = CloudflareQueue(FakeQueue())
    with pytest.raises(errors.TaskQueueError, match="message too large") as caught:
        await queue.send({"task": "x", "pad": "x" * MAX_MESSAGE_BYTES})
    assert isinstance(caught.value.__cause__, FakeJsException)
    with pytest.raises(errors.TaskQueueError, match="message too large"):
        await queue.send_batch([{"task": "x", "pad": "x" * MAX_MESSAGE_BYTES}])
    await queue.send({"task": "vector_mirror"})  # and a good one still goes


async def test_a_locked_sqlite_file_is_a_database_error(tmp_path: Path) -> None:
    db = SqliteDatabase.open(tmp_path / "db.sqlite3", busy_timeout=0)
    await db.run("CREATE TABLE t (x INTEGER)")
    blocker = sqlite3.connect(tmp_path / "db.sqlite3", timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")
    # BEGIN IMMEDIATE fails before any statement runs: once a bare sqlite3 error.
    with pytest.raises(errors.DatabaseError, match="locked") as caught:
        await db.batch([Statement("INSERT INTO t VALUES (1)")])
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    assert await db.all("SELECT * FROM t") == []  # WAL: readers go on meanwhile
    blocker.rollback()
    blocker.close()
    await db.batch([Statement("INSERT INTO t VALUES (1)")])
    assert await db.all("SELECT x FROM t") == [{"x": 1}]


async def test_the_local_index_file_failing_is_an_index_error(tmp_path: Path) -> None:
    index = LocalVectorIndex(tmp_path / "vectors.sqlite3", 2)
    await index.upsert([VectorRecord("a", [1.0, 0.0])])
    with pytest.raises(DimensionMismatch):
        await index.upsert([VectorRecord("b", [1.0, 0.0, 0.0])])
    index.close()
    with pytest.raises(errors.VectorIndexError, match="ProgrammingError") as caught:
        await index.upsert([VectorRecord("b", [0.0, 1.0])])
    assert isinstance(caught.value.__cause__, sqlite3.Error)
    with pytest.raises(errors.VectorIndexError):
        await index.delete(["a"])
    assert [m.id for m in await index.query([1.0, 0.0], top_k=5)] == ["a"]  # memory: as before the failures


async def test_a_failed_local_index_write_leaves_no_transaction_open(tmp_path: Path) -> None:
    index = LocalVectorIndex(tmp_path / "vectors.sqlite3", 2)
    blocker = sqlite3.connect(tmp_path / "vectors.sqlite3", timeout=0)
    blocker.execute("BEGIN EXCLUSIVE")
    index._file._db.execute("PRAGMA busy_timeout = 0")
    with pytest.raises(errors.VectorIndexError, match="locked"):
        await index.upsert([VectorRecord("a", [1.0, 0.0])])
    blocker.rollback()
    blocker.close()
    await index.upsert([VectorRecord("a", [1.0, 0.0])])  # the next write is not stuck in a transaction
    assert await index.count() == 1


# A broad except is allowed where nothing narrower can be promised (a JsProxy, a
# consumer's crash, the last line before a bare 500); it then says why. ruff's BLE001
# catches the silent ones; the ones that log or re-raise it lets through, so this does.
_BROAD = re.compile(r"except (Exception|BaseException)\b")
_REASON = re.compile(r"#\s*(noqa: BLE001 - |broad on purpose: )\S")


def test_every_broad_except_says_why() -> None:
    unexplained = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted(SRC.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _BROAD.search(line) and not _REASON.search(line)
    ]
    assert unexplained == []
