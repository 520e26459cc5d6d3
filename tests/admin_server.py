"""The local server as `companion-memory serve` builds it (the app with the admin panel
mounted and its background work running), on a real port, for the browser tests."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import uvicorn

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.adapters.local.server import create_local_app
from companion_memory.ports import Embedder
from companion_memory.settings import Settings
from tests.live_server import LiveServer


class AdminServer(LiveServer):
    """LiveServer, but serving ``create_local_app`` (``/admin`` and ``/memory-admin``) with
    its lifespan on, as the real server runs."""

    def __init__(self, settings: Settings, data_dir: Path, embedder: Embedder) -> None:  # noqa: D107
        # Built in a thread of its own: Playwright's sync API keeps an event loop running in this one.
        built: list = []
        builder = threading.Thread(target=lambda: built.append(asyncio.run(build_local_runtime(settings, data_dir, embedder=embedder))))
        builder.start()
        builder.join()
        assert built, "the runtime could not be built"
        self.runtime = built[0]
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(create_local_app(self.runtime), lifespan="on", log_config=None, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)
