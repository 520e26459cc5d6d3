"""The OpenAI-compatible chat: a completion with memories, the guide dog, the model list."""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from ..domain.scopes import CHAT, GUIDE_DOG
from ..gateway.turn import NAMESPACE, ChatGateway
from ..ports import UpstreamError
from ..runtime import Runtime
from .principal import Principal
from .use_case import Input, Nothing, Output, use_case


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(Input):
    """Checked for what the gateway relies on; every other field goes to the provider."""

    model_config = ConfigDict(extra="allow")
    # The gateway recalls from and stores the turn in its one namespace.
    acts_in = (NAMESPACE,)
    model: Annotated[str, Field(min_length=1, max_length=200)]
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None


class ChatReply(Output):
    """What the provider answered, for the surface to relay: a completion; or a stream
    whose first chunk has already arrived, so that a provider that fails at once is told
    with a status rather than a broken stream; or the provider's failure. ``keep``
    stores the turn: the surface calls it once the answer is sent, so storing never
    delays the reply. Only the completion and the first chunk are JSON; the rest is for
    the surface in the same process, and out of the schema."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    completion: dict[str, Any] | None = Field(None, description="A chat.completion object.")
    first_chunk: dict[str, Any] | None = Field(None, description="A chat.completion.chunk object.")
    chunks: SkipJsonSchema[AsyncIterator[dict[str, Any]] | None] = Field(None, exclude=True)
    error: SkipJsonSchema[UpstreamError | None] = Field(None, exclude=True)
    keep: SkipJsonSchema[Callable[[], Awaitable[None]] | None] = Field(None, exclude=True)


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelList(Output):
    object: Literal["list"] = "list"
    data: list[ModelCard]


async def _reply(gateway: ChatGateway, request: ChatRequest, *, guide_dog: bool) -> ChatReply:
    body = request.model_dump(exclude_unset=True)
    try:
        turn = await gateway.start(body, guide_dog=guide_dog)
    except UpstreamError as error:
        return ChatReply(error=error)
    failed = functools.partial(gateway.keep, turn, failed=True)
    kept = functools.partial(gateway.keep, turn)
    if not request.stream:
        try:
            return ChatReply(completion=await gateway.complete(turn), keep=kept)
        except UpstreamError as error:
            return ChatReply(error=error, keep=failed)
    chunks = gateway.stream(turn)
    try:
        first = await anext(chunks)
    except StopAsyncIteration:
        first = None
    except UpstreamError as error:
        return ChatReply(error=error, keep=failed)
    return ChatReply(first_chunk=first, chunks=chunks, keep=kept)


@use_case("chat.complete", CHAT)
async def complete(runtime: Runtime, _: Principal, request: ChatRequest) -> ChatReply:
    """Recall for the last user message, answer through the configured provider, keep the turn."""
    return await _reply(runtime.gateway, request, guide_dog=False)


@use_case("chat.guide_dog", GUIDE_DOG)
async def guide_dog(runtime: Runtime, _: Principal, request: ChatRequest) -> ChatReply:
    """Forwards to the vision model; never reads or writes memory, never stores the chat."""
    return await _reply(runtime.gateway, request, guide_dog=True)


@use_case("chat.models", CHAT)
async def models(runtime: Runtime, _: Principal, __: Nothing) -> ModelList:
    """The one model this gateway offers, under its public name."""
    card = ModelCard(id=runtime.settings.PUBLIC_MODEL_NAME, created=int(time.time()), owned_by="companion-memory")
    return ModelList(data=[card])
