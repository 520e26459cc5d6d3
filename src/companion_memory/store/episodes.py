"""SQL for episodes (domain/episode.py): what was said, indexed for recall and search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..domain.episode import EPISODE_FIELDS, Episode
from ..domain.search_text import search_document
from ..domain.vector_state import MirroredRow
from ..ports import Database, Statement
from .sql import chunks, placeholders, read_stored_json, to_json

# What is stored is the Episode's fields, plus the text the full-text index reads.
_COLUMNS = (*EPISODE_FIELDS, "search_text")
_SELECT = "SELECT " + ", ".join(EPISODE_FIELDS) + " FROM episodes"
# Episodes whose neighbours one statement reads: two subqueries of four parameters each.
_ADJACENT_PER_STATEMENT = 12
# Episodes one insert_for_messages statement carries: five parameters each, under D1's 100.
_PER_INSERT = 20


def episode_from_row(row: dict[str, Any]) -> Episode:
    sensitive, _ = read_stored_json(row["sensitive"])
    return Episode(**{**row, "sensitive": [str(s) for s in sensitive] if isinstance(sensitive, list) else []})


class EpisodeStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @staticmethod
    def insert_if_new(episode: Episode) -> Statement:
        """One episode per message: a message stored again (a retry) adds nothing."""
        return Statement(
            f"INSERT INTO episodes ({', '.join(_COLUMNS)}) VALUES ({placeholders(len(_COLUMNS))}) "
            "ON CONFLICT (id) DO NOTHING",
            _values(episode),
        )

    @staticmethod
    def insert_for_messages(episodes: Sequence[Episode]) -> list[Statement]:
        """The new episodes of messages inserted earlier in the same batch, if they were
        (a message whose insert was a duplicate's no-op gets none), the lifecycle at its
        start. What the message row holds is read from it, so a statement carries 20
        episodes, not 6: a 1,000-message ingest stays one batch of few statements."""
        statements = []
        for part in chunks(list(episodes), _PER_INSERT):
            rows = ", ".join(["(?, ?, ?, ?, ?)"] * len(part))
            statements.append(
                Statement(
                    "INSERT INTO episodes (id, namespace, conversation_id, role, speaker, source, content, "
                    "search_text, sensitive, created_at, stored_at) "
                    "SELECT m.id, m.namespace, m.conversation_id, m.role, v.column5, m.source, v.column2, v.column3, "
                    "v.column4, "
                    f"m.created_at, m.stored_at FROM (VALUES {rows}) AS v JOIN messages m ON m.id = v.column1 "
                    "WHERE true ON CONFLICT (id) DO NOTHING",
                    tuple(
                        value
                        for e in part
                        for value in (e.id, e.content, search_document(e.said()), to_json(e.sensitive), e.speaker)
                    ),
                )
            )
        return statements

    async def live_ids(self, *, after: str, limit: int) -> list[MirroredRow]:
        """Every episode (all are in the vector index), in id order."""
        rows = await self.db.all("SELECT id, namespace FROM episodes WHERE id > ? ORDER BY id LIMIT ?", (after, limit))
        return [MirroredRow(**r) for r in rows]

    async def kept_since_before(self, cutoff: str, limit: int) -> list[tuple[str, str]]:
        """Ids and namespaces of the episodes both said and stored before ``cutoff`` (an
        imported one counts from its import), the first stored first."""
        rows = await self.db.all(
            "SELECT id, namespace FROM episodes WHERE stored_at < ? AND created_at < ? ORDER BY stored_at, id LIMIT ?",
            (cutoff, cutoff, limit),
        )
        return [(row["id"], row["namespace"]) for row in rows]

    async def chosen(
        self,
        namespace: str,
        *,
        ids: Sequence[str] = (),
        conversation_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> tuple[list[str], list[str]]:
        """What the owner named to forget: the episodes, and the messages that have none
        (nothing left to recall, or stored before episodes were), of these ids (when
        given), of this conversation, said in [since, until)."""
        conditions = ["namespace = ?"]
        params: list[Any] = [namespace]
        if conversation_id is not None:
            conditions.append("conversation_id = ?")
            params.append(conversation_id)
        if since is not None:
            conditions.append("created_at >= ?")
            params.append(since)
        if until is not None:
            conditions.append("created_at < ?")
            params.append(until)
        episodes: list[str] = []
        messages: list[str] = []
        # Each part's ids are bound twice, once per table.
        for part in chunks(list(dict.fromkeys(ids)), 40) if ids else [()]:
            where = " AND ".join([*conditions, f"id IN ({placeholders(len(part))})"] if part else conditions)
            rows = await self.db.all(
                f"SELECT id, 1 AS episode FROM episodes WHERE {where} UNION ALL "
                f"SELECT id, 0 AS episode FROM messages m WHERE {where} "
                "AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.id = m.id)",
                (*params, *part, *params, *part),
            )
            for row in rows:
                (episodes if row["episode"] else messages).append(row["id"])
        return episodes, messages

    @staticmethod
    def blank(ids: Sequence[str]) -> list[Statement]:
        """Empty what these episodes and their messages say, at once: a forgotten episode's
        words leave the word indexes while its vector is being removed, before its row."""
        return [
            statement
            for part in chunks(list(ids))
            for statement in (
                Statement(
                    f"UPDATE episodes SET content = '', search_text = '' WHERE id IN ({placeholders(len(part))})",
                    tuple(part),
                ),
                Statement(f"UPDATE messages SET content = '' WHERE id IN ({placeholders(len(part))})", tuple(part)),
            )
        ]

    async def count(self, *, after: str = "") -> int:
        """How many episodes have an id past ``after`` (all of them, by default)."""
        row = await self.db.first("SELECT COUNT(*) AS n FROM episodes WHERE id > ?", (after,))
        return row["n"] if row else 0

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
    def delete_rows(ids: Sequence[str], *, with_messages: bool = True) -> list[Statement]:
        """Remove the episodes, and their messages unless told not to (retention: the raw
        message keeps its own retention). Call once their vectors are gone."""
        tables = ("episodes", "messages") if with_messages else ("episodes",)
        return [
            Statement(f"DELETE FROM {table} WHERE id IN ({placeholders(len(part))})", tuple(part))
            for part in chunks(list(ids))
            for table in tables
        ]


def _values(episode: Episode) -> tuple[Any, ...]:
    values = {
        **episode.as_dict(),
        "sensitive": to_json(episode.sensitive),
        "search_text": search_document(episode.said()),
    }
    return tuple(values[c] for c in _COLUMNS)
