"""SQL for the small key-value cache that clients keep per namespace."""

from __future__ import annotations

from typing import Any

from ..domain.cache import CacheEntry
from ..errors import Conflict
from ..ports import Database
from .sql import read_stored_json, to_json


class CacheStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, namespace: str, key: str, now: str) -> CacheEntry | None:
        row = await self.db.first(
            "SELECT namespace, key, value, expires_at, created_at, updated_at FROM cache_entries "
            "WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)",
            (namespace, key, now),
        )
        if row is None:
            return None
        value, problem = read_stored_json(row["value"])
        if problem:
            raise Conflict(
                f"the stored value of {key!r} {problem}: replace it with PUT or remove it with DELETE",
                code="unreadable_value",
            )
        return CacheEntry(**{**row, "value": value})

    async def put(self, namespace: str, key: str, value: Any, expires_at: str | None, now: str) -> None:
        await self.db.run(
            "INSERT INTO cache_entries (namespace, key, value, expires_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at, "
            "updated_at = excluded.updated_at",
            (namespace, key, to_json(value), expires_at, now, now),
        )

    async def delete(self, namespace: str, key: str) -> bool:
        result = await self.db.run("DELETE FROM cache_entries WHERE namespace = ? AND key = ?", (namespace, key))
        return result.changes > 0
