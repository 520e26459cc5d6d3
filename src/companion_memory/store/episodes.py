"""SQL for episodes (domain/episode.py): what was said, indexed for recall and search."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..domain.episode import EPISODE_FIELDS, Episode
from ..domain.search_text import search_document
from ..ports import Database, Statement
from .sql import chunks, placeholders, read_stored_json, to_json

# What is stored is the Episode's fields, plus the text the full-text index reads.
_COLUMNS = (*EPISODE_FIELDS, "search_text")
_SELECT = "SELECT " + ", ".join(EPISODE_FIELDS) + " FROM episodes"


def episode_from_row(row: dict[str, Any]) -> Episode:
    sensitive, _ = read_stored_json(row["sensitive"])
    return Episode(**{**row, "sensitive": [str(s) for s in sensitive] if isinstance(sensitive, list) else []})


class EpisodeStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert_if_new(episode: Episode) -> Statement:
        """One episode per message: a message stored again (a retry) adds nothing."""
        values = {
            **episode.as_dict(),
            "sensitive": to_json(episode.sensitive),
            "search_text": search_document(episode.content),
        }
        return Statement(
            f"INSERT INTO episodes ({', '.join(_COLUMNS)}) VALUES ({placeholders(len(_COLUMNS))}) "
            "ON CONFLICT (id) DO NOTHING",
            tuple(values[c] for c in _COLUMNS),
        )

    async def get_many(self, ids: Sequence[str]) -> list[Episode]:
        found: list[Episode] = []
        for part in chunks(list(dict.fromkeys(ids))):
            rows = await self.db.all(f"{_SELECT} WHERE id IN ({placeholders(len(part))})", tuple(part))
            found.extend(episode_from_row(r) for r in rows)
        return found

    async def around(self, episode: Episode, *, before: int, after: int) -> list[Episode]:
        """The turns of ``episode``'s conversation around it, in the order they were said
        (itself included). Turns stored without a conversation (the chat gateway's, a
        script's) are one conversation per source: the chat's turns are one long chat."""
        if episode.conversation_id is None:
            thread, key = "conversation_id IS NULL AND source = ?", (episode.namespace, episode.source)
        else:
            thread, key = "conversation_id = ?", (episode.namespace, episode.conversation_id)
        at = (episode.created_at, episode.id)
        earlier = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND {thread} AND (created_at, id) < (?, ?) "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (*key, *at, before),
        )
        later = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND {thread} AND (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?",
            (*key, *at, after),
        )
        return [*(episode_from_row(r) for r in reversed(earlier)), episode, *(episode_from_row(r) for r in later)]

    async def between(
        self,
        namespace: str,
        *,
        since: str,
        until: str,
        conversation_id: str | None = None,
        roles: Sequence[str] = (),
        limit: int = 200,
    ) -> list[Episode]:
        """Episodes said in [since, until), oldest first."""
        conditions = ["namespace = ?", "created_at >= ?", "created_at < ?"]
        params: list[Any] = [namespace, since, until]
        if conversation_id is not None:
            conditions.append("conversation_id = ?")
            params.append(conversation_id)
        if roles:
            conditions.append(f"role IN ({placeholders(len(roles))})")
            params.extend(roles)
        rows = await self.db.all(
            f"{_SELECT} WHERE {' AND '.join(conditions)} ORDER BY created_at, id LIMIT ?", (*params, limit)
        )
        return [episode_from_row(r) for r in rows]

    @staticmethod
    def delete_rows(ids: Sequence[str]) -> list[Statement]:
        """Remove the episodes and their messages (call once their vectors are gone)."""
        statements: list[Statement] = []
        for part in chunks(list(ids)):
            marks = placeholders(len(part))
            statements.append(Statement(f"DELETE FROM episodes WHERE id IN ({marks})", tuple(part)))
            statements.append(Statement(f"DELETE FROM messages WHERE id IN ({marks})", tuple(part)))
        return statements
