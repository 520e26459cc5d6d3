"""The Cloudflare Python Worker entry point (``main`` in wrangler.jsonc).

Every HTTP request goes to the FastAPI app through the ASGI server that the Python
Workers SDK provides. The runtime and the app are built once per isolate and reused.
"""

from __future__ import annotations

import asyncio
from typing import Any

from workers import WorkerEntrypoint

_app: Any = None
_app_lock: asyncio.Lock | None = None


async def _get_app(env: Any) -> Any:
    global _app, _app_lock
    if _app is not None:
        return _app
    if _app_lock is None:
        _app_lock = asyncio.Lock()
    async with _app_lock:
        if _app is None:
            # build_runtime needs self.env, which only exists once a request arrives.
            from companion_memory.adapters.cloudflare.runtime import build_runtime
            from companion_memory.api.app import create_app

            _app = create_app(await build_runtime(env))
    return _app


class Default(WorkerEntrypoint):
    async def fetch(self, request: Any) -> Any:
        try:
            from workers import asgi  # current SDK
        except ImportError:  # older runtimes ship the server as a top-level module
            import asgi

        app = await _get_app(self.env)
        return await asgi.fetch(app, request, self.env)
