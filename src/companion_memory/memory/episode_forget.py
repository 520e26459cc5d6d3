"""The owner forgets what was said: an episode, a conversation, or a time range.

What is forgotten is the episode and its raw message, gone for good. Its words are
emptied at once (out of search and the word channels), its vector is removed through the
outbox ('purge'), and only then its rows, as a memory's are: a failing index keeps the
emptied rows until the vector can follow. Memories the dream already made of those
words stay: they are forgotten as memories are (the memory's own delete).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..clock import iso
from ..errors import InvalidInput
from ..ports import Clock, Database
from ..store.episodes import EpisodeStore
from ..store.messages import MessageStore
from ..store.outbox import OutboxStore
from .vector_mirror import VectorMirror

# Episodes whose vectors are removed within the call; a larger forget (a long range)
# finishes in the background.
NOW_AT_MOST = 500
_BATCH = 200


class EpisodeForgetter:
    def __init__(self, db: Database, mirror: VectorMirror, clock: Clock) -> None:
        self.db = db
        self.mirror = mirror
        self.clock = clock
        self.store = EpisodeStore(db)

    async def forget(
        self,
        namespace: str,
        *,
        ids: Sequence[str] = (),
        conversation_id: str | None = None,
        since: str | None = None,
        until: str | None = None,
    ) -> int:
        """Forget the episodes (and messages) of ``namespace`` named by ``ids``, or of
        ``conversation_id``, or said in [``since``, ``until``), each narrowing the others;
        returns how many. Naming nothing is refused (it would forget everything)."""
        if not (ids or conversation_id or since or until):
            raise InvalidInput("name what to forget: ids, a conversation_id, or a since/until range")
        if since and until and until <= since:
            raise InvalidInput("until must be after since")
        episodes, messages = await self.store.chosen(
            namespace, ids=ids, conversation_id=conversation_id, since=since, until=until
        )
        at = iso(self.clock.now())
        for start in range(0, len(episodes), _BATCH):
            part = episodes[start : start + _BATCH]
            await self.db.batch(
                [
                    *EpisodeStore.blank(part),
                    *(OutboxStore.enqueue(i, namespace, "purge", at, "episode") for i in part),
                ]
            )
        if messages:  # a message without an episode has no vector: it goes at once
            await self.db.batch(MessageStore.delete(messages))
        await self.mirror.sync(episodes[:NOW_AT_MOST])
        if len(episodes) > NOW_AT_MOST:
            await self.mirror.schedule_retry()
        return len(episodes) + len(messages)
