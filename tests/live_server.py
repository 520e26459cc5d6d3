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
from companion_memory.ports import Embedder
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings


class LiveServer:
    def __init__(self, settings: Settings, data_dir: Path, embedder: Embedder) -> None:
        self.runtime: Runtime = asyncio.run(build_local_runtime(settings, data_dir, embedder=embedder))
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(create_app(self.runtime), lifespan="off", log_config=None, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
