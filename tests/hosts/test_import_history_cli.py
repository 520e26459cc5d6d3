"""``companion-memory import-history`` as a user runs it: the summary it prints, the
second run that stores nothing, the broken file named with where, the dry run, and a run
killed with SIGKILL midway that the next run finishes, every message stored once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from companion_memory.adapters.local.runtime import DATABASE_FILE
from tests.conftest import OWNER_KEY
from tests.history.fixtures import DATA

CLI = "import sys; from companion_memory.hosts.cli import main; sys.exit(main())"


def command(data_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-c", CLI, "import-history", *args, "--data-dir", str(data_dir), "--no-embed"]


def environment() -> dict[str, str]:
    return {**os.environ, "CHATBOX_API_KEY": OWNER_KEY, "DREAM_TIME_ZONE": "Asia/Singapore"}


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command(data_dir, *args), capture_output=True, text=True, env=environment(), timeout=120, check=False
    )


def messages(data_dir: Path) -> tuple[int, int]:
    """Messages stored, and distinct ones (by the client's identity)."""
    with sqlite3.connect(data_dir / DATABASE_FILE) as db:
        total, distinct = db.execute("SELECT COUNT(*), COUNT(DISTINCT client_hash) FROM messages").fetchone()
    return total, distinct


def test_an_export_is_imported_with_a_summary_then_stored_once(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = run(data_dir, str(DATA / "chatgpt/conversations.json"))
    assert first.returncode == 0, first.stderr
    assert "chatgpt (a JSON array whose first element has mapping (ChatGPT))" in first.stdout
    assert "2 conversations, 10 messages, from 2025-03-14 to 2025-03-15" in first.stdout
    assert "skipped 7 messages (1 off_branch, 2 reasoning, 2 system, 2 tool)" in first.stdout
    assert "stored 10, 0 duplicates" in first.stdout
    assert "10/10 messages (100%)" in first.stderr
    again = run(data_dir, str(DATA / "chatgpt/conversations.json"))
    assert "stored 0, 10 duplicates" in again.stdout
    assert messages(data_dir) == (10, 10)


def test_a_dry_run_and_a_range_of_days(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    dry = run(data_dir, str(DATA / "history.jsonl"), "--dry-run")
    assert dry.returncode == 0 and "would store" in dry.stdout
    assert messages(data_dir) == (0, 0)
    ranged = run(data_dir, str(DATA / "history.jsonl"), "--since", "2025-06-01", "--until", "2025-06-01")
    assert ranged.returncode == 0 and "outside --since/--until" in ranged.stdout
    wrong = run(data_dir, str(DATA / "history.jsonl"), "--since", "June")
    assert wrong.returncode == 2 and "--since" in wrong.stderr


def test_a_broken_file_is_named_with_where_and_nothing_is_stored(tmp_path: Path) -> None:
    whole = (DATA / "claude/conversations.json").read_bytes()
    broken = tmp_path / "conversations.json"
    broken.write_bytes(whole[: len(whole) // 2])
    result = run(tmp_path / "data", str(broken))
    assert result.returncode == 1
    assert "failed: conversations.json" in result.stdout and "nothing of it was stored" in result.stdout
    assert messages(tmp_path / "data") == (0, 0)


def test_a_run_killed_midway_is_finished_by_the_next(tmp_path: Path) -> None:
    source = tmp_path / "history.jsonl"
    total = 40_000
    with source.open("w", encoding="utf-8") as out:
        for n in range(total):
            said = {"conversation_id": f"c{n // 20}", "id": f"m{n}", "role": ("user", "assistant")[n % 2]}
            moment = f"2023-{1 + n // 4000:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00Z"
            out.write(json.dumps({**said, "content": f"turn {n} about the garden", "created_at": moment}) + "\n")
    data_dir = tmp_path / "data"
    process = subprocess.Popen(
        command(data_dir, str(source)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment()
    )
    deadline = time.monotonic() + 120
    position = 0
    while position == 0 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
        position = stored_position(data_dir)
    assert process.poll() is None, "the import ended before it could be killed"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert 0 < stored_position(data_dir) < total

    finished = run(data_dir, str(source))
    assert finished.returncode == 0, finished.stderr
    assert "going on with the import begun at" in finished.stderr
    assert f"stored {total:,}, 0 duplicates" in finished.stdout
    assert messages(data_dir) == (total, total)


def stored_position(data_dir: Path) -> int:
    try:
        with sqlite3.connect(data_dir / DATABASE_FILE, timeout=5) as db:
            row = db.execute("SELECT MAX(position) FROM history_imports").fetchone()
    except sqlite3.OperationalError:  # not made yet
        return 0
    return int(row[0] or 0)
