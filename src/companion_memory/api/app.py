"""The ASGI app: the same for the Worker's fetch and the local server."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import RedirectResponse

from .. import __version__
from ..domain.endpoints import PANEL_PREFIXES
from ..runtime import Runtime
from . import (
    admin_views,
    boot,
    cache,
    candidates,
    chat,
    context,
    conversations,
    dream,
    errors,
    glossary,
    health,
    history_imports,
    ingest,
    maintenance,
    memories,
    moods,
    night_dreams,
    oauth,
    openapi,
    people,
    persona,
    plans,
    precious,
    recall,
    shares,
    snapshot,
    todos,
)
from .auth import Authentication
from .content_type import JsonBodies
from .limits import BodyLimit
from .mcp import routes as mcp

# Chat requests carry whole conversations and base64 images.
CHAT_BODY_LIMITS = {"/v1/chat/completions": 20 * 1024 * 1024, "/v1/guide-dog/chat/completions": 20 * 1024 * 1024}


def _to_panel(prefix: str) -> Any:
    async def redirect() -> RedirectResponse:
        return RedirectResponse(prefix + "/", status_code=308)

    return redirect


def create_app(runtime: Runtime, *, lifespan: Any = None) -> FastAPI:
    """``lifespan`` is for the local server's background work; the Worker passes none
    (its ASGI bridge runs the lifespan around every request)."""
    app = FastAPI(
        lifespan=lifespan,
        # A JSON body without a Content-Type is still JSON.
        strict_content_type=False,
        title="companion-memory",
        version=__version__,
        description="Long-term memory for AI chat clients and agents.",
        # FastAPI's pages load Swagger UI from a CDN: the local server serves its own
        # (adapters/local/docs.py); the Worker serves /openapi.json alone.
        docs_url=None,
        redoc_url=None,
    )
    app.state.runtime = runtime
    errors.install(app)
    openapi.install(app)
    for module in (
        health,
        admin_views,
        chat,
        candidates,
        dream,
        maintenance,
        memories,
        plans,
        shares,
        todos,
        moods,
        night_dreams,
        persona,
        people,
        recall,
        boot,
        precious,
        glossary,
        ingest,
        history_imports,
        conversations,
        cache,
        snapshot,
        context,
        oauth,
        mcp,
    ):
        app.include_router(module.router)
    for prefix in PANEL_PREFIXES:
        # The panel's pages load their files by relative URLs: they need the trailing slash.
        app.add_api_route(prefix, _to_panel(prefix), methods=["GET", "HEAD"], include_in_schema=False)
    app.add_middleware(Authentication)
    app.add_middleware(JsonBodies)
    # Browsers may call the API from another origin (the panel pointed at another server,
    # a web chat client): every route needs a key sent as a header, never a cookie, so no
    # origin gains anything it could not do with the key anyway.
    app.add_middleware(
        CORSMiddleware,
        allow_origins=["*"],
        allow_methods=["*"],
        allow_headers=["*"],
        max_age=86400,
        expose_headers=["Mcp-Session-Id", "MCP-Protocol-Version", "WWW-Authenticate"],
    )
    app.add_middleware(BodyLimit, overrides=CHAT_BODY_LIMITS)
    return app
