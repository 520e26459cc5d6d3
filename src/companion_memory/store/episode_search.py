"""Episodes by their words and substrings (store/text_search.py), for recall and
conversation_search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..domain.episode import Episode
from ..ports import Database, SqlValue
from .sql import placeholders
from .text_search import EPISODE_TEXT, TextIndex


@dataclass(frozen=True)
class EpisodeScope:
    """Which episodes a search may find: of these namespaces and, when given, of one
    conversation, not of another (the one in the prompt already), of these roles and
    said in [since, until)."""

    # Empty in what recall is handed: recall's own namespaces.
    namespaces: tuple[str, ...] = ()
    conversation_id: str | None = None
    other_than: str | None = None
    roles: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None

    def admits(self, episode: Episode) -> bool:
        """The ``where`` clause, on a row already read (what the vector index found)."""
        return (
            episode.namespace in self.namespaces
            and (self.conversation_id is None or episode.conversation_id == self.conversation_id)
            and (self.other_than is None or episode.conversation_id != self.other_than)
            and (not self.roles or episode.role in self.roles)
            and (self.since is None or episode.created_at >= self.since)
            and (self.until is None or episode.created_at < self.until)
        )

    def where(self) -> tuple[str, tuple[SqlValue, ...]]:
        """The WHERE clause on the episodes ``r``, and its parameters."""
        conditions = [f"r.namespace IN ({placeholders(len(self.namespaces))})"]
        params: list[SqlValue] = [*self.namespaces]
        if self.conversation_id is not None:
            conditions.append("r.conversation_id = ?")
            params.append(self.conversation_id)
        if self.other_than is not None:
            conditions.append("(r.conversation_id IS NULL OR r.conversation_id != ?)")
            params.append(self.other_than)
        if self.roles:
            conditions.append(f"r.role IN ({placeholders(len(self.roles))})")
            params.extend(self.roles)
        if self.since is not None:
            conditions.append("r.created_at >= ?")
            params.append(self.since)
        if self.until is not None:
            conditions.append("r.created_at < ?")
            params.append(self.until)
        return " AND ".join(conditions), tuple(params)


class EpisodeSearch:
    def __init__(self, db: Database) -> None:
        self.text = TextIndex(db, EPISODE_TEXT)

    async def lexical_search(
        self, scope: EpisodeScope, terms: Sequence[str], *, limit: int, counts: Mapping[str, int] | None = None
    ) -> list[tuple[str, float]]:
        """(id, bm25) of the episodes in scope matching any of the query terms, best first
        (``counts``: the terms' ``text_search.word_counts``, when read already)."""
        where, params = scope.where()
        return _ranked(await self.text.words(terms, where, params, limit=limit, counts=counts))

    async def substring_search(
        self, scope: EpisodeScope, needles: Sequence[str], *, limit: int, counts: Mapping[str, int] | None = None
    ) -> list[tuple[str, float]]:
        """(id, bm25) of the episodes in scope whose content holds any of the needles, best
        first (``counts``: the needles' ``text_search.substring_counts``, when read already)."""
        where, params = scope.where()
        return _ranked(await self.text.substrings(needles, where, params, limit=limit, counts=counts))


def _ranked(rows: Sequence[dict[str, Any]]) -> list[tuple[str, float]]:
    return [(r["id"], float(r["rank"])) for r in rows]
