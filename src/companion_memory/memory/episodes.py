"""What of a stored message becomes its episode.

The message row keeps what the dream reads (``<private>`` spans already cut, secrets
kept: the dream's own filter refuses them in memories); the episode, which recall and
search hand to models and to other keys, has each secret replaced by a mark naming its
class (memory/sensitive.py). A message with nothing left to recall has no episode.
"""

from __future__ import annotations

from ..domain.episode import Episode
from ..store.messages import MessageRow
from .sensitive import mask_sensitive


def episode_of(message: MessageRow) -> Episode | None:
    content, sensitive = mask_sensitive(message.content)
    if not content.strip():
        return None
    return Episode(
        id=message.id,
        namespace=message.namespace,
        conversation_id=message.conversation_id,
        role=message.role,
        source=message.source,
        content=content,
        sensitive=sensitive,
        created_at=message.created_at,
        stored_at=message.stored_at,
    )
