"""SQL for raw chat messages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..ports import Database, Statement
from .sql import chunks, placeholders


@dataclass(frozen=True)
class MessageRow:
    id: str
    namespace: str
    conversation_id: str | None
    role: str
    content: str
    client_hash: str
    source: str
    model: str | None
    metadata: str | None
    created_at: str
    stored_at: str


MESSAGE_COLUMNS = tuple(MessageRow.__dataclass_fields__)


class MessageStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert_if_new(row: MessageRow) -> Statement:
        return Statement(
            f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) VALUES ({placeholders(len(MESSAGE_COLUMNS))}) "
            "ON CONFLICT (namespace, client_hash) DO NOTHING",
            tuple(getattr(row, c) for c in MESSAGE_COLUMNS),
        )

    @staticmethod
    def retire(namespace: str, hashes: Sequence[str], *, stored_before: str) -> list[Statement]:
        """Give the messages of these identities stored before ``stored_before`` a key of
        their own (the identity and the row's id), so a new message may take the identity."""
        return [
            Statement(
                "UPDATE messages SET client_hash = client_hash || ':' || id "
                f"WHERE namespace = ? AND stored_at < ? AND client_hash IN ({placeholders(len(part))})",
                (namespace, stored_before, *part),
            )
            for part in chunks(list(hashes))
        ]

    async def ids_by_hash(self, namespace: str, hashes: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for part in chunks(list(hashes)):
            rows = await self.db.all(
                f"SELECT id, client_hash FROM messages WHERE namespace = ? AND client_hash IN ({placeholders(len(part))})",
                (namespace, *part),
            )
            found.update((r["client_hash"], r["id"]) for r in rows)
        return found

    async def without_episode(self, *, since: str, limit: int) -> list[MessageRow]:
        """Messages said or stored since ``since`` (the episodes' retention keeps those)
        that have words but no episode (stored before episodes were), oldest first."""
        rows = await self.db.all(
            f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages m WHERE (created_at >= ? OR stored_at >= ?) "
            "AND trim(content, ' ' || char(9) || char(10) || char(13)) != '' "
            "AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.id = m.id) ORDER BY created_at, id LIMIT ?",
            (since, since, limit),
        )
        return [MessageRow(**r) for r in rows]

    @staticmethod
    def delete(ids: Sequence[str]) -> list[Statement]:
        return [
            Statement(f"DELETE FROM messages WHERE id IN ({placeholders(len(part))})", tuple(part))
            for part in chunks(list(ids))
        ]

    @staticmethod
    def rewrite(message_id: str, content: str) -> Statement:
        return Statement("UPDATE messages SET content = ? WHERE id = ?", (content, message_id))

    async def between(self, namespace: str, *, since: str, until: str, limit: int = 500) -> list[MessageRow]:
        rows = await self.db.all(
            f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM messages "
            "WHERE namespace = ? AND created_at >= ? AND created_at < ? ORDER BY created_at, id LIMIT ?",
            (namespace, since, until, limit),
        )
        return [MessageRow(**r) for r in rows]
