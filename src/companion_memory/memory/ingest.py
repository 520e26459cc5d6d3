"""Store raw chat messages, once each. Extraction into memories happens in the dream."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

from ..clock import iso, read_time
from ..ports import Clock, Database
from ..store.messages import MessageRow, MessageStore
from ..store.sql import to_json


@dataclass(frozen=True)
class IncomingMessage:
    role: str
    content: str
    # A client's own id for the message; the strongest idempotency key when present.
    id: str | None = None
    created_at: str | None = None
    model: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class IngestOutcome:
    id: str
    duplicate: bool


def client_hash(message: IncomingMessage, conversation_id: str | None) -> str:
    """The identity of a message for idempotency: the client's id if it sent one, else
    what the message says, where, and when (if the client said when)."""
    if message.id:
        key = f"id\x00{message.id}"
    else:
        key = "\x00".join(("msg", conversation_id or "", message.role, message.content, message.created_at or ""))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class MessageIngestor:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.store = MessageStore(db)

    async def ingest(
        self,
        namespace: str,
        messages: list[IncomingMessage],
        *,
        conversation_id: str | None = None,
        source: str = "ingest",
    ) -> list[IngestOutcome]:
        now = iso(self.clock.now())
        rows: list[MessageRow] = []
        for index, message in enumerate(messages):
            created_at = read_time(message.created_at, f"messages[{index}].created_at") if message.created_at else now
            rows.append(
                MessageRow(
                    id=str(uuid.uuid4()),
                    namespace=namespace,
                    conversation_id=conversation_id,
                    role=message.role,
                    content=message.content,
                    client_hash=client_hash(message, conversation_id),
                    source=source,
                    model=message.model,
                    metadata=to_json(message.metadata, what=f"messages[{index}].metadata")
                    if message.metadata
                    else None,
                    created_at=created_at,
                    stored_at=now,
                )
            )
        # Within one request, a repeated message is a duplicate of its first occurrence.
        first_of: dict[str, MessageRow] = {}
        for row in rows:
            first_of.setdefault(row.client_hash, row)
        unique = list(first_of.values())
        results = await self.db.batch([MessageStore.insert_if_new(r) for r in unique]) if unique else []
        inserted = {row.client_hash for row, result in zip(unique, results, strict=False) if result.changes}
        existing = await self.store.ids_by_hash(namespace, [h for h in first_of if h not in inserted])
        outcomes: list[IngestOutcome] = []
        for row in rows:
            first = first_of[row.client_hash]
            if row.client_hash in inserted:
                outcomes.append(IngestOutcome(id=first.id, duplicate=first is not row))
            else:
                outcomes.append(IngestOutcome(id=existing[row.client_hash], duplicate=True))
        return outcomes
