"""Which provider, wire format and model name a chat request goes to.

This is the one place that reads a model label. ``ROUTES`` is a table from what a
label looks like to the factory that builds its chat model:

- ``anthropic/claude-…`` → the Anthropic Messages API through the AI Gateway;
- ``custom-<slug>/claude-…`` (also ``custom-<slug>/anthropic/claude-…``, OpenRouter's
  name) → that gateway custom provider's native messages path, so Claude keeps its
  format and prompt cache through OpenRouter;
- ``workers-ai/@cf/…`` → the Worker's AI binding, or Workers AI's REST API elsewhere;
- anything else → an OpenAI-compatible ``/chat/completions``: ``CHAT_BASE_URL`` when
  set, else the AI Gateway's ``/compat`` endpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ...ports import ChatModel, Route, UpstreamError
from ...settings import Settings
from .anthropic.model import AnthropicChatModel
from .openai_compatible import OpenAICompatChatModel

# Provider parts of a label (what comes before the first "/").
WORKERS_AI = "workers-ai"
ANTHROPIC = "anthropic"
CUSTOM_PROVIDER = "custom-"
ANTHROPIC_VERSION = "2023-06-01"


def has_image(body: Mapping[str, Any]) -> bool:
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list) and any(
            isinstance(part, Mapping) and part.get("type") in ("image_url", "image", "input_image") for part in content
        ):
            return True
    return False


def resolve_model(requested: str, body: Mapping[str, Any], settings: Settings, *, vision: bool = False) -> str:
    """The configured model a request means: the public name stands for CHAT_MODEL, or
    VISION_MODEL when the request carries an image. The guide dog (``vision``) always
    gets VISION_MODEL: its key spends the owner's provider credentials, so it may not
    name a model of its own."""
    if vision:
        return settings.VISION_MODEL
    if requested != settings.PUBLIC_MODEL_NAME:
        return requested
    return settings.VISION_MODEL if has_image(body) else settings.CHAT_MODEL


def _not_configured(variables: str, label: str) -> UpstreamError:
    return UpstreamError(f"no upstream is configured for {label!r}: set {variables}", status=503, code="not_configured")


def _gateway(settings: Settings, label: str) -> tuple[str, dict[str, str]]:
    """The AI Gateway's base URL and the header that authenticates us to it (provider
    keys live in the gateway)."""
    if not settings.AI_GATEWAY_BASE_URL:
        raise _not_configured("AI_GATEWAY_BASE_URL (and CF_AIG_TOKEN) to reach it through Cloudflare AI Gateway", label)
    headers = {"cf-aig-authorization": f"Bearer {settings.CF_AIG_TOKEN}"} if settings.CF_AIG_TOKEN else {}
    return settings.AI_GATEWAY_BASE_URL.rstrip("/"), headers


def _is_claude(model: str) -> bool:
    return model.rpartition("/")[2].startswith("claude")


@dataclass(frozen=True)
class _Context:
    label: str
    model: str  # the label without its provider part
    settings: Settings
    http: httpx.AsyncClient
    workers_ai: ChatModel | None


def _anthropic(c: _Context) -> Route:
    base, headers = _gateway(c.settings, c.label)
    url = f"{base}/anthropic/v1/messages"
    model = AnthropicChatModel(c.http, url, {**headers, "anthropic-version": ANTHROPIC_VERSION}, settings=c.settings)
    return Route(model, c.model, c.label)


def _custom_anthropic(c: _Context) -> Route:
    provider = c.label.partition("/")[0]
    base, headers = _gateway(c.settings, c.label)
    url = f"{base}/{provider}/{c.settings.CUSTOM_ANTHROPIC_MESSAGES_PATH.strip('/')}"
    model = AnthropicChatModel(
        c.http, url, {**headers, "anthropic-version": ANTHROPIC_VERSION}, settings=c.settings, provider=provider
    )
    return Route(model, c.model, c.label)


def _workers_ai(c: _Context) -> Route:
    if c.workers_ai is not None:
        return Route(c.workers_ai, c.model, c.label)
    # Elsewhere Workers AI speaks OpenAI chat completions on its REST API.
    settings = c.settings
    if not (settings.CLOUDFLARE_ACCOUNT_ID and settings.CLOUDFLARE_API_TOKEN):
        raise _not_configured("CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN", c.label)
    url = f"https://api.cloudflare.com/client/v4/accounts/{settings.CLOUDFLARE_ACCOUNT_ID}/ai/v1/chat/completions"
    headers = {"authorization": f"Bearer {settings.CLOUDFLARE_API_TOKEN}"}
    return Route(OpenAICompatChatModel(c.http, url, headers, "Workers AI"), c.model, c.label)


def _openai_compatible(c: _Context) -> Route:
    settings = c.settings
    if settings.CHAT_BASE_URL:
        url = settings.CHAT_BASE_URL.rstrip("/") + "/chat/completions"
        headers = {"authorization": f"Bearer {settings.CHAT_API_KEY}"} if settings.CHAT_API_KEY else {}
        return Route(OpenAICompatChatModel(c.http, url, headers, "the chat endpoint"), c.label, c.label)
    if not settings.AI_GATEWAY_BASE_URL:
        raise _not_configured("AI_GATEWAY_BASE_URL (and CF_AIG_TOKEN), or CHAT_BASE_URL for a local model", c.label)
    base, headers = _gateway(settings, c.label)
    return Route(
        OpenAICompatChatModel(c.http, base + "/compat/chat/completions", headers, "the AI Gateway"), c.label, c.label
    )


# (provider, model) of a label → its factory; first match wins, and a label no row
# matches is OpenAI-compatible.
ROUTES: tuple[tuple[Callable[[str, str], bool], Callable[[_Context], Route]], ...] = (
    (lambda provider, model: provider == ANTHROPIC and _is_claude(model), _anthropic),
    (lambda provider, model: provider.startswith(CUSTOM_PROVIDER) and _is_claude(model), _custom_anthropic),
    (lambda provider, model: provider == WORKERS_AI and bool(model), _workers_ai),
)


def route(label: str, settings: Settings, http: httpx.AsyncClient, workers_ai: ChatModel | None = None) -> Route:
    """``workers_ai`` is the Worker's ``AI`` binding as a chat model, when there is one."""
    provider, _, model = label.partition("/")
    factory = next((build for matches, build in ROUTES if matches(provider, model)), _openai_compatible)
    return factory(_Context(label, model, settings, http, workers_ai))


@dataclass(frozen=True)
class Router:
    """The ``ChatRouter`` the gateway and the jobs are given: labels read with these settings."""

    settings: Settings
    http: httpx.AsyncClient
    workers_ai: ChatModel | None = None

    def resolve(self, requested: str, body: Mapping[str, Any], *, vision: bool = False) -> str:
        return resolve_model(requested, body, self.settings, vision=vision)

    def route(self, label: str) -> Route:
        return route(label, self.settings, self.http, self.workers_ai)
