"""Apply ``migrations/NNNN_name.sql`` files with wrangler's own bookkeeping.

Production runs ``wrangler d1 migrations apply``; the local server and the tests run
``apply_migrations`` over the Database port. Both record applied files in the same
``d1_migrations`` table, so one file set serves D1 and SQLite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .ports import Database, Statement

MIGRATIONS_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS d1_migrations("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "name TEXT UNIQUE, "
    "applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)"
)

_FILE_NAME = re.compile(r"^\d{4}_[A-Za-z0-9_\-]+\.sql$")
_WORD = re.compile(r"[A-Za-z_]+")


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str


def default_migrations_dir() -> Path:
    """The packaged copy in an installed wheel, else the repository's ``migrations/``."""
    packaged = Path(__file__).parent / "_migrations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "migrations"


def load_migrations(directory: Path) -> list[Migration]:
    files = sorted(p for p in directory.iterdir() if _FILE_NAME.match(p.name))
    return [Migration(p.name, p.read_text(encoding="utf-8")) for p in files]


def split_statements(script: str) -> list[str]:
    """Split a SQL script into statements.

    Semicolons inside quotes, comments and trigger bodies (``BEGIN … END``, with
    ``CASE … END`` inside) do not end a statement.
    """
    statements: list[str] = []
    current: list[str] = []
    depth = 0
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in "'\"`[":
            close = "]" if ch == "[" else ch
            end = script.find(close, i + 1)
            end = n - 1 if end == -1 else end
            current.append(script[i : end + 1])
            i = end + 1
        elif script.startswith("--", i):
            end = script.find("\n", i)
            i = n if end == -1 else end + 1
            current.append(" ")
        elif script.startswith("/*", i):
            end = script.find("*/", i + 2)
            i = n if end == -1 else end + 2
            current.append(" ")
        elif ch.isalpha() or ch == "_":
            word = _WORD.match(script, i).group(0)  # type: ignore[union-attr]
            upper = word.upper()
            if (upper == "BEGIN" and _is_trigger("".join(current))) or (upper == "CASE" and depth):
                depth += 1
            elif upper == "END" and depth:
                depth -= 1
            current.append(word)
            i += len(word)
        elif ch == ";" and depth == 0:
            statement = "".join(current).strip()
            if statement:
                statements.append(statement)
            current = []
            i += 1
        else:
            current.append(ch)
            i += 1
    tail = "".join(current).strip()
    if tail:
        statements.append(tail)
    return statements


def _is_trigger(prefix: str) -> bool:
    return re.match(r"\s*CREATE\s+(TEMP\w*\s+)?TRIGGER\b", prefix, re.IGNORECASE) is not None


async def applied_migrations(db: Database) -> set[str]:
    await db.run(MIGRATIONS_TABLE_DDL)
    rows = await db.all("SELECT name FROM d1_migrations")
    return {row["name"] for row in rows}


async def apply_migrations(db: Database, migrations: list[Migration]) -> list[str]:
    """Apply the migrations not yet recorded, each file atomically; return their names."""
    done = await applied_migrations(db)
    applied: list[str] = []
    for migration in migrations:
        if migration.name in done:
            continue
        statements = [Statement(sql) for sql in split_statements(migration.sql)]
        statements.append(Statement("INSERT INTO d1_migrations (name) VALUES (?)", (migration.name,)))
        await db.batch(statements)
        applied.append(migration.name)
    return applied
