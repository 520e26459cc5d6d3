"""Long-chat folding (CONTEXT_FOLD_ENABLED): when a conversation passes
CONTEXT_FOLD_THRESHOLD_TOKENS, its oldest turns are replaced by one summary that names
its fold, and the fold keeps them word for word (``expand``) but for their ``<private>``
spans, with their anchors, the ids the gateway stored them under. Tool outputs are cut to head and tail first.

The rules of where and when are in domain/folding.py; this finds the fold the
conversation already has, folds further when it is still too long, and stores the fold.
The summary is DREAM_MODEL's when it is configured, else extractive (offline).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..clock import iso
from ..domain.chat_turn import message_text, without_private
from ..domain.folding import (
    FOLDS_KEPT_DAYS,
    Fold,
    anchors,
    estimate_tokens,
    extractive_summary,
    fold_boundary,
    head_length,
    prefix_hashes,
    summary_message,
    trimmed,
)
from ..errors import NotFound
from ..memory.config import MemoryConfig
from ..memory.model_call import JobModel
from ..ports import Clock, Database, UpstreamError
from ..store.folds import FoldStore

log = logging.getLogger("companion_memory.folding")
SUMMARY_CHARS = 1500
# How many earlier folds ``expand`` walks back through.
_CHAIN = 100

INSTRUCTIONS = f"""You fold the oldest part of a long chat between a user and their AI companion into a summary
that the companion will read instead of those turns. Keep what later turns may need: facts, decisions, promises,
open questions, names, numbers, the user's mood. Write in the language of the chat, at most {SUMMARY_CHARS}
characters, plain text, no title. If an earlier summary is given, fold it in."""


class FoldSummarizer(Protocol):
    name: str

    async def summarize(self, previous: str, messages: Sequence[Mapping[str, Any]]) -> str: ...


class ExtractiveFolds:
    name = "extractive"

    async def summarize(self, previous: str, messages: Sequence[Mapping[str, Any]]) -> str:
        return extractive_summary(previous, messages, SUMMARY_CHARS)


class ModelFolds:
    def __init__(self, model: JobModel) -> None:
        self.model = model
        self.name = f"model:{model.model}"

    async def summarize(self, previous: str, messages: Sequence[Mapping[str, Any]]) -> str:
        lines = [f"Earlier summary: {previous}", ""] if previous else []
        lines += [f"{m.get('role')}: {message_text(m)}" for m in messages if m.get("role") in ("user", "assistant")]
        body = {
            "messages": [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": "\n".join(lines)}],
            "max_tokens": 800,
            "temperature": 0.2,
        }
        try:
            text = (await self.model.ask(body)).text.strip()
        except UpstreamError as error:  # a fold never waits on a model that fails
            log.warning("fold summary by %s failed (%s); extractive instead", self.name, error)
            text = ""
        return text[:SUMMARY_CHARS] if text else extractive_summary(previous, messages, SUMMARY_CHARS)


@dataclass
class Folded:
    """The messages to send, and the fold they carry (None: nothing folded)."""

    messages: list[Mapping[str, Any]]
    fold_id: str | None = None
    folded: int = 0
    notes: list[str] = field(default_factory=list)


class Folding:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        config: MemoryConfig,
        summarizer: FoldSummarizer,
        new_id: Callable[[], str] = lambda: str(uuid.uuid4()),
    ) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.summarizer = summarizer
        self.new_id = new_id
        self.store = FoldStore(db)

    async def fold(self, namespace: str, messages: Sequence[Mapping[str, Any]]) -> Folded:
        sent = [trimmed(m) for m in messages]
        head = head_length(messages)
        hashes = prefix_hashes(messages)
        now = iso(self.clock.now())
        fold = await self.store.latest(namespace, hashes[head + 1 :])
        start = head if fold is None else fold.upto
        summary = "" if fold is None else fold.summary
        kept = sent[start:]
        if estimate_tokens([*sent[:head], {"content": summary}, *kept]) > self.config.context_fold_threshold_tokens:
            end = fold_boundary(messages, start, self.config.context_fold_keep_turns)
            if end is not None:
                fold = await self._fold(namespace, messages, sent, fold, start, end, hashes[end], now)
        if fold is None:
            return Folded(messages=sent)
        await self.db.batch([FoldStore.touch(fold.id, now)])
        folded = fold.upto - head
        return Folded(
            messages=[*sent[:head], summary_message(fold.id, folded, fold.summary), *sent[fold.upto :]],
            fold_id=fold.id,
            folded=folded,
        )

    async def _fold(
        self,
        namespace: str,
        messages: Sequence[Mapping[str, Any]],
        sent: list[Any],
        previous: Fold | None,
        start: int,
        end: int,
        prefix_hash: str,
        now: str,
    ) -> Fold:
        # A fold is stored: what the owner marked private is neither kept nor summarised, so
        # the model no longer sees it once its turns are folded.
        folded = [without_private(m) for m in sent[start:end]]
        summary = await self.summarizer.summarize(previous.summary if previous else "", folded)
        fold = Fold(
            id=self.new_id(),
            namespace=namespace,
            prefix_hash=prefix_hash,
            upto=end,
            summary=summary,
            summarizer=self.summarizer.name,
            messages=[without_private(m) for m in messages[start:end]],
            anchors=anchors(messages, start, end),
            previous_id=previous.id if previous else None,
            created_at=now,
            used_at=now,
        )
        await self.db.batch([FoldStore.insert(fold)])
        # Another request may have folded the same messages first: its summary stands.
        return await self.store.latest(namespace, [prefix_hash]) or fold

    async def expand(self, fold_id: str) -> Fold:
        """A fold with every message it stands for, word for word, oldest first, and their anchors."""
        fold = await self.store.get(fold_id)
        if fold is None:
            raise NotFound(f"fold {fold_id} not found (folds unused for {FOLDS_KEPT_DAYS} days are removed)")
        messages, found_anchors = list(fold.messages), list(fold.anchors)
        earlier = fold.previous_id
        for _ in range(_CHAIN):
            if earlier is None:
                break
            older = await self.store.get(earlier)
            if older is None:
                break
            messages, found_anchors = older.messages + messages, older.anchors + found_anchors
            earlier = older.previous_id
        return fold.replace(messages=messages, anchors=found_anchors)
