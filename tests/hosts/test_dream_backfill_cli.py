"""``companion-memory dream --backfill``: the estimate it prints, the question it asks,
the dry run that writes nothing, the budget it stops at and the run that continues."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from companion_memory.adapters.local.runtime import build_local_runtime
from companion_memory.clock import FixedClock
from companion_memory.hosts import cli, cli_commands
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.conftest import OWNER_KEY, all_keys_settings
from tests.fakes.embedder import HashEmbedder
from tests.nightly.test_backfill import imported
from tests.nightly.test_dream_model import answer
from tests.upstreams import RecordingUpstream

EMBEDDER = HashEmbedder(dimensions=384, model="test-words")


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The command line in this process on a data dir holding imported history, with the
    word-hashing embedder, the test clock and the embedded extractor."""
    clock = FixedClock(datetime(2026, 11, 30, 12, 0, tzinfo=UTC))

    async def local(settings: Settings, data_dir: Path) -> Runtime:
        return await build_local_runtime(settings, data_dir, embedder=EMBEDDER, clock=clock)

    async def seed() -> None:
        await imported(await local(all_keys_settings(), tmp_path / "data"))

    monkeypatch.setattr(cli_commands, "_runtime", local)
    monkeypatch.setenv("CHATBOX_API_KEY", OWNER_KEY)
    monkeypatch.setenv("DREAM_TIME_ZONE", "Asia/Singapore")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal, unless a test gives one
    asyncio.run(seed())
    return tmp_path / "data"


def dream(data_dir: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["dream", "--backfill", "--data-dir", str(data_dir), *args])
    out, err = capsys.readouterr()
    return code, out, err


def written(data_dir: Path, table: str) -> int:
    async def count() -> int:
        runtime = await cli_commands._runtime(all_keys_settings(), data_dir)
        row = await runtime.db.first(f"SELECT COUNT(*) AS n FROM {table}")
        return int(row["n"]) if row else 0

    return asyncio.run(count())


def test_the_dry_run_prints_the_estimate_and_writes_nothing(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = dream(data_dir, capsys, "--dry-run", "--budget-tokens", "2000")
    lines = out.splitlines()
    assert code == 0, out
    assert lines[0].startswith("backfill: 5 days with messages not dreamt yet, 2023-04-03 to 2023-05-17: ")
    assert "7 messages in 5 batches, about " in lines[0] and lines[0].endswith(" input tokens")
    assert lines[1].startswith("DREAM_MODEL workers-ai/@cf/openai/gpt-oss-120b is not configured")
    assert lines[2].startswith("budget 2,000 tokens: the first 2 days fit (3 messages, about ")
    assert lines[2].endswith("; 3 days and 4 messages are left")
    assert lines[3].startswith("would dream default 2023-04-03: 2 messages, about ")
    assert lines[4].startswith("would dream default 2023-04-05: 1 messages") and len(lines) == 5
    for table in ("daily_log", "dream_runs", "memory_candidates", "processing_cursors"):
        assert written(data_dir, table) == 0, table


def test_without_a_terminal_it_asks_for_yes(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = dream(data_dir, capsys)
    assert code == 2 and out.startswith("backfill: 5 days") and "add --yes" in err
    assert written(data_dir, "dream_runs") == 0


def test_at_a_terminal_it_asks_first(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    code, out, _ = dream(data_dir, capsys)
    assert code == 1 and "dream 5 days, about " in out and out.rstrip().endswith("nothing dreamt")
    assert written(data_dir, "dream_runs") == 0


def test_the_budget_stops_the_run_and_the_same_command_continues(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = dream(data_dir, capsys, "--budget-tokens", "2000", "--yes")
    lines = out.splitlines()
    assert code == 0, out
    assert [line for line in lines if line.startswith("default 2023-")] == [
        "default 2023-04-03: 2 messages, 1 batches, 1 candidate created; succeeded",
        "default 2023-04-05: 1 messages, 1 batches, 0 candidates created; succeeded",
    ]
    # Week 14 waits for its last day, 2023-04-06, which the budget left for the next run.
    assert "rolled up: 0 weekly and 0 monthly entries written" in lines
    assert lines[-2:] == [
        "stopped at the budget: 3 days and 4 messages are left; to continue:",
        f"    companion-memory dream --backfill --budget-tokens 2000 --data-dir {data_dir} --yes",
    ]

    code, out, _ = dream(data_dir, capsys, "--budget-tokens", "2000", "--yes")
    assert code == 0 and out.startswith("backfill: 3 days with messages not dreamt yet, 2023-04-06 to 2023-05-17")
    assert "rolled up: 2 weekly and 1 monthly entries written" in out  # weeks 14 and 15, and April
    code, out, _ = dream(data_dir, capsys, "--yes")
    assert code == 0 and "default 2023-05-17: 1 messages" in out and "stopped" not in out
    assert "rolled up: 1 weekly and 0 monthly entries written" in out  # May's lone week waits for company
    code, out, _ = dream(data_dir, capsys, "--yes")
    assert (code, out) == (0, "no past day has messages not dreamt yet; nothing to dream\n")
    assert written(data_dir, "daily_log") == 5


def test_a_budget_smaller_than_the_first_day_says_so(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = dream(data_dir, capsys, "--budget-tokens", "10", "--yes")
    assert code == 1 and "budget 10 tokens: no day fits; default 2023-04-03 alone takes about " in out
    assert "(raise --budget-tokens to dream it)" in out
    assert written(data_dir, "dream_runs") == 0


def test_the_backfill_options_go_with_backfill(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dream", "--budget-tokens", "10", "--data-dir", str(data_dir)]) == 2
    assert "--budget-tokens goes with --backfill" in capsys.readouterr().err
    assert cli.main(["dream", "--backfill", "--date", "2023-04-03", "--data-dir", str(data_dir)]) == 2
    assert "--since and --until" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["dream", "--backfill", "--budget-tokens", "0"])


def test_with_dream_model_a_failed_day_stops_the_run(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, upstream: RecordingUpstream
) -> None:
    monkeypatch.setenv("CHAT_BASE_URL", upstream.url + "/v1")
    monkeypatch.setenv("DREAM_MODEL", "dreamer")
    upstream.reply_text = '{"title": "cut off", "add": [{"content": "Likes t'
    code, out, _ = dream(data_dir, capsys, "--yes")
    lines = out.splitlines()
    assert code == 1, out
    assert (
        lines[1] == "DREAM_MODEL dreamer reads them; each batch's answer takes at most 8,000 tokens (DREAM_MAX_TOKENS)"
    )
    assert lines[2].startswith("default 2023-04-03: 0 messages, 0 batches, 0 candidates created; failed (")
    assert lines[-2:] == [
        "stopped: default 2023-04-03 failed, and it and the days after it wait; to retry:",
        f"    companion-memory dream --backfill --data-dir {data_dir} --yes",
    ]
    upstream.reply_text = answer()
    code, out, _ = dream(data_dir, capsys, "--yes")
    assert code == 0 and out.count("; succeeded") == 5
    # The failed batch's two tries, a batch a day, then three weeks and a month summarised.
    assert len(upstream.requests) == 2 + 5 + 4
