"""What of a stored message becomes its episode.

The message row keeps what the dream reads (``<private>`` spans already cut, secrets
kept: the dream's own filter refuses them in memories); the episode, which recall and
search hand to models and to other keys, has each secret replaced by a mark naming its
class (memory/sensitive.py). A message with nothing left to recall has no episode.
"""

from __future__ import annotations

import dataclasses

from ..domain.episode import Episode
from ..domain.private_spans import strip_private
from ..ports import Statement
from ..store.episodes import EpisodeStore
from ..store.messages import MessageRow, MessageStore
from ..store.outbox import OutboxStore
from .sensitive import mask_sensitive


def episode_of(message: MessageRow, speaker: str | None = None) -> Episode | None:
    content, sensitive = mask_sensitive(message.content)
    if not content.strip():
        return None
    return Episode(
        id=message.id,
        namespace=message.namespace,
        conversation_id=message.conversation_id,
        role=message.role,
        speaker=speaker,
        source=message.source,
        content=content,
        sensitive=sensitive,
        created_at=message.created_at,
        stored_at=message.stored_at,
    )


def backfilled(messages: list[MessageRow], at: str) -> tuple[list[Statement], int]:
    """The episodes of messages stored before episodes were, queued to be embedded, and
    how many there are. A private span such a message still holds is cut from it too."""
    statements: list[Statement] = []
    made: list[str] = []
    for message in messages:
        kept = strip_private(message.content)
        if kept != message.content:
            statements.append(MessageStore.rewrite(message.id, kept))
        if episode := episode_of(dataclasses.replace(message, content=kept)):
            statements.append(EpisodeStore.insert_if_new(episode))
            made.append(episode.id)
    return statements + OutboxStore.enqueue_stored_episodes(made, at), len(made)
