"""Fidelity of the D1 fake: each test runs on the fake and on the real engine (workerd's D1 in
Miniflare) and they must agree, except for the Miniflare-only quirks named where they apply.
Then the D1 adapter exercised through the Database port, on both."""

from __future__ import annotations

import re

import pytest

from companion_memory.adapters.cloudflare import ffi
from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.ports import ConstraintError, DatabaseError, QueryResult, Statement
from tests.fakes.d1 import (
    MAX_COLUMNS,
    MAX_SQL_BYTES,
    MAX_VALUE_BYTES,
    TRANSACTION_REFUSED,
    UNDEFINED,
    FakeD1Database,
    FakeJsException,
    FakeJsProxy,
    ResultStyle,
)
from tests.fakes.d1_real import RealD1Database

pytestmark = pytest.mark.asyncio

SCHEMA = """
CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, score REAL, blob BLOB, note TEXT);
"""


Binding = FakeD1Database | RealD1Database


def _binding(request: pytest.FixtureRequest, kind: str, result_style: ResultStyle = "jsproxy") -> Binding:
    binding: Binding
    if kind == "fake":
        binding = FakeD1Database(result_style=result_style)
    else:
        binding = RealD1Database(request.getfixturevalue("real_d1").bridge, result_style=result_style)
    binding.apply_sql(SCHEMA)
    return binding


@pytest.fixture(params=["fake", "real"])
def fake(request: pytest.FixtureRequest) -> Binding:
    """The fake binding, then the real one: the same test must pass on both."""
    return _binding(request, request.param)


def is_real(binding: Binding) -> bool:
    return isinstance(binding, RealD1Database)


async def fails(call: object) -> str:
    """The message of the JS error an awaited binding call raises."""
    with pytest.raises(FakeJsException) as info:
        await call  # type: ignore[misc]
    return info.value.message


# -- fidelity: the fake and the real engine agree ----------------------------------------


async def test_run_result_shape(fake: Binding) -> None:
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


async def test_all_returns_rows_as_objects(fake: Binding) -> None:
    await fake.prepare("INSERT INTO items (name, score) VALUES (?, ?), (?, ?)").bind("a", 1.5, "b", 2.0).run()
    result = await fake.prepare("SELECT name, score FROM items ORDER BY id").all()
    assert result.to_py()["results"] == [{"name": "a", "score": 1.5}, {"name": "b", "score": 2}]
    assert result.meta.changes == 0 and result.meta.changed_db is False
    # run() is an alias of all(): it returns rows too
    assert (await fake.prepare("SELECT name FROM items ORDER BY id").run()).to_py()["results"][0] == {"name": "a"}


async def test_first_variants(fake: Binding) -> None:
    await fake.prepare("INSERT INTO items (name, note) VALUES (?, ?)").bind("a", ffi.JS_NULL).run()
    row = await fake.prepare("SELECT name, note FROM items").first()
    assert row.to_py() == {"name": "a", "note": ffi.JS_NULL}  # to_py keeps JS null as jsnull
    assert await fake.prepare("SELECT name FROM items").first("name") == "a"
    assert await fake.prepare("SELECT note FROM items").first("note") is ffi.JS_NULL
    assert await fake.prepare("SELECT * FROM items WHERE name = ?").bind("zz").first() is ffi.JS_NULL
    assert await fake.prepare("SELECT * FROM items WHERE name = ?").bind("zz").first("name") is ffi.JS_NULL
    with pytest.raises(FakeJsException, match=r"D1_COLUMN_NOTFOUND: Column not found \(nope\)"):
        await fake.prepare("SELECT name FROM items").first("nope")


async def test_raw_with_and_without_column_names(fake: Binding) -> None:
    await fake.prepare("INSERT INTO items (name, score) VALUES (?, ?)").bind("a", 2.5).run()
    statement = fake.prepare("SELECT name, score FROM items")
    assert (await statement.raw()).to_py() == [["a", 2.5]]
    assert (await statement.raw(columnNames=True)).to_py() == [["name", "score"], ["a", 2.5]]
    assert (await statement.raw({"columnNames": True})).to_py()[0] == ["name", "score"]
    empty = fake.prepare("SELECT name FROM items WHERE 0")
    assert (await empty.raw(columnNames=True)).to_py() == [["name"]]


async def test_bind_returns_new_statement_and_converts_types(fake: Binding) -> None:
    base = fake.prepare("SELECT ? AS a, ? AS b, ? AS c, ? AS d, ? AS e, ? AS f")
    bound = base.bind(True, False, 3.0, b"\x00\xff", float("nan"), 2**53 - 2)
    assert bound is not base
    # JSON carries D1's parameters: NaN becomes null; 2^53 - 2 is the largest int Pyodide
    # sends as a Number.
    row = (await bound.first()).to_py()
    assert row == {"a": 1, "b": 0, "c": 3, "d": [0, 255], "e": ffi.JS_NULL, "f": 2**53 - 2}


async def test_bind_refuses_undefined_and_unsupported_types(fake: Binding) -> None:
    # The fake refuses in bind() itself, the bridge when the statement runs: both are caught
    # by the adapter around prepare/bind and around the awaited call alike.
    async def bound(value: object) -> str:
        with pytest.raises(FakeJsException) as info:
            await fake.prepare("SELECT ?").bind(value).all()
        return info.value.message

    for value in (None, UNDEFINED):
        assert await bound(value) == "D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'"
    assert await bound({"a": 1}) == "D1_TYPE_ERROR: Type 'object' not supported for value '[object Object]'"
    # Pyodide 0.28 hands Python ints from 2^53 - 1 on to JS as BigInt
    assert await bound(2**53 - 1) == "D1_TYPE_ERROR: Type 'bigint' not supported for value '9007199254740991'"


async def test_integers_beyond_2_53_come_back_as_floats(fake: Binding) -> None:
    row = (await fake.prepare("SELECT 9007199254740993 AS big, -9007199254740993 AS neg").first()).to_py()
    assert row == {"big": 9007199254740992.0, "neg": -9007199254740992.0}
    assert all(isinstance(value, float) for value in row.values())


async def test_null_round_trip(fake: Binding) -> None:
    await fake.prepare("INSERT INTO items (name, note) VALUES (?, ?)").bind("n", ffi.JS_NULL).run()
    (note,) = await fake.prepare("SELECT note FROM items").raw()
    assert note.to_py() == [ffi.JS_NULL]


async def test_parameter_limit_error_text(fake: Binding) -> None:
    placeholders = ", ".join("?" * 101)
    statement = fake.prepare(f"SELECT * FROM items WHERE id IN ({placeholders})").bind(*range(101))
    with pytest.raises(FakeJsException) as info:
        await statement.all()
    assert re.fullmatch(r"D1_ERROR: too many SQL variables at offset \d+: SQLITE_ERROR", info.value.message)
    assert str(info.value).startswith("Error: D1_ERROR:")  # how JsException prints
    hundred = ", ".join("?" * 100)
    assert (await fake.prepare(f"SELECT * FROM items WHERE id IN ({hundred})").bind(*range(100)).all()).success


async def test_wrong_number_of_bindings(fake: Binding) -> None:
    with pytest.raises(FakeJsException, match=r"D1_ERROR: Wrong number of parameter bindings for SQL query\."):
        await fake.prepare("SELECT ?").bind(1, 2).all()


async def test_sql_error_style(fake: Binding) -> None:
    await fake.prepare("INSERT INTO items (name) VALUES (?)").bind("a").run()
    with pytest.raises(FakeJsException) as info:
        await fake.prepare("INSERT INTO items (name) VALUES (?)").bind("a").run()
    assert info.value.message == (
        "D1_ERROR: UNIQUE constraint failed: items.name: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_UNIQUE)"
    )
    assert await fails(fake.prepare("SELECT * FROM nope").all()) == "D1_ERROR: no such table: nope: SQLITE_ERROR"
    assert await fails(fake.prepare("SELECT nope FROM items").all()) == (
        "D1_ERROR: no such column: nope at offset 7: SQLITE_ERROR"
    )
    assert (
        await fails(fake.prepare("SELEC 1").all()) == 'D1_ERROR: near "SELEC": syntax error at offset 0: SQLITE_ERROR'
    )
    assert await fails(fake.prepare("INSERT INTO items (id, name) VALUES (1, 'x'), (1, 'y')").run()) == (
        "D1_ERROR: UNIQUE constraint failed: items.id: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)"
    )


async def test_foreign_keys_are_enforced(fake: Binding) -> None:
    fake.apply_sql("CREATE TABLE tags (id INTEGER PRIMARY KEY, item INTEGER NOT NULL REFERENCES items(id))")
    assert await fake.prepare("PRAGMA foreign_keys").first("foreign_keys") == 1
    assert await fails(fake.prepare("INSERT INTO tags (item) VALUES (42)").run()) == (
        "D1_ERROR: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_FOREIGNKEY)"
    )
    assert await fails(fake.prepare("INSERT INTO tags (id) VALUES (1)").run()) == (
        "D1_ERROR: NOT NULL constraint failed: tags.item: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_NOTNULL)"
    )


async def test_limits(fake: Binding) -> None:
    padding = "x" * (MAX_SQL_BYTES - len("SELECT '' AS a"))
    assert (await fake.prepare(f"SELECT '{padding}' AS a").first("a")) == padding
    too_long = fake.prepare(f"SELECT '{padding}x' AS a").all()
    assert await fails(too_long) == "D1_ERROR: statement too long: SQLITE_TOOBIG"
    columns = ", ".join(f"c{i} INTEGER" for i in range(MAX_COLUMNS))
    await fake.prepare(f"CREATE TABLE wide ({columns})").run()
    assert await fails(fake.prepare(f"CREATE TABLE wider ({columns}, one_more INTEGER)").run()) == (
        "D1_ERROR: too many columns on wider: SQLITE_ERROR"
    )
    selected = ", ".join(f"{i} AS c{i}" for i in range(MAX_COLUMNS + 1))
    assert await fails(fake.prepare(f"SELECT {selected}").all()) == (
        "D1_ERROR: too many columns in result set: SQLITE_ERROR"
    )
    # the limit holds for a whole row, so leave room for the other columns
    big = fake.prepare("INSERT INTO items (name, blob) VALUES ('big', ?)").bind(b"x" * (MAX_VALUE_BYTES - 100))
    assert (await big.run()).meta.changes == 1
    bigger = fake.prepare("INSERT INTO items (name, note) VALUES ('bigger', ?)").bind("x" * (MAX_VALUE_BYTES + 1))
    if is_real(fake):
        # Miniflare-only quirk: local D1 stores values beyond D1's documented 2,000,000-byte limit.
        assert (await bigger.run()).meta.changes == 1
    else:
        assert await fails(bigger.run()) == "D1_ERROR: string or blob too big: SQLITE_TOOBIG"


@pytest.mark.parametrize(
    "sql",
    [
        "PRAGMA page_size = 8192",
        "ATTACH DATABASE 'other.sqlite' AS other",
        "CREATE TEMP TABLE scratch (a)",
        "CREATE VIRTUAL TABLE temp.scratch USING fts5(a)",
    ],
)
async def test_the_authorizer_refuses_what_d1_refuses(fake: Binding, sql: str) -> None:
    assert await fails(fake.prepare(sql).run()) == "D1_ERROR: not authorized: SQLITE_AUTH"


async def test_transactions_and_server_functions_are_refused(fake: Binding) -> None:
    for sql in ("BEGIN", "BEGIN TRANSACTION", "COMMIT", "SAVEPOINT s", "RELEASE s"):
        assert await fails(fake.prepare(sql).run()) == f"D1_ERROR: {TRANSACTION_REFUSED}"
    # each query already runs in a transaction of its own
    assert (
        await fails(fake.prepare("VACUUM").run()) == "D1_ERROR: cannot VACUUM from within a transaction: SQLITE_ERROR"
    )
    assert await fails(fake.prepare("SELECT sqlite_version()").all()) == (
        "D1_ERROR: not authorized to use function: sqlite_version at offset 7: SQLITE_ERROR"
    )
    assert await fake.prepare("PRAGMA page_size").first("page_size") == 4096  # reading it is allowed


async def test_a_multi_statement_prepare_runs_them_all_atomically(fake: Binding) -> None:
    several = "INSERT INTO items (name) VALUES ('m1'); INSERT INTO items (name) VALUES ('m2'); SELECT count(*) AS n FROM items WHERE id > ?"
    result = (await fake.prepare(several).bind(0).all()).to_py()
    assert result["results"] == [{"n": 2}] and result["meta"]["changes"] == 2
    assert await fails(fake.prepare("SELECT ? AS a; SELECT 2 AS b").bind(1).all()) == (
        "D1_ERROR: When executing multiple SQL statements in a single call, only the last statement can have parameters."
    )
    failing = "INSERT INTO items (name) VALUES ('m3'); INSERT INTO items (name) VALUES ('m1')"
    assert "UNIQUE constraint failed" in await fails(fake.prepare(failing).run())
    assert await fake.prepare("SELECT count(*) AS n FROM items").first("n") == 2  # m3 rolled back
    for empty in ("", "  ", "-- only a comment"):
        assert await fails(fake.prepare(empty).all()) == "D1_ERROR: No SQL statements detected."


async def test_an_empty_batch_is_an_error(fake: Binding) -> None:
    assert await fails(fake.batch([])) == "D1_ERROR: No SQL statements detected."


async def test_changes_of_trigger_writes(fake: Binding) -> None:
    fake.apply_sql(
        "CREATE TABLE log (what TEXT); "
        "CREATE TRIGGER logged AFTER INSERT ON items BEGIN INSERT INTO log (what) VALUES (new.name); END"
    )
    changes = (await fake.prepare("INSERT INTO items (name) VALUES ('t')").run()).meta.changes
    # Miniflare-only quirk: local D1 counts the trigger's write too; D1 counts the statement's
    # rows, as SQLite's changes() does (and as the fake does).
    assert changes == (2 if is_real(fake) else 1)


async def test_batch_returns_one_result_per_statement(fake: Binding) -> None:
    insert = fake.prepare("INSERT INTO items (name) VALUES (?)")
    results = await fake.batch([insert.bind("a"), insert.bind("b"), fake.prepare("SELECT count(*) AS n FROM items")])
    py = results.to_py()
    assert [r["meta"]["last_row_id"] for r in py[:2]] == [1, 2]
    assert py[2]["results"] == [{"n": 2}]


async def test_batch_is_atomic(fake: Binding) -> None:
    insert = fake.prepare("INSERT INTO items (name) VALUES (?)")
    with pytest.raises(FakeJsException, match="UNIQUE constraint failed"):
        await fake.batch([insert.bind("a"), insert.bind("b"), insert.bind("a")])
    assert await fake.prepare("SELECT count(*) AS n FROM items").first("n") == 0
    if isinstance(fake, FakeD1Database):
        assert not fake.connection.in_transaction


async def test_exec_runs_one_query_per_line(fake: Binding) -> None:
    result = await fake.exec("INSERT INTO items (name) VALUES ('x');\nINSERT INTO items (name) VALUES ('y');")
    assert result.count == 2
    with pytest.raises(FakeJsException) as info:
        await fake.exec("CREATE TABLE t (\n  id INTEGER\n)")
    assert info.value.message.startswith("D1_EXEC_ERROR: Error in line 1: CREATE TABLE t (: ")


async def test_exec_is_all_or_nothing(fake: Binding) -> None:
    script = "INSERT INTO items (name) VALUES ('e1');\nINSERT INTO items (name) VALUES ('e1');"
    message = await fails(fake.exec(script))
    # (Miniflare names line 1 whichever line failed; the fake names the failing line.)
    assert re.fullmatch(
        r"D1_EXEC_ERROR: Error in line \d: INSERT INTO items \(name\) VALUES \('e1'\);: UNIQUE constraint failed: "
        r"items\.name: SQLITE_CONSTRAINT \(extended: SQLITE_CONSTRAINT_UNIQUE\)",
        message,
    )
    assert await fake.prepare("SELECT count(*) AS n FROM items").first("n") == 0


async def test_only_the_pragmas_d1_allows_run(fake: Binding) -> None:
    for refused in ("PRAGMA integrity_check", "PRAGMA page_count", "PRAGMA journal_mode = WAL"):
        with pytest.raises(FakeJsException, match=r"^Error: D1_ERROR: not authorized: SQLITE_AUTH$"):
            await fake.prepare(refused).all()
    checked = (await fake.prepare("PRAGMA quick_check").all()).to_py()
    assert checked["results"] == [{"quick_check": "ok"}] and checked["meta"]["size_after"] > 0
    assert [t["name"] for t in (await fake.prepare("PRAGMA table_list").all()).to_py()["results"]].count("items") == 1


@pytest.mark.parametrize("kind", ["fake", "real"])
async def test_python_result_style_gives_plain_values(request: pytest.FixtureRequest, kind: str) -> None:
    fake = _binding(request, kind, "python")
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
    # A list of plain values (a BLOB's bytes, a vector) is taken whole; one holding a JS
    # null or a container is still converted item by item.
    assert ffi.to_py(FakeJsProxy({"data": [0, 255, 7], "v": [0.5, 1]})) == {"data": [0, 255, 7], "v": [0.5, 1]}
    assert ffi.to_py([1, "a", ffi.JS_NULL, [ffi.JS_NULL], {"k": ffi.JS_NULL}]) == [1, "a", None, [None], {"k": None}]


# -- the adapter through the port ---------------------------------------------------------


@pytest.fixture(params=["fake-jsproxy", "fake-python", "real-jsproxy"])
def db(request: pytest.FixtureRequest) -> D1Database:
    kind, style = request.param.split("-")
    return D1Database(_binding(request, kind, style))


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
