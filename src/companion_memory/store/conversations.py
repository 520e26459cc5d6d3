"""SQL for the owner's view of what was said: a day's conversations, and the days around it.

A conversation is the episodes of one ``conversation_id``; turns stored without one (the
chat gateway's, a script's) are one stream per source, as ``EpisodeStore.around`` reads
them. An episode being forgotten is emptied first (its vector goes next, then its row):
one with no words is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ports import Database

# Each conversation's first turn that day, with the day's count and last time of its
# turns, and (the outer window, taken before LIMIT) how many conversations the day has.
_DAY = (
    "SELECT id, conversation_id, role, source, content, created_at, messages, last_at, "
    "COUNT(*) OVER () AS conversations, SUM(messages) OVER () AS turns FROM ("
    "SELECT id, conversation_id, role, source, substr(content, 1, ?) AS content, created_at, "
    "ROW_NUMBER() OVER thread AS n, COUNT(*) OVER whole AS messages, MAX(created_at) OVER whole AS last_at "
    "FROM episodes WHERE namespace = ? AND created_at >= ? AND created_at < ? AND content <> '' "
    "WINDOW whole AS (PARTITION BY conversation_id, CASE WHEN conversation_id IS NULL THEN source END), "
    "thread AS (PARTITION BY conversation_id, CASE WHEN conversation_id IS NULL THEN source END "
    "ORDER BY created_at, id)"
    ") WHERE n = 1 ORDER BY created_at, id LIMIT ?"
)
# The first turn's opening characters: enough for a first line.
OPENING_CHARS = 1000


@dataclass(frozen=True)
class ConversationDay:
    """One conversation's turns on a day: its first turn's opening, how many, when."""

    conversation_id: str | None
    source: str
    first_message_id: str
    first_role: str
    opening: str
    messages: int
    first_at: str
    last_at: str


@dataclass(frozen=True)
class DayOfConversations:
    conversations: list[ConversationDay]
    total: int
    messages: int


class ConversationStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def day(self, namespace: str, *, since: str, until: str, limit: int) -> DayOfConversations:
        """The conversations with turns said in [since, until), in the order they began
        (at most ``limit``); ``total`` and ``messages`` count all of them."""
        rows = await self.db.all(_DAY, (OPENING_CHARS, namespace, since, until, limit))
        conversations = [
            ConversationDay(
                conversation_id=r["conversation_id"],
                source=r["source"],
                first_message_id=r["id"],
                first_role=r["role"],
                opening=r["content"],
                messages=int(r["messages"]),
                first_at=r["created_at"],
                last_at=r["last_at"],
            )
            for r in rows
        ]
        total = int(rows[0]["conversations"]) if rows else 0
        return DayOfConversations(conversations, total, int(rows[0]["turns"]) if rows else 0)

    async def said_before(self, namespace: str, moment: str) -> str | None:
        """When the last turn before ``moment`` was said, if any."""
        row = await self.db.first(
            "SELECT MAX(created_at) AS at FROM episodes WHERE namespace = ? AND created_at < ? AND content <> ''",
            (namespace, moment),
        )
        return None if row is None else row["at"]

    async def said_from(self, namespace: str, moment: str) -> str | None:
        """When the first turn from ``moment`` on was said, if any."""
        row = await self.db.first(
            "SELECT MIN(created_at) AS at FROM episodes WHERE namespace = ? AND created_at >= ? AND content <> ''",
            (namespace, moment),
        )
        return None if row is None else row["at"]
