"""Forgetting episodes: by id, by conversation, by time range (INTERIM, epsurf's stand-in).

The epwrite helper builds the real service (vectors first through the outbox's 'purge',
then the rows, as memories are); this stand-in has its signature so that the surfaces
can be built and tested beside it, and goes when that lands.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ports import Database, VectorIndex
from ..store.episodes import EpisodeStore
from ..store.sql import chunks, placeholders


class EpisodeForgetter:
    def __init__(self, db: Database, vectors: VectorIndex) -> None:
        self.db = db
        self.vectors = vectors

    async def forget(
        self,
        namespace: str,
        *,
        ids: Sequence[str] = (),
        conversation_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> int:
        conditions, params = ["namespace = ?"], [namespace]
        if conversation_id is not None:
            conditions.append("conversation_id = ?")
            params.append(conversation_id)
        if since is not None and until is not None:
            conditions += ["created_at >= ?", "created_at < ?"]
            params += [since, until]
        found: list[str] = []
        if ids:
            for part in chunks(list(ids)):
                rows = await self.db.all(
                    f"SELECT id FROM episodes WHERE {' AND '.join(conditions)} AND id IN ({placeholders(len(part))})",
                    (*params, *part),
                )
                found += [r["id"] for r in rows]
        else:
            found = [
                r["id"]
                for r in await self.db.all(f"SELECT id FROM episodes WHERE {' AND '.join(conditions)}", tuple(params))
            ]
        for part in chunks(found):
            await self.vectors.delete(list(part))
            await self.db.batch(EpisodeStore.delete_rows(part))
        return len(found)
