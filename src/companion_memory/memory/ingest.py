"""Store raw chat messages, once each, and each as an episode. Extraction into memories
happens in the dream.

What is stored of a message: its words without their ``<private>`` spans (never stored,
domain/private_spans.py), in the message row, which the dream reads; and its episode
(memory/episodes.py), which recall and search find, written in the same batch and
embedded in the background through the vector outbox.

A message's identity (what a retry repeats) is, in order of strength:
- the client's own ``id``: the same id is the same message for as long as it is kept;
- else what it says and where: the conversation, the role, the content, ``created_at`` if
  the client said when, and its rank among the identical messages of its request (a batch
  ``[ok, fine, ok]`` holds two messages ``ok``), or the caller's ``retry_key`` instead.

A client that said when (an id, or a ``created_at``) can send the same message again at any
time. Without either, the same message again within ``RETRY_WINDOW`` of storing it is a
retry of that request; after it, it was said again (the second "ok" of a conversation, an
hour later) and is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..clock import iso, read_time
from ..domain.episode import Episode
from ..domain.private_spans import strip_private
from ..domain.search_text import embedding_text
from ..ports import Clock, Database, Statement
from ..store.episodes import EpisodeStore
from ..store.messages import MessageRow, MessageStore
from ..store.outbox import OutboxStore
from ..store.sql import to_json
from .episodes import episode_of
from .vector_mirror import VectorMirror

# Long enough for a client's retries after a lost answer (an SDK's backoff, a queue's next
# attempt), short enough that the same short reply in a conversation is rarely this close.
RETRY_WINDOW = timedelta(minutes=10)


@dataclass(frozen=True)
class IncomingMessage:
    role: str
    content: str
    # A client's own id for the message; the strongest idempotency key when present.
    id: str | None = None
    created_at: str | None = None
    model: str | None = None
    metadata: dict[str, Any] | None = None
    # Who said it (OpenAI's ``name``), kept with its episode.
    name: str | None = None
    # The caller's own name for the message within the retry window, in place of what it
    # says and its rank (the gateway: the conversation as sent, so a retried turn whose
    # provider answered differently keeps its first reply).
    retry_key: str | None = None
    # The embedding of these words made already (the gateway's user turn: recall's query
    # vector, RecallResult.query_vector): the episode takes it instead of being embedded
    # again, when it holds the same words (no secret masked in it).
    vector: Sequence[float] | None = None

    @property
    def dated(self) -> bool:
        """Whether the client said which message this is for good: by an id or a time."""
        return bool(self.id or self.created_at)


@dataclass(frozen=True)
class IngestOutcome:
    id: str
    duplicate: bool


def client_hash(message: IncomingMessage, conversation_id: str | None, rank: int = 0) -> str:
    """The identity of a message for idempotency (see the module's docstring); ``rank``
    counts the identical messages before it in its request."""
    if message.id:
        key = f"id\x00{message.id}"
    elif message.retry_key:
        key = "\x00".join(("retry", conversation_id or "", message.role, message.retry_key))
    else:
        parts = ["msg", conversation_id or "", message.role, message.content, message.created_at or ""]
        # The first of its kind keeps the key it had before ranks were counted.
        key = "\x00".join([*parts, str(rank)] if rank else parts)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _ranked_hashes(messages: list[IncomingMessage], conversation_id: str | None) -> list[str]:
    """Each message's identity in the request: an id (or a retry key) sent twice is one
    message; the same words twice without one are two, told apart by their rank."""
    hashes: list[str] = []
    seen: dict[str, int] = {}
    for message in messages:
        first = client_hash(message, conversation_id)
        rank = 0 if message.id or message.retry_key else seen.get(first, 0)
        seen[first] = rank + 1
        hashes.append(client_hash(message, conversation_id, rank))
    return hashes


class MessageIngestor:
    def __init__(self, db: Database, clock: Clock, mirror: VectorMirror) -> None:
        self.db = db
        self.clock = clock
        self.mirror = mirror
        self.store = MessageStore(db)

    async def ingest(
        self,
        namespace: str,
        messages: list[IncomingMessage],
        *,
        conversation_id: str | None = None,
        source: str = "ingest",
    ) -> list[IngestOutcome]:
        moment = self.clock.now()
        now = iso(moment)
        messages, rows = _rows(namespace, messages, conversation_id, source, moment)
        hashes = [row.client_hash for row in rows]
        # Within one request, a message sent twice (the same id) is a duplicate of its first occurrence.
        first_of: dict[str, MessageRow] = {}
        for row in rows:
            first_of.setdefault(row.client_hash, row)
        unique = list(first_of.values())
        # An undated message stored before the retry window is not what this request retries:
        # its identity is handed to the new one (the old row keeps a unique key of its own).
        undated = dict.fromkeys(h for h, message in zip(hashes, messages, strict=True) if not message.dated)
        retired = MessageStore.retire(namespace, list(undated), stored_before=iso(moment - RETRY_WINDOW))
        names = {row.id: message.name for row, message in zip(rows, messages, strict=True)}
        episodes = {row.id: episode for row in unique if (episode := episode_of(row, names[row.id]))}
        statements = [*retired, *_writes(unique, episodes, now)]
        results = (await self.db.batch(statements))[len(retired) : len(retired) + len(unique)] if unique else []
        inserted = {row.client_hash for row, result in zip(unique, results, strict=True) if result.changes}
        await self._embed_later(
            [episodes[row.id] for row in unique if row.client_hash in inserted and row.id in episodes],
            {row.id: message.vector for row, message in zip(rows, messages, strict=True) if message.vector},
            {row.id: message.content for row, message in zip(rows, messages, strict=True)},
        )
        existing = await self.store.ids_by_hash(namespace, [h for h in first_of if h not in inserted])
        outcomes: list[IngestOutcome] = []
        for row in rows:
            first = first_of[row.client_hash]
            if row.client_hash in inserted:
                outcomes.append(IngestOutcome(id=first.id, duplicate=first is not row))
            else:
                outcomes.append(IngestOutcome(id=existing[row.client_hash], duplicate=True))
        return outcomes

    async def ingest_dated(
        self,
        namespace: str,
        conversations: Sequence[tuple[str | None, Sequence[IncomingMessage]]],
        *,
        source: str,
        progress: Callable[[int, int], Statement],
    ) -> int:
        """Messages that each say when they were said (an import's), conversation by
        conversation, stored in one batch with ``progress(new, duplicates)``: the
        caller's record of how far it got, so that the two are written together or not at
        all. What is a duplicate is read before the batch (the batch's inserts still skip
        one that came in between). Answers how many were new."""
        now = iso(self.clock.now())
        new, names, duplicates = await self._new_rows(namespace, conversations, source)
        episodes = {row.id: episode for row in new if (episode := episode_of(row, names[row.id]))}
        await self.db.batch([*_writes(new, episodes, now), progress(len(new), duplicates)])
        await self._embed_later(list(episodes.values()), {}, {})
        return len(new)

    async def count_new(
        self, namespace: str, conversations: Sequence[tuple[str | None, Sequence[IncomingMessage]]]
    ) -> tuple[int, int]:
        """What ``ingest_dated`` would store, writing nothing: (new, duplicates)."""
        new, _, duplicates = await self._new_rows(namespace, conversations, "dry-run")
        return len(new), duplicates

    async def _new_rows(
        self, namespace: str, conversations: Sequence[tuple[str | None, Sequence[IncomingMessage]]], source: str
    ) -> tuple[list[MessageRow], dict[str, str | None], int]:
        """The rows of these dated messages not stored yet (a message twice among them
        once), who said each, and how many of them are duplicates."""
        moment = self.clock.now()
        rows: list[MessageRow] = []
        names: dict[str, str | None] = {}
        for conversation_id, said in conversations:
            assert all(m.created_at for m in said), "dated messages only"
            kept, group = _rows(namespace, list(said), conversation_id, source, moment)
            rows += group
            names.update((row.id, message.name) for row, message in zip(group, kept, strict=True))
        first_of: dict[str, MessageRow] = {}
        for row in rows:
            first_of.setdefault(row.client_hash, row)
        existing = await self.store.ids_by_hash(namespace, list(first_of))
        new = [row for hashed, row in first_of.items() if hashed not in existing]
        return new, names, len(rows) - len(new)

    async def _embed_later(
        self, stored: list[Episode], vectors: dict[str, Sequence[float]], said: dict[str, str]
    ) -> None:
        """Hand the new episodes' embedding to the background, but for those whose words
        were embedded already (and not changed by masking)."""
        if not stored:
            return
        given = {
            e.id: vectors[e.id]
            for e in stored
            if e.id in vectors and embedding_text(e.said()) == embedding_text(said[e.id])
        }
        if await self.mirror.place(given) < len(stored):
            await self.mirror.schedule_retry()


def _writes(rows: list[MessageRow], episodes: dict[str, Episode], at: str) -> list[Statement]:
    """Each new message, its episode, and its episode's place in the vector outbox."""
    return [
        *(MessageStore.insert_if_new(row) for row in rows),
        *EpisodeStore.insert_for_messages(list(episodes.values())),
        *OutboxStore.enqueue_stored_episodes(list(episodes), at),
    ]


def _rows(
    namespace: str,
    messages: list[IncomingMessage],
    conversation_id: str | None,
    source: str,
    moment: datetime,
) -> tuple[list[IncomingMessage], list[MessageRow]]:
    """The messages as they will be stored (what is private cut out: it is never
    stored, nor part of a message's identity), and their rows."""
    now = iso(moment)
    messages = [dataclasses.replace(m, content=strip_private(m.content)) for m in messages]
    rows: list[MessageRow] = []
    hashes = _ranked_hashes(messages, conversation_id)
    for index, (message, hashed) in enumerate(zip(messages, hashes, strict=True)):
        # Undated turns of one request are a millisecond apart, so that they read back in
        # the order they were sent (ids are random: at one instant their order was too).
        created_at = (
            read_time(message.created_at, f"messages[{index}].created_at")
            if message.created_at
            else iso(moment + timedelta(milliseconds=index))
        )
        rows.append(
            MessageRow(
                id=str(uuid.uuid4()),
                namespace=namespace,
                conversation_id=conversation_id,
                role=message.role,
                content=message.content,
                client_hash=hashed,
                source=source,
                model=message.model,
                metadata=to_json(message.metadata, what=f"messages[{index}].metadata") if message.metadata else None,
                created_at=created_at,
                stored_at=now,
            )
        )
    return messages, rows
