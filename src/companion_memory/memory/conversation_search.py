"""conversation_search: the turns of past conversations that answer a query, in Letta's
shape (a query, the roles, a time range, a conversation), most relevant first.

It is recall's pipeline over the episodes alone (memory/recall/: meaning, words and
substrings, fused; reranked when a reranker is configured), as search runs it: nothing is
counted as injected, and archived episodes are found by their meaning too. No relation
expansion: a turn is returned because it matches, not because it sits beside one that does.
"""

from __future__ import annotations

from ..domain.episode import Episode
from ..store.episode_search import EpisodeScope
from .recall.pipeline import Recall


class ConversationSearch:
    def __init__(self, recall: Recall) -> None:
        self.recall = recall

    async def search(self, namespace: str, query: str, scope: EpisodeScope, *, limit: int) -> list[Episode]:
        result = await self.recall.run(
            query,
            namespace=namespace,
            k=limit,
            min_score=0.0,
            memories=False,
            episodes=scope,
            resting=True,
            expand=False,
        )
        return [hit.episode for hit in result.hits if hit.episode is not None]
