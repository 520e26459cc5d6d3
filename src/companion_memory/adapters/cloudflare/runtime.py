"""Build the Runtime of a Python Worker from its ``env``: D1, Vectorize, Workers AI.

Worker-safe on purpose: nothing here (or in the adapters it uses) imports numpy or
sqlite3 or starts threads. Vars and secrets are attributes of ``env`` (plain strings, or
JsProxy objects for JSON vars); bindings are ``env.DB``, ``env.VECTORIZE``, ``env.AI`` and
the Queue producer ``env.TASKS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from ...clock import SystemClock
from ...runtime import Runtime
from ...settings import WORKER_DEFAULT_EMBEDDING_MODEL, Settings
from ..chat.routing import Router
from ..remote.http_client import HttpxClient, upstream_timeout
from . import ffi
from .d1 import D1Database
from .fetch import FetchTransport
from .queue import CloudflareQueue
from .vectorize import VectorizeIndex
from .workers_ai import WorkersAIEmbedder, WorkersAIReranker
from .workers_ai_chat import WorkersAIChat

BINDINGS = ("DB", "VECTORIZE", "AI")
# The task queue's producer binding; optional: without it, background work waits for
# the nightly Cron run.
QUEUE_BINDING = "TASKS"


def _read(env: Any, name: str) -> Any:
    if isinstance(env, Mapping):
        return env.get(name)
    try:
        return getattr(env, name, None)
    except Exception:  # noqa: BLE001 - a JsProxy may raise something other than AttributeError
        return None


def env_settings_values(env: Any) -> dict[str, Any]:
    """Every ``Settings`` field present in ``env``, converted to plain Python values."""
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        value = ffi.to_py(_read(env, name))
        if value is not None:
            values[name] = value
    return values


def settings_from_env(env: Any) -> Settings:
    return Settings.from_env(env_settings_values(env))


def _binding(env: Any, name: str) -> Any:
    binding = _read(env, name)
    if ffi.is_js_nullish(binding):
        raise RuntimeError(f"the Worker has no {name} binding; declare it in wrangler.toml")
    return binding


def _outbound_client(settings: Settings, fetch: Any) -> httpx.AsyncClient:
    """An httpx client over the Worker's ``fetch`` (``fetch`` given, or ``js.fetch`` inside
    Pyodide); elsewhere over httpx's own transport."""
    if fetch is None and ffi.IN_PYODIDE:  # pragma: no cover - only inside Pyodide
        from js import fetch as js_fetch

        fetch = js_fetch
    transport = None if fetch is None else FetchTransport(fetch)
    return httpx.AsyncClient(transport=transport, timeout=upstream_timeout(settings))


async def build_runtime(env: Any, *, fetch: Any = None) -> Runtime:
    """This is where the Worker's ports are chosen: the runtime imports no adapter."""
    settings = settings_from_env(env)
    dimensions = settings.EMBEDDING_DIMENSIONS
    http = _outbound_client(settings, fetch)
    return Runtime(
        settings=settings,
        db=D1Database(_binding(env, "DB")),
        vectors=VectorizeIndex(_binding(env, "VECTORIZE"), dimensions=dimensions),
        embedder=WorkersAIEmbedder(
            _binding(env, "AI"),
            settings.embedding_model(WORKER_DEFAULT_EMBEDDING_MODEL),
            dimensions=dimensions,
        ),
        clock=SystemClock(),
        # workers-ai/ models answer through the AI binding here (REST elsewhere).
        router=Router(settings, http, WorkersAIChat(_binding(env, "AI"))),
        http=HttpxClient(http),
        # Cloudflare sets it on every request that reaches the Worker, replacing any a client sent.
        client_address_header="cf-connecting-ip",
        queue=None if ffi.is_js_nullish(_read(env, QUEUE_BINDING)) else CloudflareQueue(_read(env, QUEUE_BINDING)),
        reranker=(
            WorkersAIReranker(_binding(env, "AI"), settings.MEMORY_RERANKER_MODEL)
            if settings.ENABLE_MEMORY_RERANKER
            else None
        ),
    )
