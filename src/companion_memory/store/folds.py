"""SQL for context folds (migrations/0010_context_folds.sql)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..domain.folding import FOLD_FIELDS, Fold
from ..ports import Database, Statement
from .sql import chunks, from_json, placeholders, to_json

_SELECT = f"SELECT {', '.join(FOLD_FIELDS)} FROM context_folds"


def _fold(row: dict[str, Any]) -> Fold:
    return Fold(**{**row, "messages": from_json(row["messages"], []), "anchors": from_json(row["anchors"], [])})


def _stored(fold: Fold, column: str) -> Any:
    value = getattr(fold, column)
    return to_json(value) if column in ("messages", "anchors") else value


class FoldStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def latest(self, namespace: str, prefix_hashes: Sequence[str]) -> Fold | None:
        """Of the folds whose covered messages hash to one of these, the one covering most."""
        best: dict[str, Any] | None = None
        for part in chunks(list(prefix_hashes)):
            row = await self.db.first(
                f"{_SELECT} WHERE namespace = ? AND prefix_hash IN ({placeholders(len(part))}) "
                "ORDER BY upto DESC LIMIT 1",
                (namespace, *part),
            )
            if row and (best is None or row["upto"] > best["upto"]):
                best = row
        return None if best is None else _fold(best)

    async def get(self, fold_id: str) -> Fold | None:
        row = await self.db.first(f"{_SELECT} WHERE id = ?", (fold_id,))
        return None if row is None else _fold(row)

    @staticmethod
    def insert(fold: Fold) -> Statement:
        # Two requests folding the same messages at once: the first one's summary stands.
        return Statement(
            f"INSERT INTO context_folds ({', '.join(FOLD_FIELDS)}) VALUES ({placeholders(len(FOLD_FIELDS))}) "
            "ON CONFLICT (prefix_hash) DO NOTHING",
            tuple(_stored(fold, c) for c in FOLD_FIELDS),
        )

    @staticmethod
    def touch(fold_id: str, at: str) -> Statement:
        return Statement("UPDATE context_folds SET used_at = ? WHERE id = ?", (at, fold_id))
