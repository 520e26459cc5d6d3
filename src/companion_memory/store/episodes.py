"""SQL for episodes (domain/episode.py): what was said, indexed for recall and search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..domain.episode import EPISODE_FIELDS, Episode
from ..domain.search_text import search_document
from ..ports import Database, Statement
from .sql import chunks, placeholders, read_stored_json, to_json

# What is stored is the Episode's fields, plus the text the full-text index reads.
_COLUMNS = (*EPISODE_FIELDS, "search_text")
_SELECT = "SELECT " + ", ".join(EPISODE_FIELDS) + " FROM episodes"
# Episodes whose neighbours one statement reads: two subqueries of four parameters each.
_ADJACENT_PER_STATEMENT = 12


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
        (itself included); an episode without a conversation stands alone."""
        if episode.conversation_id is None:
            return [episode]
        key = (episode.namespace, episode.conversation_id, episode.created_at, episode.id)
        earlier = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND conversation_id = ? AND (created_at, id) < (?, ?) "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            (*key, before),
        )
        later = await self.db.all(
            f"{_SELECT} WHERE namespace = ? AND conversation_id = ? AND (created_at, id) > (?, ?) "
            "ORDER BY created_at, id LIMIT ?",
            (*key, after),
        )
        return [*(episode_from_row(r) for r in reversed(earlier)), episode, *(episode_from_row(r) for r in later)]

    async def adjacent(self, episodes: Sequence[Episode]) -> list[Episode]:
        """The turns said just before and just after each of ``episodes`` in its
        conversation (episodes without one: the namespace's turns without one), a few
        episodes a query. Each neighbour is a scalar subquery on the conversation index
        (D1 refuses a compound SELECT of more than a few terms)."""
        found: dict[str, Episode] = {}
        for part in chunks(list(episodes), _ADJACENT_PER_STATEMENT):
            subqueries: list[str] = []
            params: list[Any] = []
            for episode in part:
                key = (episode.namespace, episode.conversation_id, episode.created_at, episode.id)
                for sign, order in (("<", "DESC"), (">", "ASC")):
                    subqueries.append(
                        "(SELECT id FROM episodes WHERE namespace = ? AND conversation_id IS ? "
                        f"AND (created_at, id) {sign} (?, ?) ORDER BY created_at {order}, id {order} LIMIT 1)"
                    )
                    params += key
            for row in await self.db.all(f"{_SELECT} WHERE id IN ({', '.join(subqueries)})", params):
                found.setdefault(row["id"], episode_from_row(row))
        return list(found.values())

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
    def mark_injected(episode_id: str, at: str, lifecycle: Mapping[str, Any]) -> Statement:
        """Injected at ``at``, once more, with the lifecycle columns that move with it
        (``layer``, ``layer_at``, ``revivals``: a revival, domain/layers.py)."""
        columns = [c for c in ("layer", "layer_at", "revivals") if c in lifecycle]
        assignments = "".join(f", {c} = ?" for c in columns)
        return Statement(
            f"UPDATE episodes SET last_injected_at = ?, recall_count = recall_count + 1{assignments} WHERE id = ?",
            (at, *(lifecycle[c] for c in columns), episode_id),
        )

    @staticmethod
    def delete_rows(ids: Sequence[str]) -> list[Statement]:
        """Remove the episodes and their messages (call once their vectors are gone)."""
        statements: list[Statement] = []
        for part in chunks(list(ids)):
            marks = placeholders(len(part))
            statements.append(Statement(f"DELETE FROM episodes WHERE id IN ({marks})", tuple(part)))
            statements.append(Statement(f"DELETE FROM messages WHERE id IN ({marks})", tuple(part)))
        return statements
