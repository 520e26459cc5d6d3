"""A stored message as the nightly jobs read it: who said what, and when. The narrow
view of ``store.messages.MessageRow`` that a dream batch is made of."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Message:
    """``role`` is the speaker as the chat stored it (user, assistant, system)."""

    id: str
    role: str
    content: str
    created_at: str
