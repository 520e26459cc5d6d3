"""Which provider, wire format and model name a chat request goes to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..ports import ChatModel, UpstreamError
from ..settings import Settings
from .openai_compat import OpenAICompatChatModel

WORKERS_AI = "workers-ai/"
ANTHROPIC = "anthropic/"
CUSTOM_PROVIDER = "custom-provider/"


@dataclass(frozen=True)
class Route:
    chat_model: ChatModel
    model: str  # the name the provider knows
    label: str  # the configured name, as logged


def has_image(body: Mapping[str, Any]) -> bool:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list) and any(
            isinstance(part, Mapping) and part.get("type") in ("image_url", "image", "input_image") for part in content
        ):
            return True
    return False


def _not_configured(variables: str, label: str) -> UpstreamError:
    return UpstreamError(f"no upstream is configured for {label!r}: set {variables}", status=503, code="not_configured")


def _gateway_headers(settings: Settings) -> dict[str, str]:
    return {"cf-aig-authorization": f"Bearer {settings.CF_AIG_TOKEN}"} if settings.CF_AIG_TOKEN else {}


def resolve_model(requested: str, body: Mapping[str, Any], settings: Settings, *, vision: bool = False) -> str:
    """The configured model a request means: the public name stands for CHAT_MODEL, or
    VISION_MODEL when the request carries an image (or comes through the guide dog)."""
    if requested != settings.PUBLIC_MODEL_NAME:
        return requested
    return settings.VISION_MODEL if vision or has_image(body) else settings.CHAT_MODEL


def route(label: str, settings: Settings, http: httpx.AsyncClient, workers_ai: ChatModel | None = None) -> Route:
    """``workers_ai`` is the Worker's ``AI`` binding as a chat model, when there is one."""
    if label.startswith((ANTHROPIC + "claude", CUSTOM_PROVIDER + "claude")):
        from .anthropic import anthropic_model

        return anthropic_model(http, settings, label)
    if label.startswith(WORKERS_AI):
        if workers_ai is not None:
            return Route(workers_ai, label.removeprefix(WORKERS_AI), label)
        # Elsewhere Workers AI speaks OpenAI chat completions on its REST API.
        if not (settings.CLOUDFLARE_ACCOUNT_ID and settings.CLOUDFLARE_API_TOKEN):
            raise _not_configured("CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN", label)
        url = f"https://api.cloudflare.com/client/v4/accounts/{settings.CLOUDFLARE_ACCOUNT_ID}/ai/v1/chat/completions"
        headers = {"authorization": f"Bearer {settings.CLOUDFLARE_API_TOKEN}"}
        return Route(OpenAICompatChatModel(http, url, headers, "Workers AI"), label.removeprefix(WORKERS_AI), label)
    if settings.CHAT_BASE_URL:
        url = settings.CHAT_BASE_URL.rstrip("/") + "/chat/completions"
        headers = {"authorization": f"Bearer {settings.CHAT_API_KEY}"} if settings.CHAT_API_KEY else {}
        return Route(OpenAICompatChatModel(http, url, headers, "the chat endpoint"), label, label)
    if settings.AI_GATEWAY_BASE_URL:
        url = settings.AI_GATEWAY_BASE_URL.rstrip("/") + "/compat/chat/completions"
        return Route(OpenAICompatChatModel(http, url, _gateway_headers(settings), "the AI Gateway"), label, label)
    raise _not_configured("AI_GATEWAY_BASE_URL (and CF_AIG_TOKEN), or CHAT_BASE_URL for a local model", label)
