"""Helpers for the coding-agent hook tests: the hook program as a module and as the process
Claude Code runs, transcript lines in Claude Code's own shape, and what the server stored."""

from __future__ import annotations

import importlib.util
import json
import socket
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from companion_memory.adapters.local.runtime import DATABASE_FILE

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "integrations" / "claude-code" / "companion_memory_hook.py"


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("companion_memory_hook", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_hook(
    event: dict[str, Any] | str, *, env: dict[str, str], argv: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """The hook as Claude Code runs it: the event's JSON on stdin (or, for Codex, the last argument)."""
    return subprocess.run(
        [sys.executable, str(HOOK), *argv],
        input=event if isinstance(event, str) else json.dumps(event),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


SESSION = "5b0c1a54-3f0e-4a57-9b1e-2c8a0d1f7e11"


def line(kind: str, message: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A transcript line as Claude Code 2.1 writes it."""
    entry: dict[str, Any] = {
        "parentUuid": None,
        "isSidechain": False,
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": "/home/me/project",
        "sessionId": SESSION,
        "version": "2.1.332",
        "userType": "external",
    }
    if message is not None:
        entry["message"] = message
    return entry | extra


def prompt(text: str, **extra: Any) -> dict[str, Any]:
    return line("user", {"role": "user", "content": text}, **extra)


def reply(*blocks: dict[str, Any], message_id: str = "msg_01", **extra: Any) -> dict[str, Any]:
    message = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-5-5",
        "content": list(blocks),
    }
    return line("assistant", message, **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": name, "input": arguments}


def tool_result(output: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": "toolu_x", "content": output}]
    return line("user", {"role": "user", "content": content}, toolUseResult={"stdout": output})


def write_lines(path: Path, entries: list[dict[str, Any]], *, mode: str = "a") -> None:
    with path.open(mode, encoding="utf-8") as f:
        for entry in entries:
            f.write(json.dumps(entry) + "\n")


def stored_messages(data_dir: Path) -> list[tuple[str, str, str | None, str]]:
    """(role, content, conversation id, source) of every message the server holds, oldest first."""
    with sqlite3.connect(data_dir / DATABASE_FILE) as db:
        rows = db.execute("SELECT role, content, conversation_id, source FROM messages ORDER BY created_at, rowid")
        return [tuple(row) for row in rows]  # type: ignore[misc]


def closed_port_url() -> str:
    """An address where nothing listens: a memory server that is down."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"
