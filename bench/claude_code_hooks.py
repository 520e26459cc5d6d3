"""What the companion-memory hook adds to a `claude -p` run of the real Claude Code CLI
(tests/agent-clis), its model a local fake Anthropic server: without the hook, with the hook
and the memory server up, with the server down (nothing listening) and with a server that
never answers (each call waits out the hook's 2 s). Printed: median and max wall time.

    .venv/bin/python bench/claude_code_hooks.py [--runs 5]

Needs `npm ci --prefix tests/agent-clis` (./scripts/test runs it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from companion_memory.settings import Settings  # noqa: E402
from tests.claude_code import closed_port_url  # noqa: E402
from tests.fakes.embedder import HashEmbedder  # noqa: E402
from tests.hosts.test_local_server import run_cli  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402
from tests.upstreams import RecordingUpstream  # noqa: E402

CLAUDE = ROOT / "tests" / "agent-clis" / "node_modules" / ".bin" / "claude"
KEY = "bench-mcp-key"


def timed_runs(home: Path, model: RecordingUpstream, runs: int) -> list[float]:
    project = home / "project"
    project.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [str(CLAUDE), "-p", "What is my cat called?"], cwd=project, env=env, capture_output=True, check=True
        )
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not os.access(CLAUDE, os.X_OK):
        raise SystemExit("the Claude Code CLI is not installed: npm ci --prefix tests/agent-clis")
    with tempfile.TemporaryDirectory() as scratch, RecordingUpstream() as model, RecordingUpstream() as silent:
        model.reply_text = "Miso."
        silent.delay(60)
        server = LiveServer(Settings(MEMORY_MCP_API_KEY=KEY), Path(scratch) / "data", HashEmbedder())
        cases = {
            "no hook": None,
            "server up": server.url,
            "server down": closed_port_url(),
            "never answers": silent.url,
        }
        print(f"claude -p, {args.runs} runs each (seconds)")
        baseline = None
        for name, url in cases.items():
            home = Path(scratch) / name.replace(" ", "-")
            home.mkdir()
            if url is not None:
                run_cli(home, "hooks", "install", "claude-code", "--url", url, HOME=str(home), COMPANION_MEMORY_KEY=KEY)
            timed_runs(home, model, 1)  # first run: Claude Code sets up its HOME
            seconds = timed_runs(home, model, args.runs)
            median = statistics.median(seconds)
            baseline = median if baseline is None else baseline
            added = "" if name == "no hook" else f"  (+{median - baseline:.2f} over no hook)"
            print(f"  {name:<14} median {median:.2f}  max {max(seconds):.2f}{added}")
        server.stop()


if __name__ == "__main__":
    main()
