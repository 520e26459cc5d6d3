"""The OpenAI-compatible chat surface: /v1/chat/completions, /v1/models and the guide dog."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.background import BackgroundTask

from ..adapters.chat.sse import format_sse
from ..application import chat
from ..application.chat import ChatReply, ChatRequest, ModelList
from ..application.principal import Principal
from ..application.use_case import Nothing
from ..ports import UpstreamError
from .auth import allowed
from .deps import RuntimeDep
from .json_body import JsonRoute

router = APIRouter(tags=["chat"], route_class=JsonRoute)


def upstream_error(error: UpstreamError) -> JSONResponse:
    kind = "invalid_request_error" if error.status < 500 else "api_error"
    return JSONResponse(
        {"error": {"message": error.message, "type": kind, "code": error.code, "param": None}}, error.status
    )


def _response(reply: ChatReply) -> Response:
    background = BackgroundTask(reply.keep) if reply.keep else None
    if reply.error is not None:
        response = upstream_error(reply.error)
        response.background = background
        return response
    if reply.chunks is None:
        return JSONResponse(reply.completion, background=background)
    return StreamingResponse(
        _relay(reply.first_chunk, reply.chunks),
        media_type="text/event-stream",
        headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        background=background,
    )


async def _relay(first: dict[str, Any] | None, chunks: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    if first is not None:
        yield format_sse(first)
    try:
        async for chunk in chunks:
            yield format_sse(chunk)
    except UpstreamError as error:  # mid-stream: the status is sent; say it in the stream
        yield format_sse({"error": {"message": error.message, "type": "api_error", "code": error.code}})
    yield format_sse("[DONE]")


@router.get("/v1/models")
async def models(runtime: RuntimeDep, principal: Annotated[Principal, allowed(chat.models)]) -> ModelList:
    return await chat.models(runtime, principal, Nothing())


@router.post("/v1/chat/completions")
async def chat_completions(
    request: ChatRequest, runtime: RuntimeDep, principal: Annotated[Principal, allowed(chat.complete)]
) -> Response:
    """Recall for the last user message, answer through the configured provider, keep the turn."""
    return _response(await chat.complete(runtime, principal, request))


@router.post("/v1/guide-dog/chat/completions")
async def guide_dog(
    request: ChatRequest, runtime: RuntimeDep, principal: Annotated[Principal, allowed(chat.guide_dog)]
) -> Response:
    """Forwards to the vision model; never reads or writes memory, never stores the chat."""
    return _response(await chat.guide_dog(runtime, principal, request))
