"""The local server as a user runs it: a real process, a real port, a restart."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from companion_memory.adapters.local.e5_onnx import MODEL_NAME
from tests.conftest import NIGHTLY_STEPS

ROOT = Path(__file__).resolve().parents[2]


# The served process binds its port itself, after free_port() let go of it. Below the kernel's
# ephemeral range (where every bind to port 0, as the in-process test servers do, lands) and in
# a block of its own per xdist worker, no other test can take that port in between.
_PORTS = itertools.count(20_000 + 1_000 * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")))


def free_port() -> int:
    while True:
        port = next(_PORTS)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:  # something else on the machine has it
                continue
            return port


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "COMPANION_MEMORY_DATA_DIR"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def run_cli(cwd: Path, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
    """``companion-memory`` as a user runs it, in its own process; ``env`` adds settings."""
    return subprocess.run(
        [sys.executable, "-m", "companion_memory.hosts.cli", *args],
        cwd=cwd,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Server:
    def __init__(self, data_dir: Path, cwd: Path, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "companion_memory.hosts.cli",
                "serve",
                "--port",
                str(self.port),
                "--data-dir",
                str(data_dir),
            ],
            cwd=cwd,
            env=clean_env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.process.stdout.read()  # type: ignore[union-attr]
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.2)
        raise AssertionError("server did not start")

    def stop(self) -> str:
        self.process.terminate()
        self.output, _ = self.process.communicate(timeout=30)
        return self.output


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "data"


def test_first_start_generates_a_key_and_a_restart_keeps_everything(data_dir: Path, tmp_path: Path) -> None:
    server = Server(data_dir, cwd=tmp_path)
    try:
        assert httpx.get(server.url + "/v1/memories").status_code == 401
    finally:
        output = server.stop()
    key = re.search(r"^\s+(cm-\S+)$", output, re.MULTILINE).group(1)  # type: ignore[union-attr]
    assert (data_dir / "owner-api-key").read_text().strip() == key
    assert oct((data_dir / "owner-api-key").stat().st_mode & 0o777) == "0o600"

    server = Server(data_dir, cwd=tmp_path)
    headers = {"Authorization": f"Bearer {key}"}
    try:
        created = httpx.post(
            server.url + "/v1/memories", json={"content": "我的猫叫小咪", "fact_key": "cat.name"}, headers=headers
        )
        assert created.status_code == 201
        ingested = httpx.post(
            server.url + "/v1/ingest/messages", json={"messages": [{"role": "user", "content": "hi"}]}, headers=headers
        )
        assert ingested.json()["stored"] == 1
        assert httpx.get(server.url + "/docs").status_code == 200
        assert "companion-memory" in httpx.get(server.url + "/admin/", follow_redirects=True).text
    finally:
        output = server.stop()
    assert key not in output  # printed once, on the first start only

    server = Server(data_dir, cwd=tmp_path)
    try:
        memories = httpx.get(server.url + "/v1/memories", headers=headers).json()["memories"]
        assert [m["content"] for m in memories] == ["我的猫叫小咪"]
        # The memory, and the message's episode, embedded in the background (before the
        # stop, or by the queue the restart picked up again).
        deadline = time.monotonic() + 30
        while True:
            health = httpx.get(server.url + "/v1/debug/vector_health", headers=headers).json()
            if health["outbox"]["pending"] == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert health["indexed_vectors"] == 2 and health["embedding_model"] == MODEL_NAME
        assert health["task_queue"] == {"queued": 0, "dead": 0}
    finally:
        server.stop()


def test_configured_key_from_dotenv(data_dir: Path, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("CHATBOX_API_KEY=from-dotenv\nMEMORY_MCP_API_KEY=mcp-from-dotenv\n")
    server = Server(data_dir, cwd=tmp_path)
    try:
        assert httpx.get(server.url + "/v1/memories", headers={"x-api-key": "from-dotenv"}).status_code == 200
        assert httpx.get(server.url + "/v1/memories", headers={"x-api-key": "mcp-from-dotenv"}).status_code == 200
    finally:
        output = server.stop()
    assert not (data_dir / "owner-api-key").exists() and "from-dotenv" not in output


def test_cli_export_and_import_round_trip(data_dir: Path, tmp_path: Path) -> None:
    server = Server(data_dir, cwd=tmp_path, CHATBOX_API_KEY="k")
    try:
        headers = {"x-api-key": "k"}
        httpx.post(server.url + "/v1/memories", json={"content": "likes tea", "fact_key": "drink"}, headers=headers)
        httpx.post(server.url + "/v1/precious", json={"content": "verbatim"}, headers=headers)
    finally:
        server.stop()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(tmp_path, *args)

    dump = tmp_path / "export.json"
    assert cli("--data-dir", str(data_dir), "export", "-o", str(dump)).returncode == 0
    other = tmp_path / "other"
    assert "applied 0001_initial.sql" in cli("migrate", "--data-dir", str(other)).stdout
    loaded = cli("import", str(dump), "--data-dir", str(other))
    assert loaded.returncode == 0, loaded.stderr
    assert "1 memories" in loaded.stdout and "indexed 1 vectors" in loaded.stderr
    again = tmp_path / "again.json"
    cli("export", "-o", str(again), "--data-dir", str(other))
    first, second = json.loads(dump.read_text()), json.loads(again.read_text())
    first.pop("exported_at"), second.pop("exported_at")
    assert first == second
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "nope"}')
    refused = cli("import", str(bad), "--data-dir", str(other))
    assert refused.returncode == 2 and "not a companion-memory export" in refused.stderr


def test_an_invalid_setting_stops_with_a_clear_message(data_dir: Path, tmp_path: Path) -> None:
    result = run_cli(tmp_path, "migrate", "--data-dir", str(data_dir), timeout=60, DEDUP_COSINE="very")
    assert result.returncode == 1
    assert "invalid setting (DEDUP_COSINE" in result.stderr and "Traceback" not in result.stderr


def test_cli_cleanup_runs_once_a_day(data_dir: Path, tmp_path: Path) -> None:
    def cleanup(*extra: str) -> str:
        result = run_cli(tmp_path, "cleanup", "--data-dir", str(data_dir), *extra)
        assert result.returncode == 0, result.stderr
        return result.stdout

    assert "0 messages" in cleanup()
    assert "already ran" in cleanup()
    assert "0 memories expired" in cleanup("--force")


def test_cli_dream_rollup_and_nightly_as_a_user_runs_them(data_dir: Path, tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(tmp_path, *args, "--data-dir", str(data_dir), timeout=180, CHATBOX_API_KEY="cli-owner-key")

    def cli(*args: str) -> str:
        result = run(*args)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    server = Server(data_dir, tmp_path, CHATBOX_API_KEY="cli-owner-key")
    try:
        yesterday = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 86400))
        stored = httpx.post(
            server.url + "/v1/ingest/messages",
            headers={"Authorization": "Bearer cli-owner-key"},
            json={
                "messages": [
                    {
                        "role": "user",
                        "content": "Please remember that I am allergic to peanuts",
                        "created_at": yesterday,
                    }
                ]
            },
        )
        assert stored.status_code == 200, stored.text
    finally:
        server.stop()

    dry = cli("dream", "--dry-run")
    assert "dry run" in dry and "I am allergic to peanuts" in dry and "candidate would create" in dry
    real = cli("dream")
    assert "1 candidate created; succeeded" in real and "quote: 'Please remember that I am allergic to peanuts'" in real
    assert "nothing to dream" in cli("dream")  # the same night again
    assert "0 weekly and 0 monthly entries written" in cli("rollup")
    nightly = cli("nightly")
    assert [line.split()[1].rstrip(":") for line in nightly.splitlines()] == list(NIGHTLY_STEPS)
    assert all(line.startswith("ok") for line in nightly.splitlines())
    assert "is not a day (YYYY-MM-DD)" in run("dream", "--date", "yesterday").stderr
    # Before the days kept (a year below 1000 was stored unpadded and poisoned reads).
    edge = run("dream", "--date", "0001-01-01")
    assert edge.returncode == 2 and "outside the days kept" in edge.stderr and "Traceback" not in edge.stderr


def test_a_key_in_the_url_never_reaches_the_access_log(data_dir: Path, tmp_path: Path) -> None:
    """Issue 28: ``POST /mcp?%74oken=<key>`` with a form content type logged the key in
    clear. The server reads the name percent-decoded, and so does the redaction."""
    server = Server(data_dir, cwd=tmp_path, CHATBOX_API_KEY="owner-key", MEMORY_MCP_API_KEY="mcp-secret-key")
    ping = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    try:
        for query in (
            "%74oken=mcp-secret-key",
            "to%6Ben=mcp-secret-key&x=1",
            "TOKEN=mcp-secret-key",
            "token=mcp-secret-key",
        ):
            for content_type in ("application/x-www-form-urlencoded", "application/json"):
                answered = httpx.post(f"{server.url}/mcp?{query}", content=ping, headers={"Content-Type": content_type})
                assert answered.status_code in (200, 401)
        spelled = httpx.post(
            f"{server.url}/mcp?%74oken=mcp-secret-key",
            content=ping,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert spelled.status_code == 200  # the key worked: it was read, then cut out
    finally:
        output = server.stop()
    assert "POST /mcp?" in output  # the access log is on
    assert "mcp-secret-key" not in output


def test_serving_beyond_this_machine_without_public_url_warns(data_dir: Path, tmp_path: Path) -> None:
    """OAuth takes its address from the Host header without PUBLIC_URL; on a non-loopback
    address anyone could choose it. 192.0.2.1 (TEST-NET) is no address of this machine:
    the server warns, then cannot bind and stops."""
    port = str(free_port())
    beyond = run_cli(tmp_path, "serve", "--host", "192.0.2.1", "--port", port, "--data-dir", str(data_dir))
    assert "without PUBLIC_URL" in beyond.stderr and "Host header" in beyond.stderr
    configured = run_cli(
        tmp_path,
        "serve",
        "--host",
        "192.0.2.1",
        "--port",
        port,
        "--data-dir",
        str(data_dir),
        PUBLIC_URL="https://memory.example.com",
    )
    assert configured.returncode != 0 and "PUBLIC_URL" not in configured.stderr


def test_the_start_warning_names_non_loopback_binds_only() -> None:
    from companion_memory.hosts.local_server import issuer_warning
    from companion_memory.settings import Settings

    plain, public = Settings(), Settings(PUBLIC_URL="https://memory.example.com")
    for host in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        assert issuer_warning(host, plain) is None
    for host in ("0.0.0.0", "::", "192.168.1.10", "my-laptop"):
        assert issuer_warning(host, plain) and issuer_warning(host, public) is None


def test_the_access_log_filter_cuts_a_token_out_of_any_line() -> None:
    """The second guard: a line logged with the token still in it (uvicorn's access log
    formats the path with its query) reads [redacted] instead."""
    from companion_memory.hosts.local_server import RedactToken

    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "POST", "/mcp?x=1&token=secret-key&y=2", "1.1", 200),
        None,
    )
    assert RedactToken().filter(record) is True
    assert "secret-key" not in record.getMessage() and "token=[redacted]&y=2" in record.getMessage()
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "GET /mcp?TOKEN=abc", None, None)
    RedactToken().filter(plain)
    assert plain.getMessage() == "GET /mcp?TOKEN=[redacted]"
    for spelled in ("%74oken", "to%6Ben", "%54%4F%4B%45%4E", "tok%65n", "token"):
        line = logging.LogRecord("x", logging.INFO, __file__, 1, f'"POST /mcp?a=1&{spelled}=k3y HTTP/1.1"', None, None)
        RedactToken().filter(line)
        assert "k3y" not in line.getMessage() and f"{spelled}=[redacted]" in line.getMessage()
