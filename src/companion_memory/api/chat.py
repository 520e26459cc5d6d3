"""The OpenAI-compatible chat surface: /v1/chat/completions, /v1/models and the guide dog."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.background import BackgroundTask

from ..adapters.chat.sse import format_sse
from ..ports import UpstreamError
from ..proxy.gateway import ChatGateway, Turn
from .auth import CHAT, GUIDE_DOG, Principal, requires
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["chat"], route_class=JsonRoute)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """Checked for what the gateway relies on; every other field goes to the provider."""

    model_config = ConfigDict(extra="allow")
    model: Annotated[str, Field(min_length=1, max_length=200)]
    messages: Annotated[list[ChatMessage], Field(min_length=1)]
    stream: bool = False
    stream_options: StreamOptions | None = None


def upstream_error(error: UpstreamError) -> JSONResponse:
    kind = "invalid_request_error" if error.status < 500 else "api_error"
    return JSONResponse(
        {"error": {"message": error.message, "type": kind, "code": error.code, "param": None}}, error.status
    )


async def _answer(gateway: ChatGateway, body: dict[str, Any], *, guide_dog: bool) -> Any:
    try:
        turn = await gateway.start(body, guide_dog=guide_dog)
    except UpstreamError as error:
        return upstream_error(error)
    if not body.get("stream"):
        try:
            completion = await gateway.complete(turn)
        except UpstreamError as error:
            response = upstream_error(error)
            response.background = BackgroundTask(gateway.keep, turn, failed=True)
            return response
        return JSONResponse(completion, background=BackgroundTask(gateway.keep, turn))
    chunks = gateway.stream(turn)
    try:
        # The first chunk is awaited here, so that a provider that fails at once gets
        # a proper error status instead of a broken stream.
        first = await anext(chunks)
    except StopAsyncIteration:
        first = None
    except UpstreamError as error:
        response = upstream_error(error)
        response.background = BackgroundTask(gateway.keep, turn, failed=True)
        return response
    return StreamingResponse(
        _relay(first, chunks, turn),
        media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        background=BackgroundTask(gateway.keep, turn),
    )


async def _relay(
    first: dict[str, Any] | None, chunks: AsyncIterator[dict[str, Any]], turn: Turn
) -> AsyncIterator[bytes]:
    if first is not None:
        yield format_sse(first)
    try:
        async for chunk in chunks:
            yield format_sse(chunk)
    except UpstreamError as error:  # mid-stream: the status is sent; say it in the stream
        yield format_sse({"error": {"message": error.message, "type": "api_error", "code": error.code}})
    yield format_sse("[DONE]")


@router.get("/v1/models")
async def models(runtime: RuntimeDep, _: Annotated[Principal, requires(CHAT)]) -> dict[str, Any]:
    name = runtime.settings.PUBLIC_MODEL_NAME
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": int(time.time()), "owned_by": "companion-memory"}],
    }


@router.post("/v1/chat/completions")
async def chat_completions(request: ChatRequest, runtime: RuntimeDep, _: Annotated[Principal, requires(CHAT)]) -> Any:
    """Recall for the last user message, answer through the configured provider, keep the turn."""
    return await _answer(runtime.gateway, request.model_dump(exclude_unset=True), guide_dog=False)


@router.post("/v1/guide-dog/chat/completions")
async def guide_dog(request: ChatRequest, runtime: RuntimeDep, _: Annotated[Principal, requires(GUIDE_DOG)]) -> Any:
    """Forwards to the vision model; never reads or writes memory, never stores the chat."""
    return await _answer(runtime.gateway, request.model_dump(exclude_unset=True), guide_dog=True)
