"""Our own app on a real local port, in a background thread, for tests with real clients."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path

import uvicorn

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.api.app import create_app
from companion_memory.hosts.local_server import create_local_app, redact_access_log, server_options
from companion_memory.ports import Embedder
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings


class LiveServer:
    """``local_app``: serve what ``companion-memory serve`` serves (the panel mounted, the
    queue worker and nightly schedule running) instead of the bare API app."""

    def __init__(self, settings: Settings, data_dir: Path, embedder: Embedder, *, local_app: bool = False) -> None:
        # Built in a thread of its own: a caller may already run an event loop (Playwright's sync API does).
        built: list[Runtime] = []
        builder = threading.Thread(
            target=lambda: built.append(asyncio.run(build_local_runtime(settings, data_dir, embedder=embedder)))
        )
        builder.start()
        builder.join()
        assert built, "the runtime could not be built"
        self.runtime = built[0]
        self.data_dir = data_dir
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        app = create_local_app(self.runtime) if local_app else create_app(self.runtime)
        redact_access_log()  # as `companion-memory serve` does
        config = uvicorn.Config(
            **server_options(app, settings), lifespan="on" if local_app else "off", log_config=None, log_level="warning"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
