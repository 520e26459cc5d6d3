"""The real Claude Code CLI (npm, pinned in tests/agent-clis) with the hook installed by
``companion-memory hooks install claude-code``, in a throwaway HOME, its model a local fake
Anthropic Messages server: the memory reaches the model, the session is written back once,
and a memory server that is down does not stop Claude Code."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion_memory.clock import local_date
from companion_memory.settings import Settings
from tests.claude_code import HOOK, ROOT, closed_port_url, run_hook, stored_messages
from tests.conftest import MCP_KEY, OWNER_KEY
from tests.hosts.test_local_server import run_cli
from tests.live_server import LiveServer
from tests.upstreams import RecordingUpstream

CLAUDE = ROOT / "tests" / "agent-clis" / "node_modules" / ".bin" / "claude"
PROMPT = "What is my cat called?"


@pytest.fixture(scope="module")
def claude() -> Path:
    if not os.access(CLAUDE, os.X_OK):
        pytest.fail("the Claude Code CLI is not installed: npm ci --prefix tests/agent-clis (./scripts/test does)")
    return CLAUDE


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    live = LiveServer(
        Settings(CHATBOX_API_KEY=OWNER_KEY, MEMORY_MCP_API_KEY=MCP_KEY),
        tmp_path_factory.mktemp("cc") / "data",
        embedder,
    )
    with httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {OWNER_KEY}"}) as client:
        memory = {"fact_key": "pet.cat", "content": "The user's cat is called Miso", "type": "fact"}
        client.post("/v1/memories", json=memory).raise_for_status()
    yield live
    live.stop()


@pytest.fixture(scope="module")
def model() -> Iterator[RecordingUpstream]:
    with RecordingUpstream() as upstream:
        upstream.reply_text = "Your cat is called Miso."
        yield upstream


def install(home: Path, cwd: Path, url: str) -> None:
    result = run_cli(cwd, "hooks", "install", "claude-code", "--url", url, HOME=str(home), COMPANION_MEMORY_KEY=MCP_KEY)
    assert result.returncode == 0, result.stdout + result.stderr


def run_claude(claude: Path, home: Path, cwd: Path, model: RecordingUpstream, *args: str) -> dict[str, Any]:
    """``claude -p`` as a user runs it, with only the environment a shell would give it: the
    memory server's URL and key come from the settings the installer wrote."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    result = subprocess.run(
        [str(claude), "-p", "--output-format", "json", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    assert answer["is_error"] is False and answer["result"] == "Your cat is called Miso.", answer
    return answer


def texts(request: Any) -> list[str]:
    """Every text the request put before the model: system blocks and message blocks alike
    (Claude Code 2.1 puts hook context in a system-role message, not the system prompt)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("text"), str):
                found.append(value["text"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({"system": request.json.get("system"), "messages": request.json.get("messages")})
    return found


def test_claude_code_recalls_and_writes_the_session_back_once(
    claude: Path, server: LiveServer, model: RecordingUpstream, tmp_path: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    install(home, project, server.url)
    model.reset()

    answer = run_claude(claude, home, project, model, PROMPT)

    calls = [r for r in model.requests if r.provider == "anthropic"]
    assert calls, "Claude Code never called the model"
    recalled = [t for r in calls for t in texts(r) if "The user's cat is called Miso" in t]
    # Recall's numbered block (the boot package would list memories with dashes).
    assert recalled and "<memories>\nWhat I remember (most relevant first):\n1. [fact, " in recalled[0]
    session = answer["session_id"]

    def turns() -> list[tuple[str, str]]:
        return [
            (role, content)
            for role, content, conversation, _ in stored_messages(server.data_dir)
            if conversation == session
        ]

    assert turns() == [("user", PROMPT), ("assistant", "Your cat is called Miso.")]

    # The same transcript again: once by resuming the session (it appends), once by running the
    # hook over the whole file as if it had never seen it.
    run_claude(claude, home, project, model, "--resume", session, "And my dog?")
    state = home / ".claude" / "companion-memory" / "transcripts"
    for file in state.iterdir():
        file.unlink()
    transcript = next((home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "COMPANION_MEMORY_URL": server.url,
        "COMPANION_MEMORY_KEY": MCP_KEY,
    }
    rerun = run_hook({"hook_event_name": "Stop", "session_id": session, "transcript_path": str(transcript)}, env=env)
    assert (rerun.returncode, rerun.stderr) == (0, "")
    assert turns() == [
        ("user", PROMPT),
        ("assistant", "Your cat is called Miso."),
        ("user", "And my dog?"),
        ("assistant", "Your cat is called Miso."),
    ]

    # A new session is told what was said in that one, dated and by whom.
    model.reset()
    run_claude(claude, home, project, model, "Did I ask about my dog before?")
    said = [t for r in model.requests if r.provider == "anthropic" for t in texts(r) if "[said " in t]
    today = local_date(datetime.now(UTC), server.runtime.settings.DREAM_TIME_ZONE).isoformat()
    assert said and f"[said {today} by you] And my dog?" in said[0], said


def test_claude_code_carries_on_when_the_memory_server_is_down(
    claude: Path, model: RecordingUpstream, tmp_path: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    install(home, project, closed_port_url())
    assert (home / ".claude" / "hooks" / HOOK.name).exists()
    model.reset()
    run_claude(claude, home, project, model, PROMPT)
    calls = [r for r in model.requests if r.provider == "anthropic"]
    assert calls and not [t for r in calls for t in texts(r) if "<memories>" in t]
