"""SQL for the glossary: a namespace's own terms, their aliases and definitions."""

from __future__ import annotations

import uuid
from typing import Any

from ..domain.glossary import Term
from ..ports import Database, Statement
from .sql import from_json, to_json

_SELECT = "SELECT id, namespace, term, aliases, definition, created_at, updated_at FROM glossary"


def distinct_aliases(term: str, aliases: list[str]) -> list[str]:
    """Each alias once, and never the term itself."""
    return list(dict.fromkeys(a for a in aliases if a.lower() != term.lower()))


def _entry(row: dict[str, Any]) -> Term:
    return Term(**{**row, "aliases": from_json(row["aliases"], [])})


class GlossaryStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def entries(self, namespace: str) -> list[Term]:
        rows = await self.db.all(f"{_SELECT} WHERE namespace = ? ORDER BY term COLLATE NOCASE", (namespace,))
        return [_entry(r) for r in rows]

    async def get(self, entry_id: str) -> Term | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (entry_id,))
        return _entry(row) if row else None

    async def by_term(self, namespace: str, term: str) -> Term | None:
        row = await self.db.first(f"{_SELECT} WHERE namespace = ? AND term = ? COLLATE NOCASE", (namespace, term))
        return _entry(row) if row else None

    async def set(self, namespace: str, term: str, aliases: list[str], definition: str, at: str) -> tuple[Term, bool]:
        """Create the term, or replace its aliases and definition; says whether it was new."""
        existing = await self.by_term(namespace, term)
        if existing is not None:
            await self.update(existing.id, at, term=term, aliases=aliases, definition=definition)
            return await self.get(existing.id) or existing, False
        entry = Term(
            id=str(uuid.uuid4()),
            namespace=namespace,
            term=term,
            aliases=aliases,
            definition=definition,
            created_at=at,
            updated_at=at,
        )
        await self.db.run(
            "INSERT INTO glossary (id, namespace, term, aliases, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entry.id, namespace, term, to_json(aliases), definition, at, at),
        )
        return await self.get(entry.id) or entry, True

    async def update(
        self,
        entry_id: str,
        at: str,
        *,
        term: str | None = None,
        aliases: list[str] | None = None,
        definition: str | None = None,
    ) -> None:
        """Change the fields given (not None)."""
        changes = {"term": term, "aliases": None if aliases is None else to_json(aliases), "definition": definition}
        columns = [c for c, value in changes.items() if value is not None]
        assignments = ", ".join(f"{c} = ?" for c in [*columns, "updated_at"])
        await self.db.batch(
            [
                Statement(
                    f"UPDATE glossary SET {assignments} WHERE id = ?", (*(changes[c] for c in columns), at, entry_id)
                )
            ]
        )

    async def delete(self, entry_id: str) -> bool:
        result = await self.db.run("DELETE FROM glossary WHERE id = ?", (entry_id,))
        return result.changes > 0
