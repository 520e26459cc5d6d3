"""``./scripts/companion-memory``, the command line README's commands use: run as a user
runs it, from the repository or through a link on PATH, on a copy of the scripts whose
.venv runs this checkout's CLI (so no test ever installs anything)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from companion_memory.adapters.local.runtime import DATABASE_FILE

ROOT = Path(__file__).resolve().parents[2]
# What the copy's .venv/bin/python does: only ensure_venv calls it (to install), and here it
# records that it was asked and what it printed stays off the wrapper's stdout.
PIP = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/../pip-calls"
echo "pip would print this"
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """scripts/, pyproject.toml and a .venv whose companion-memory is this checkout's."""
    copy = tmp_path / "repo"
    (copy / "scripts").mkdir(parents=True)
    for name in ("companion-memory", "_venv.sh"):
        shutil.copy2(ROOT / "scripts" / name, copy / "scripts" / name)
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    os.utime(copy / "pyproject.toml", (1_000_000_000, 1_000_000_000))
    bin_dir = copy / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(PIP)
    (bin_dir / "companion-memory").write_text(
        f'#!/bin/sh\nPYTHONPATH="{ROOT / "src"}" exec "{sys.executable}" -m companion_memory.hosts.cli "$@"\n'
    )
    for program in bin_dir.iterdir():
        program.chmod(0o755)
    return copy


def run(command: list[str], cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COMPANION_MEMORY_DATA_DIR"}
    env["PYTHON"] = sys.executable  # _venv.sh checks it is 3.11 or newer
    if path:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False)


def pip_calls(repo: Path) -> list[str]:
    calls = repo / ".venv" / "pip-calls"
    return calls.read_text().splitlines() if calls.exists() else []


def test_the_wrapper_runs_the_command_line_on_the_venv_the_tests_set_up(repo: Path) -> None:
    # ./scripts/test installs the extras local,dev: the command line needs no second install.
    (repo / ".venv" / ".installed-local,dev").touch()
    answer = run(["./scripts/companion-memory", "--help"], cwd=repo)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.startswith("usage: companion-memory")
    assert "hooks" in answer.stdout and "doctor" in answer.stdout
    assert pip_calls(repo) == []


def test_linked_on_path_it_runs_where_it_is_called_from(repo: Path, tmp_path: Path) -> None:
    """README: a link to scripts/companion-memory on PATH makes `companion-memory …` work as
    written, and a relative path (``--data-dir``, ``-o``, ``--scope project``) is the caller's."""
    (repo / ".venv" / ".installed-local").touch()
    on_path, elsewhere = tmp_path / "bin", tmp_path / "elsewhere"
    on_path.mkdir()
    elsewhere.mkdir()
    (on_path / "companion-memory").symlink_to(repo / "scripts" / "companion-memory")
    answer = run(["companion-memory", "hooks", "install", "--help"], cwd=elsewhere, path=str(on_path))
    assert answer.returncode == 0, answer.stderr
    assert "claude-code" in answer.stdout
    migrated = run(["companion-memory", "migrate", "--data-dir", "data"], cwd=elsewhere, path=str(on_path))
    assert migrated.returncode == 0, migrated.stderr
    assert (elsewhere / "data" / DATABASE_FILE).exists()
    assert not (repo / "data").exists()


def test_a_first_run_installs_once_and_keeps_stdout_for_the_command(repo: Path) -> None:
    first = run(["./scripts/companion-memory", "--help"], cwd=repo)
    assert first.returncode == 0, first.stderr
    # pip's own lines go to stderr: `companion-memory export` on stdout stays a JSON file.
    assert first.stdout.startswith("usage: companion-memory")
    assert "pip would print this" in first.stderr
    assert pip_calls(repo) == ["-m pip install --quiet --upgrade pip", "-m pip install --quiet -e .[local]"]
    assert run(["./scripts/companion-memory", "--help"], cwd=repo).returncode == 0
    assert len(pip_calls(repo)) == 2  # the stamp says it is done
