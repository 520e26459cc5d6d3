"""Episodes as the write path stores them: the row, and its vector in the index."""

from __future__ import annotations

import uuid

from companion_memory.clock import iso
from companion_memory.domain.episode import EPISODE_KIND, Episode
from companion_memory.domain.search_text import embedding_text
from companion_memory.ports import VectorRecord
from companion_memory.runtime import Runtime
from companion_memory.store.episodes import EpisodeStore


async def said(
    runtime: Runtime,
    content: str,
    *,
    role: str = "user",
    at: str | None = None,
    conversation_id: str | None = None,
    namespace: str = "default",
    source: str = "ingest",
) -> Episode:
    now = iso(runtime.clock.now())
    episode = Episode(
        id=str(uuid.uuid4()),
        namespace=namespace,
        conversation_id=conversation_id,
        role=role,
        source=source,
        content=content,
        created_at=at or now,
        stored_at=now,
    )
    await runtime.db.batch([EpisodeStore.insert_if_new(episode)])
    vector = (await runtime.embedder.embed([embedding_text(content)], kind="passage"))[0]
    metadata = {"namespace": namespace, "status": "active", "kind": EPISODE_KIND, "type": EPISODE_KIND, "role": role}
    await runtime.vectors.upsert([VectorRecord(episode.id, vector, metadata)])
    return episode
