"""The API's page, /docs (Swagger UI), with its scripts served by the local server itself:
FastAPI's own pages load them from a CDN, and the local server promises no network. The
files come with fastapi-offline (the ``local`` extra); the Worker bundles only
[project].dependencies, so it serves /openapi.json without the page. ReDoc, FastAPI's
other page, is left out: it fetches its logo from the web whatever it is given.

Like /openapi.json, the page needs no key: both describe the API, which is the same on every
server, and hold no data. Swagger UI's *Authorize* takes a key for *Try it out*."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
# The panel's icon (served under /admin by the local server).
ICON = "/admin/icons/icon.svg"


def install(app: FastAPI) -> None:
    openapi_url = app.openapi_url or "/openapi.json"
    app.mount(ASSETS, StaticFiles(directory=str(files("fastapi_offline") / "static")), name="docs-assets")

    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} · API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=ICON,
        )

    app.add_api_route("/docs", swagger, methods=["GET"], include_in_schema=False)
