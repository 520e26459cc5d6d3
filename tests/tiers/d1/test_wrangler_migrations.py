"""Deploy-time migration on the real tool: the pinned ``wrangler d1 migrations apply --local``
runs the repository's ``migrations/`` on workerd's D1, keeps the bookkeeping our migrator
keeps, and builds the schema our migrator builds. And the Worker's compatibility date is one
the pinned workerd (as new as any runtime Cloudflare deploys to) accepts."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import subprocess
import tomllib
from datetime import date
from pathlib import Path

from companion_memory.adapters.cloudflare.d1 import D1Database
from companion_memory.migrations import apply_migrations, default_migrations_dir, load_migrations
from tests.cloudflare_tools import BIN, ROOT, WRANGLER, compatibility_date, require_toolchain, tool_env
from tests.fakes.d1 import FakeD1Database

# Python 3.13 Workers (Pyodide 0.28, with pyodide.ffi.jsnull) from this date on.
PYTHON_313_WORKERS = date(2025, 9, 29)
SCHEMA = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '_cf_%' AND name <> 'sqlite_sequence'"


def _schema(rows: list[tuple[str, str, str, str | None]]) -> set[tuple[str, str, str, str]]:
    """Each object's definition up to comments, layout and identifier quotes (our splitter
    drops comments; wrangler writes its bookkeeping table in its own layout)."""

    def normal(sql: str) -> str:
        sql = re.sub(r"--[^\n]*", " ", sql).replace('"d1_migrations"', "d1_migrations")
        return re.sub(r"\s*([(),])\s*", r"\1", re.sub(r"\s+", " ", sql)).strip()

    return {(kind, name, table, normal(sql or "")) for kind, name, table, sql in rows}


def test_wrangler_applies_the_migrations_as_our_migrator_does(tmp_path: Path) -> None:
    require_toolchain()
    database = tomllib.loads((ROOT / "wrangler.toml").read_text())["d1_databases"][0]["database_name"]
    done = subprocess.run(
        [str(WRANGLER), "d1", "migrations", "apply", database, "--local", "--persist-to", str(tmp_path)],
        cwd=ROOT,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    names = [m.name for m in load_migrations(default_migrations_dir())]
    (file,) = [p for p in (tmp_path / "v3" / "d1").rglob("*.sqlite") if p.name != "metadata.sqlite"]
    with sqlite3.connect(file) as applied:
        rows = applied.execute("SELECT id, name, applied_at FROM d1_migrations ORDER BY id").fetchall()
        theirs = _schema(applied.execute(SCHEMA).fetchall())
    assert [(row[0], row[1]) for row in rows] == list(enumerate(names, start=1))
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row[2]) for row in rows)

    fake = FakeD1Database()
    asyncio.run(apply_migrations(D1Database(fake), load_migrations(default_migrations_dir())))
    ours = _schema(fake.connection.execute(SCHEMA).fetchall())
    assert ours == theirs


def test_the_compatibility_date_is_one_the_pinned_workerd_accepts() -> None:
    require_toolchain()
    version = subprocess.run([str(BIN / "workerd"), "--version"], capture_output=True, text=True, check=True).stdout
    (supported,) = re.findall(r"\d{4}-\d\d-\d\d", version)
    configured = date.fromisoformat(compatibility_date())
    assert PYTHON_313_WORKERS <= configured <= date.fromisoformat(supported), (configured, supported)
