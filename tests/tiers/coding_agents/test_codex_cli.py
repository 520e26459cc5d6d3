"""The real Codex CLI (npm, pinned in tests/agent-clis) with the config written by
``companion-memory hooks install codex``, in a throwaway HOME, its model a local fake
OpenAI Responses server: the MCP server is listed and its memory_recall answers the model,
the turn is written back through notify, and uninstall puts config.toml back byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from companion_memory.clock import local_date
from companion_memory.settings import Settings
from tests.claude_code import ROOT, stored_messages
from tests.conftest import MCP_KEY, OWNER_KEY
from tests.hosts.test_local_server import run_cli
from tests.live_server import LiveServer
from tests.upstreams import RecordingUpstream

CODEX = ROOT / "tests" / "agent-clis" / "node_modules" / ".bin" / "codex"
PROMPT = "What is my cat called?"
ANSWER = "Your cat is called Miso."
MEMORY = "The user's cat is called Miso"
# The user's own config: the fake model, and nothing that reaches past this machine (the
# update check, analytics, the plugin and app catalogues each look up a host otherwise).
USER_CONFIG = """\
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{model}/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false
apps = false
"""


@pytest.fixture(scope="module")
def codex() -> Path:
    if not os.access(CODEX, os.X_OK):
        pytest.fail("the Codex CLI is not installed: npm ci --prefix tests/agent-clis (./scripts/test does)")
    return CODEX


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    live = LiveServer(
        Settings(CHATBOX_API_KEY=OWNER_KEY, MEMORY_MCP_API_KEY=MCP_KEY),
        tmp_path_factory.mktemp("codex") / "data",
        embedder,
    )
    with httpx.Client(base_url=live.url, headers={"authorization": f"Bearer {OWNER_KEY}"}) as client:
        client.post("/v1/memories", json={"fact_key": "pet.cat", "content": MEMORY, "type": "fact"}).raise_for_status()
    yield live
    live.stop()


@pytest.fixture
def model() -> Iterator[RecordingUpstream]:
    with RecordingUpstream() as upstream:
        upstream.reply_text = ANSWER
        yield upstream


def run_codex(codex: Path, home: Path, cwd: Path, model: RecordingUpstream, *args: str) -> str:
    """Codex as a user runs it, with only what a shell would give it: the memory key in the
    environment, everything else from the config."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "FAKE_OPENAI_KEY": "sk-fake",
        "COMPANION_MEMORY_KEY": MCP_KEY,
    }
    result = subprocess.run(
        [str(codex), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_codex_recalls_through_mcp_and_writes_the_turn_back(
    codex: Path, server: LiveServer, model: RecordingUpstream, tmp_path: Path
) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    theirs = USER_CONFIG.format(model=model.url)
    config.write_text(theirs, encoding="utf-8")
    installed = run_cli(
        project, "hooks", "install", "codex", "--url", server.url, HOME=str(home), CODEX_HOME=str(config.parent)
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    [listed] = json.loads(run_codex(codex, home, project, model, "mcp", "list", "--json"))
    assert (listed["name"], listed["enabled"]) == ("companion-memory", True)
    assert listed["transport"]["url"] == server.url + "/mcp"
    assert listed["transport"]["bearer_token_env_var"] == "COMPANION_MEMORY_KEY"

    # The model asks for memory_recall first (Codex puts an MCP server's tools in a namespace).
    model.tool_calls = [{"name": "memory_recall", "namespace": "mcp__companion_memory", "arguments": {"query": "cat"}}]
    output = run_codex(codex, home, project, model, "exec", "--skip-git-repo-check", "--json", PROMPT)
    found = events(output)
    calls = [e["item"] for e in found if e["type"] == "item.completed" and e["item"]["type"] == "mcp_tool_call"]
    assert [(c["server"], c["tool"], c["error"]) for c in calls] == [("companion-memory", "memory_recall", None)]
    answers = [
        e["item"]["text"] for e in found if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    assert answers == [ANSWER]
    asked = [r for r in model.requests if r.provider == "responses"]
    assert len(asked) == 2
    [output_item] = [i for i in asked[1].json["input"] if i.get("type") == "function_call_output"]
    assert MEMORY in json.dumps(output_item)

    # Codex does not wait for its notify program: the turn arrives a moment later.
    [thread] = [e["thread_id"] for e in found if e["type"] == "thread.started"]
    deadline = time.monotonic() + 30
    while True:
        turn = [(r, c, s) for r, c, conversation, s in stored_messages(server.data_dir) if conversation == thread]
        if len(turn) >= 2 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert turn == [("user", PROMPT, "codex"), ("assistant", ANSWER, "codex")]

    # A new thread recalls that turn as what was said, dated and by whom.
    model.reset()
    model.tool_calls = [
        {"name": "memory_recall", "namespace": "mcp__companion_memory", "arguments": {"query": "what is my cat called"}}
    ]
    run_codex(codex, home, project, model, "exec", "--skip-git-repo-check", "--json", "Did I ask about my cat?")
    [output_item] = [
        i
        for r in model.requests
        if r.provider == "responses"
        for i in r.json["input"]
        if i.get("type") == "function_call_output"
    ]
    today = local_date(datetime.now(UTC), server.runtime.settings.DREAM_TIME_ZONE).isoformat()
    assert f"[said {today} by you] {PROMPT}" in output_item["output"]

    removed = run_cli(project, "hooks", "uninstall", "codex", HOME=str(home), CODEX_HOME=str(config.parent))
    assert removed.returncode == 0, removed.stderr
    assert config.read_bytes() == theirs.encode()
    assert json.loads(run_codex(codex, home, project, model, "mcp", "list", "--json")) == []
