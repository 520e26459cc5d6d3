"""The Cloudflare Python Worker entry point (``main`` in wrangler.toml).

- ``fetch``: the admin panel's files come from the static assets; every other request
  goes to the FastAPI app through the ASGI bridge of the Python Workers SDK.
- ``scheduled``: the Cron trigger (``10 20 * * *``) runs the nightly job (``nightly.run``).
- ``queue``: the task queue's deliveries (vector-mirror retries, reindex, retention
  backlog), acked or retried one by one (``tasks.handle``). Both act as the owner
  (``SYSTEM``), as the local scheduler and the command line do.

The runtime and the app are built once per isolate and reused. The handlers take
``env``/``ctx`` as optional arguments because SDK versions differ in passing them; the
bindings are read from ``self.env`` either way.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from workers import WorkerEntrypoint

_runtime: Any = None
_app: Any = None
_lock: asyncio.Lock | None = None


async def _get_runtime(env: Any) -> Any:
    global _runtime, _lock
    if _runtime is not None:
        return _runtime
    if _lock is None:
        _lock = asyncio.Lock()
    async with _lock:
        if _runtime is None:
            # Imported here: build_runtime needs self.env, which exists only once the
            # runtime calls a handler, and a cold start should not pay for unused imports.
            from companion_memory.adapters.cloudflare.runtime import build_runtime

            _runtime = await build_runtime(env)
    return _runtime


async def _get_app(env: Any) -> Any:
    global _app
    runtime = await _get_runtime(env)
    # No await between the check and the assignment: concurrent first requests build one app.
    if _app is None:
        from companion_memory.api.app import create_app

        _app = create_app(runtime)
    return _app


class Default(WorkerEntrypoint):
    async def fetch(self, request: Any) -> Any:
        try:
            from workers import asgi  # current SDK
        except ImportError:  # older runtimes ship the bridge as a top-level module
            import asgi

        from companion_memory.adapters.cloudflare.assets import panel_asset_url

        asset = panel_asset_url(str(request.method), str(request.url))
        if asset is not None:
            return await self.env.ASSETS.fetch(asset)
        app = await _get_app(self.env)
        # The bridge answers a streamed (SSE) response before the app has finished and
        # keeps the rest alive with ctx.waitUntil: without ctx it refuses to stream.
        # Bridges older than that take no ctx.
        if len(inspect.signature(asgi.fetch).parameters) >= 4:
            return await asgi.fetch(app, request, self.env, self.ctx)
        return await asgi.fetch(app, request, self.env)

    async def scheduled(self, controller: Any, env: Any = None, ctx: Any = None) -> None:
        from companion_memory.application.dream import NightlyTrigger, nightly
        from companion_memory.application.principal import SYSTEM

        runtime = await _get_runtime(self.env)
        trigger = NightlyTrigger(trigger=f"cron {getattr(controller, 'cron', '')}".strip())
        run = await nightly(runtime, SYSTEM, trigger)
        print(
            f"nightly job {'succeeded' if run.ok else 'had failures'}: "
            + ", ".join(f"{step.name} {'ok' if step.ok else 'FAILED'}" for step in run.steps)
        )

    async def queue(self, batch: Any, env: Any = None, ctx: Any = None) -> None:
        from companion_memory.adapters.cloudflare.queue import batch_messages
        from companion_memory.application.principal import SYSTEM
        from companion_memory.application.tasks import Deliveries, handle

        runtime = await _get_runtime(self.env)
        await handle(runtime, SYSTEM, Deliveries(messages=batch_messages(batch)))
