"""The Python Workers SDK (``workers``) as far as the Worker entry (``src/entry.py``) uses
it, and the entry loaded on it: its fetch, scheduled and queue handlers run in-process
over the binding fakes (``tests/fakes/worker_env.py``)."""

from __future__ import annotations

import importlib
import sys
import types
from types import SimpleNamespace
from typing import Any, ClassVar

import httpx
import pytest


class WorkerEntrypoint:
    """The SDK's base class as far as the entry uses it: the runtime sets ``env`` and ``ctx``."""

    def __init__(self, ctx: Any, env: Any) -> None:
        self.ctx = ctx
        self.env = env


class AsgiBridge:
    """``workers.asgi`` as far as the entry uses it: ``fetch(app, request, env, ctx)``. Like
    the real bridge, it refuses to stream an SSE answer without ``ctx`` (it needs
    ``ctx.waitUntil`` to finish the app after answering)."""

    calls: ClassVar[list[Any]] = []

    @staticmethod
    async def fetch(app: Any, request: Any, env: Any, ctx: Any = None) -> httpx.Response:
        AsgiBridge.calls.append(ctx)
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="https://worker.example"
        ) as client:
            response = await client.request(request.method, request.url, headers=request.headers, content=request.body)
        if response.headers.get("content-type", "").startswith("text/event-stream") and ctx is None:
            raise RuntimeError("Server-Side-Events require ctx to be passed to asgi.fetch")
        return response


def load_entry(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """``src/entry.py`` imported afresh (its runtime is built once per module) on this SDK."""
    workers = types.ModuleType("workers")
    workers.WorkerEntrypoint = WorkerEntrypoint  # type: ignore[attr-defined]
    workers.asgi = AsgiBridge  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "workers", workers)
    sys.modules.pop("entry", None)
    return importlib.import_module("entry")


async def deliver(entry: types.ModuleType, env: SimpleNamespace) -> int:
    """One round of the queue's deliveries to the entry's queue handler; how many."""
    worker = entry.Default(SimpleNamespace(), env)
    return int(await env.TASKS.deliver(worker.queue))
