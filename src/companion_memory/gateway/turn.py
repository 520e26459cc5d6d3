"""A chat turn through the gateway: route, recall, call the provider, then keep the turn.

The turn's messages and usage are written after the reply has gone out (the caller runs
``keep`` as a background task), so storage never delays an answer, and a failed call
still keeps what the user said.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..clock import iso
from ..domain.chat_turn import message_text, turn_id
from ..domain.private_spans import strip_private
from ..domain.usage import usage_of
from ..memory.ingest import IncomingMessage, MessageIngestor
from ..memory.persona import Persona
from ..memory.recall.pipeline import Recall
from ..ports import ChatCall, ChatRouter, ChatUsage, Clock, Database, Route
from ..store.usage import UsageStore
from .context import ContextAssembler
from .folding import Folding

log = logging.getLogger("companion_memory.gateway")
NAMESPACE = "default"


@dataclass
class Turn:
    """What one request needs from start to storage."""

    body: dict[str, Any]
    route: Route
    call: ChatCall
    remember: bool
    started: float = field(default_factory=time.perf_counter)
    reply: list[str] = field(default_factory=list)
    usage: ChatUsage = field(default_factory=ChatUsage)
    # Recall's embedding of the user's words: their episode reuses it, so that the chat's
    # path embeds nothing but the query.
    query_vector: list[float] | None = None


class ChatGateway:
    def __init__(
        self,
        db: Database,
        recall: Recall,
        context: ContextAssembler,
        ingestor: MessageIngestor,
        clock: Clock,
        router: ChatRouter,
        persona: Persona,
        *,
        auto_memory: bool,
        folding: Folding | None = None,
    ) -> None:
        self.db = db
        self.recall = recall
        self.context = context
        self.ingestor = ingestor
        self.clock = clock
        self.router = router
        self.persona = persona
        self.auto_memory = auto_memory
        self.folding = folding

    async def start(self, body: dict[str, Any], *, guide_dog: bool = False) -> Turn:
        """Route the request and recall for it. The guide dog never reads or writes memory."""
        chosen = self.router.route(self.router.resolve(body["model"], body, vision=guide_dog))
        if guide_dog:
            patch, query_vector, sent = "", None, body
        else:
            # The memories, the folded conversation and the persona need nothing of each other.
            (patch, query_vector), folded, persona = await asyncio.gather(
                self._patch(body) if self.auto_memory else _no_patch(), self._fold(body), self._persona()
            )
            sent = with_persona(folded, persona)
        return Turn(
            body=body,
            route=chosen,
            call=ChatCall(chosen.model, sent, patch),
            remember=not guide_dog,
            query_vector=query_vector,
        )

    async def _fold(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body with a long conversation's oldest turns folded (CONTEXT_FOLD_ENABLED).
        What is stored and answered keeps the messages as the client sent them."""
        if self.folding is None:
            return body
        try:
            folded = await self.folding.fold(NAMESPACE, body["messages"])
        except Exception:  # broad on purpose: folding must never cost the user their answer
            log.exception("folding failed; sending the conversation as it is")
            return body
        return {**body, "messages": folded.messages}

    async def _persona(self) -> str:
        """Her persona's line for the prompt; empty while every knob is at its baseline."""
        try:
            return await self.persona.prompt_line(NAMESPACE)
        except Exception:  # broad on purpose: the persona must never cost the user their answer
            log.exception("reading the persona failed; answering without it")
            return ""

    async def _patch(self, body: dict[str, Any]) -> tuple[str, list[float] | None]:
        """The memory patch for the turn, and recall's vector of the user's words."""
        said = next((message_text(m) for m in reversed(body["messages"]) if m.get("role") == "user"), "")
        # What the user marked private is not looked up either: the query is the words stored.
        query = strip_private(said)
        # The conversation as sent is in the prompt already: none of its turns is injected again.
        in_prompt = [message_text(m) for m in body["messages"]]
        try:
            # The context's standing sections do not wait for recall: they need no query.
            result, standing = await asyncio.gather(
                self.recall.run(query, namespace=NAMESPACE, account=True, in_prompt=in_prompt),
                self.context.standing(NAMESPACE),
            )
            return (await self.context.for_turn(NAMESPACE, result, standing)).text, result.query_vector
        except Exception:  # broad on purpose: memory must never cost the user their answer
            log.exception("recall failed; answering without memories")
            return "", None

    async def complete(self, turn: Turn) -> dict[str, Any]:
        completion, turn.usage = await turn.route.chat_model.complete(turn.call)
        completion["model"] = turn.body["model"]
        for choice in completion.get("choices") or []:
            turn.reply.append(_reply_text(choice.get("message") or {}))
        return completion

    async def stream(self, turn: Turn) -> AsyncIterator[dict[str, Any]]:
        """Chunks as they come; the usage chunk only when the client asked for it."""
        wants_usage = bool((turn.body.get("stream_options") or {}).get("include_usage"))
        async for chunk in turn.route.chat_model.stream(turn.call):
            chunk["model"] = turn.body["model"]
            if chunk.get("usage") and not chunk.get("choices"):
                turn.usage = usage_of(chunk["usage"])
                if wants_usage:
                    yield chunk
                continue
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    turn.reply.append(delta["content"])
            yield chunk

    async def keep(self, turn: Turn, *, failed: bool = False) -> None:
        """Store the user's message (always) and the reply (when there is one), once
        each however often the client retries within the retry window, plus a usage row."""
        if not turn.remember:
            return
        try:
            messages = turn.body["messages"]
            last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
            if last_user is None:
                return
            # Known by the conversation as sent, for the retry window only (as any message
            # ingested without an id): the same conversation again later, a new chat opened
            # with the same "good morning", is a new turn.
            key = turn_id(messages)
            stored = [
                IncomingMessage(role="user", content=message_text(last_user), retry_key=key, vector=turn.query_vector)
            ]
            reply = "".join(turn.reply)
            if reply and not failed:
                stored.append(
                    IncomingMessage(role="assistant", content=reply, retry_key=key + ":reply", model=turn.route.label)
                )
            await self.ingestor.ingest(NAMESPACE, stored, source="chat")
            if not failed:
                latency = int(1000 * (time.perf_counter() - turn.started))
                await UsageStore(self.db).add(
                    NAMESPACE,
                    turn.route.label,
                    turn.route.chat_model.provider,
                    turn.usage,
                    latency,
                    iso(self.clock.now()),
                )
        except Exception:  # broad on purpose: the reply is already out; log and move on
            log.exception("storing the chat turn failed")


async def _no_patch() -> tuple[str, list[float] | None]:
    return "", None


def with_persona(body: dict[str, Any], line: str) -> dict[str, Any]:
    """The body with her persona as a system message right after the client's own leading
    system messages: in the stable prefix every provider caches, the same bytes from turn to
    turn until a knob changes. Without a line (every knob at its baseline) the body as it is."""
    if not line:
        return body
    messages = list(body["messages"])
    at = next((n for n, m in enumerate(messages) if m.get("role") not in ("system", "developer")), len(messages))
    return {**body, "messages": [*messages[:at], {"role": "system", "content": line}, *messages[at:]]}


def _reply_text(message: Mapping[str, Any]) -> str:
    text = message_text(message)
    calls = message.get("tool_calls") or []
    if calls:
        names = ", ".join(c.get("function", {}).get("name", "?") for c in calls)
        text = f"{text}\n[tool calls: {names}]".strip()
    return text
