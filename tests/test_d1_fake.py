"""Fidelity of the D1 fake, and the D1 adapter exercised through the Database port."""

from __future__ import annotations

import re

import pytest

from companion_memory.adapters.cloudflare import ffi
from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.ports import ConstraintError, DatabaseError, QueryResult, Statement
from tests.fakes.d1 import (
    UNDEFINED,
    FakeD1Database,
    FakeJsException,
    FakeJsProxy,
    make_d1_database,
)

pytestmark = pytest.mark.asyncio

SCHEMA = """
CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, score REAL, blob BLOB, note TEXT);
"""


@pytest.fixture
def fake() -> FakeD1Database:
    database = FakeD1Database()
    database.apply_sql(SCHEMA)
    return database


# -- the fake -------------------------------------------------------------------------


async def test_run_result_shape(fake: FakeD1Database) -> None:
    result = await fake.prepare("INSERT INTO items (name, score) VALUES (?, ?)").bind("a", 1.5).run()
    assert isinstance(result, FakeJsProxy)
    assert result.success is True
    assert result.meta.changes == 1
    assert result.meta.last_row_id == 1
    assert result.meta.changed_db is True
    py = result.to_py()
    assert py["results"] == []
    assert set(py["meta"]) >= {
        "duration",
        "changes",
        "last_row_id",
        "changed_db",
        "size_after",
        "rows_read",
        "rows_written",
    }


async def test_all_returns_rows_as_objects(fake: FakeD1Database) -> None:
    await fake.prepare("INSERT INTO items (name, score) VALUES (?, ?), (?, ?)").bind("a", 1.5, "b", 2.0).run()
    result = await fake.prepare("SELECT name, score FROM items ORDER BY id").all()
    assert result.to_py()["results"] == [{"name": "a", "score": 1.5}, {"name": "b", "score": 2}]
    assert result.meta.changes == 0 and result.meta.changed_db is False
    # run() is an alias of all(): it returns rows too
    assert (await fake.prepare("SELECT name FROM items ORDER BY id").run()).to_py()["results"][0] == {"name": "a"}


async def test_first_variants(fake: FakeD1Database) -> None:
    await fake.prepare("INSERT INTO items (name, note) VALUES (?, ?)").bind("a", ffi.JS_NULL).run()
    row = await fake.prepare("SELECT name, note FROM items").first()
    assert row.to_py() == {"name": "a", "note": ffi.JS_NULL}  # to_py keeps JS null as jsnull
    assert await fake.prepare("SELECT name FROM items").first("name") == "a"
    assert await fake.prepare("SELECT note FROM items").first("note") is ffi.JS_NULL
    assert await fake.prepare("SELECT * FROM items WHERE name = ?").bind("zz").first() is ffi.JS_NULL
    assert await fake.prepare("SELECT * FROM items WHERE name = ?").bind("zz").first("name") is ffi.JS_NULL
    with pytest.raises(FakeJsException, match=r"D1_COLUMN_NOTFOUND: Column not found \(nope\)"):
        await fake.prepare("SELECT name FROM items").first("nope")


async def test_raw_with_and_without_column_names(fake: FakeD1Database) -> None:
    await fake.prepare("INSERT INTO items (name, score) VALUES (?, ?)").bind("a", 2.5).run()
    statement = fake.prepare("SELECT name, score FROM items")
    assert (await statement.raw()).to_py() == [["a", 2.5]]
    assert (await statement.raw(columnNames=True)).to_py() == [["name", "score"], ["a", 2.5]]
    assert (await statement.raw({"columnNames": True})).to_py()[0] == ["name", "score"]
    empty = fake.prepare("SELECT name FROM items WHERE 0")
    assert (await empty.raw(columnNames=True)).to_py() == [["name"]]


async def test_bind_returns_new_statement_and_converts_types(fake: FakeD1Database) -> None:
    base = fake.prepare("SELECT ? AS a, ? AS b, ? AS c, ? AS d")
    bound = base.bind(True, False, 3.0, b"\x00\xff")
    assert bound is not base and base.params == ()
    assert (await bound.first()).to_py() == {"a": 1, "b": 0, "c": 3, "d": [0, 255]}


async def test_bind_refuses_undefined_and_unsupported_types(fake: FakeD1Database) -> None:
    statement = fake.prepare("SELECT ?")
    for value in (None, UNDEFINED):
        with pytest.raises(FakeJsException, match="D1_TYPE_ERROR: Type 'undefined' not supported"):
            statement.bind(value)
    with pytest.raises(FakeJsException, match="D1_TYPE_ERROR: Type 'object'"):
        statement.bind({"a": 1})
    with pytest.raises(FakeJsException, match="D1_TYPE_ERROR: Type 'bigint'"):
        statement.bind(2**60)


async def test_null_round_trip(fake: FakeD1Database) -> None:
    await fake.prepare("INSERT INTO items (name, note) VALUES (?, ?)").bind("n", ffi.JS_NULL).run()
    (note,) = await fake.prepare("SELECT note FROM items").raw()
    assert note.to_py() == [ffi.JS_NULL]


async def test_parameter_limit_error_text(fake: FakeD1Database) -> None:
    placeholders = ", ".join("?" * 101)
    statement = fake.prepare(f"SELECT * FROM items WHERE id IN ({placeholders})").bind(*range(101))
    with pytest.raises(FakeJsException) as info:
        await statement.all()
    assert re.fullmatch(r"D1_ERROR: too many SQL variables at offset \d+: SQLITE_ERROR", info.value.message)
    assert str(info.value).startswith("Error: D1_ERROR:")  # how JsException prints
    hundred = ", ".join("?" * 100)
    assert (await fake.prepare(f"SELECT * FROM items WHERE id IN ({hundred})").bind(*range(100)).all()).success


async def test_wrong_number_of_bindings(fake: FakeD1Database) -> None:
    with pytest.raises(FakeJsException, match=r"D1_ERROR: Wrong number of parameter bindings for SQL query\."):
        await fake.prepare("SELECT ?").bind(1, 2).all()


async def test_sql_error_style(fake: FakeD1Database) -> None:
    await fake.prepare("INSERT INTO items (name) VALUES (?)").bind("a").run()
    with pytest.raises(FakeJsException) as info:
        await fake.prepare("INSERT INTO items (name) VALUES (?)").bind("a").run()
    assert info.value.message == "D1_ERROR: UNIQUE constraint failed: items.name: SQLITE_CONSTRAINT"
    with pytest.raises(FakeJsException) as info:
        await fake.prepare("SELECT * FROM nope").all()
    assert info.value.message == "D1_ERROR: no such table: nope: SQLITE_ERROR"


async def test_batch_returns_one_result_per_statement(fake: FakeD1Database) -> None:
    insert = fake.prepare("INSERT INTO items (name) VALUES (?)")
    results = await fake.batch([insert.bind("a"), insert.bind("b"), fake.prepare("SELECT count(*) AS n FROM items")])
    py = results.to_py()
    assert [r["meta"]["last_row_id"] for r in py[:2]] == [1, 2]
    assert py[2]["results"] == [{"n": 2}]


async def test_batch_is_atomic(fake: FakeD1Database) -> None:
    insert = fake.prepare("INSERT INTO items (name) VALUES (?)")
    with pytest.raises(FakeJsException, match="UNIQUE constraint failed"):
        await fake.batch([insert.bind("a"), insert.bind("b"), insert.bind("a")])
    assert await fake.prepare("SELECT count(*) AS n FROM items").first("n") == 0
    assert not fake.connection.in_transaction


async def test_exec_runs_one_query_per_line(fake: FakeD1Database) -> None:
    result = await fake.exec("INSERT INTO items (name) VALUES ('x');\nINSERT INTO items (name) VALUES ('y');")
    assert result.count == 2
    with pytest.raises(FakeJsException) as info:
        await fake.exec("CREATE TABLE t (\n  id INTEGER\n)")
    assert info.value.message.startswith("D1_EXEC_ERROR: Error in line 1: CREATE TABLE t (: ")


async def test_only_the_pragmas_d1_allows_run(fake: FakeD1Database) -> None:
    for refused in ("PRAGMA integrity_check", "PRAGMA page_count", "PRAGMA journal_mode = WAL"):
        with pytest.raises(FakeJsException, match=r"^Error: D1_ERROR: not authorized: SQLITE_AUTH$"):
            await fake.prepare(refused).all()
    checked = (await fake.prepare("PRAGMA quick_check").all()).to_py()
    assert checked["results"] == [{"quick_check": "ok"}] and checked["meta"]["size_after"] > 0
    assert [t["name"] for t in (await fake.prepare("PRAGMA table_list").all()).to_py()["results"]].count("items") == 1


async def test_python_result_style_gives_plain_values() -> None:
    fake = FakeD1Database(result_style="python")
    result = await fake.prepare("SELECT NULL AS a, 1 AS b").all()
    assert isinstance(result, dict) and result["results"] == [{"a": None, "b": 1}]
    assert await fake.prepare("SELECT 1 WHERE 0").first() is None


# -- ffi --------------------------------------------------------------------------------


async def test_ffi_conversions() -> None:
    assert ffi.to_js(None) is ffi.JS_NULL
    assert ffi.to_js({"a": None, "b": [None, 1]}) == {"a": ffi.JS_NULL, "b": [ffi.JS_NULL, 1]}
    assert ffi.to_js(bytearray(b"ab")) == b"ab"
    assert ffi.to_js("s") == "s" and ffi.to_js(2) == 2
    assert ffi.to_py(ffi.JS_NULL) is None
    assert ffi.to_py(FakeJsProxy({"a": ffi.JS_NULL, "b": [ffi.JS_NULL]})) == {"a": None, "b": [None]}
    assert ffi.to_py({"x": 1}) == {"x": 1}


# -- the adapter through the port ---------------------------------------------------------


@pytest.fixture(params=["jsproxy", "python"])
def db(request: pytest.FixtureRequest) -> D1Database:
    return make_d1_database(schema_sql=SCHEMA, result_style=request.param)


async def test_adapter_run_all_first(db: D1Database) -> None:
    result = await db.run(
        "INSERT INTO items (name, score, blob, note) VALUES (?, ?, ?, ?)", ("a", 0.25, b"\x01\x02", None)
    )
    assert result == QueryResult(rows=[], changes=1, last_row_id=1)
    second = await db.run("INSERT INTO items (name, note) VALUES (?, ?)", ["b", "hi"])
    assert second.last_row_id == 2
    rows = await db.all("SELECT name, score, blob, note FROM items ORDER BY id")
    assert rows == [
        {"name": "a", "score": 0.25, "blob": b"\x01\x02", "note": None},
        {"name": "b", "score": None, "blob": None, "note": "hi"},
    ]
    assert await db.first("SELECT name FROM items WHERE id = ?", (2,)) == {"name": "b"}
    assert await db.first("SELECT name FROM items WHERE id = ?", (99,)) is None
    updated = await db.run("UPDATE items SET note = ? WHERE id > ?", (None, 0))
    assert updated.changes == 2
    assert await db.all("SELECT note FROM items WHERE note IS NULL") == [{"note": None}, {"note": None}]


async def test_adapter_run_returning_rows(db: D1Database) -> None:
    result = await db.run("INSERT INTO items (name) VALUES (?) RETURNING id, name", ("r",))
    assert result.rows == [{"id": 1, "name": "r"}] and result.changes == 1


async def test_adapter_batch(db: D1Database) -> None:
    results = await db.batch(
        [
            Statement("INSERT INTO items (name) VALUES (?)", ("a",)),
            Statement("INSERT INTO items (name) VALUES (?)", ("b",)),
            Statement("SELECT count(*) AS n FROM items"),
        ]
    )
    assert [r.last_row_id for r in results[:2]] == [1, 2]
    assert [r.changes for r in results] == [1, 1, 0]
    assert results[2].rows == [{"n": 2}]
    assert await db.batch([]) == []


async def test_adapter_batch_rolls_back_and_raises_constraint_error(db: D1Database) -> None:
    with pytest.raises(ConstraintError, match="UNIQUE constraint failed"):
        await db.batch(
            [
                Statement("INSERT INTO items (name) VALUES (?)", ("a",)),
                Statement("INSERT INTO items (name) VALUES (?)", ("a",)),
            ]
        )
    assert await db.all("SELECT * FROM items") == []


async def test_adapter_parameter_limit(db: D1Database) -> None:
    ids = list(range(101))
    with pytest.raises(DatabaseError, match="at most 100"):
        await db.all(f"SELECT * FROM items WHERE id IN ({', '.join('?' * 101)})", ids)
    with pytest.raises(DatabaseError, match="at most 100"):
        await db.batch([Statement(f"SELECT {', '.join('?' * 101)}", tuple(ids))])
    assert await db.all(f"SELECT * FROM items WHERE id IN ({', '.join('?' * 100)})", ids[:100]) == []


async def test_adapter_translates_sql_errors(db: D1Database) -> None:
    with pytest.raises(DatabaseError, match=r"D1_ERROR: no such table: nope: SQLITE_ERROR") as info:
        await db.all("SELECT * FROM nope")
    assert not isinstance(info.value, ConstraintError)
    with pytest.raises(TypeError):
        await db.run("SELECT ?", ({"not": "sql"},))  # type: ignore[arg-type]


async def test_adapter_storage_check_runs_what_d1_allows(db: D1Database) -> None:
    check = await db.storage_check()
    assert check.check == "quick_check" and check.problems == () and check.size_bytes and check.size_bytes > 0
