"""History imports as a job (memory/history_imports.py): each export of tests/data/imports
stored with its times and titles, a second import storing nothing, a broken file leaving
nothing written, since/until, the dry run, and a job cut short going on where it stopped
and counting nothing twice."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from companion_memory.adapters.local.uploads import FileUploads
from companion_memory.clock import FixedClock
from companion_memory.errors import Conflict, InvalidInput
from companion_memory.memory.history_imports import PART_BYTES, HistoryImports, ImportRequest
from companion_memory.runtime import Runtime
from companion_memory.settings import Settings
from tests.conftest import all_keys_settings
from tests.history.fixtures import DATA, expected

FIXTURES = [
    ("chatgpt/conversations.json", "chatgpt/expected.json"),
    ("claude/conversations.json", "claude/expected.json"),
    ("chatbox/backup-new.json", "chatbox/backup-new.expected.json"),
    ("cherry-studio/data.json", "cherry-studio/data.expected.json"),
    ("cherry-studio/cherry-studio.202505120900.zip", "cherry-studio/data.expected.json"),
    ("history.jsonl", "history.expected.json"),
    ("transcript.md", "transcript.expected.json"),
]


@pytest.fixture
def settings() -> Settings:
    # The fixtures' times without an offset (JSONL, Markdown) were written in Singapore.
    return all_keys_settings().model_copy(update={"DREAM_TIME_ZONE": "Asia/Singapore"})


@pytest.fixture
def runtime(runtime: Runtime, tmp_path: Path) -> Runtime:
    """The local server's: a job may name a file of this machine, and uploads are files."""
    return dataclasses.replace(runtime, uploads=FileUploads(tmp_path / "uploads"))


def request(path: Path, **given: object) -> ImportRequest:
    return ImportRequest(
        namespace=str(given.pop("namespace", "imported")),
        name=path.name,
        size=path.stat().st_size,
        path=str(path),
        **given,  # type: ignore[arg-type]
    )


async def imported(runtime: Runtime, path: Path, **given: object) -> tuple[int, int, int, str]:
    imports = runtime.history_imports
    job = await imports.run((await imports.begin(request(path, **given))).id)
    assert job.status == "done", job.error
    return job.total or 0, job.stored, job.duplicates, job.detected or ""


async def stored(runtime: Runtime) -> list[tuple[str, str, str]]:
    rows = await runtime.db.all(
        "SELECT conversation_id, content, created_at FROM messages WHERE namespace = 'imported' ORDER BY rowid"
    )
    return sorted((r["conversation_id"], r["content"], r["created_at"]) for r in rows)


@pytest.mark.parametrize(("path", "wanted"), FIXTURES)
async def test_an_export_is_stored_with_its_times_once(runtime: Runtime, path: str, wanted: str) -> None:
    messages = expected(wanted)["messages"]
    total, new, duplicates, _ = await imported(runtime, DATA / path)
    assert (total, new, duplicates) == (len(messages), len(messages), 0)
    assert await stored(runtime) == sorted(
        (m["conversation_id"], m.get("stored_content", m["content"]), m["created_at"]) for m in messages
    )
    episodes = await runtime.db.first("SELECT COUNT(*) AS n FROM episodes WHERE namespace = 'imported'")
    assert episodes is not None and episodes["n"] == len([m for m in messages if m.get("stored_content", 1)])
    assert (await imported(runtime, DATA / path))[:3] == (len(messages), 0, len(messages))


async def test_a_message_keeps_its_conversation_title_and_source(runtime: Runtime) -> None:
    await imported(runtime, DATA / "chatgpt/conversations.json")
    row = await runtime.db.first(
        "SELECT source, metadata FROM messages WHERE namespace = 'imported' ORDER BY created_at LIMIT 1"
    )
    assert row is not None and row["source"] == "import:chatgpt"
    assert json.loads(row["metadata"])["title"] == "周末去杭州的行程 🍵"


async def test_a_broken_file_fails_naming_where_and_stores_nothing(runtime: Runtime, tmp_path: Path) -> None:
    whole = (DATA / "chatgpt/conversations.json").read_bytes()
    broken = tmp_path / "conversations.json"
    broken.write_bytes(whole[: len(whole) * 3 // 4])
    imports = runtime.history_imports
    job = await imports.run((await imports.begin(request(broken))).id)
    assert job.status == "failed" and job.finished_at
    assert job.error is not None and "conversations.json" in job.error and "[1]" in job.error
    assert await runtime.db.all("SELECT id FROM messages") == []


async def test_another_kind_of_file_is_refused(runtime: Runtime, tmp_path: Path) -> None:
    notes = tmp_path / "notes.json"
    notes.write_text('{"shopping": ["milk", "eggs"]}', encoding="utf-8")
    imports = runtime.history_imports
    job = await imports.run((await imports.begin(request(notes))).id)
    assert job.status == "failed" and job.error is not None and job.error.startswith("notes.json")
    assert await runtime.db.all("SELECT id FROM messages") == []


async def test_since_and_until_keep_the_days_between(runtime: Runtime) -> None:
    """The JSONL fixture's messages are on 2025-06-01 and later days; only the first day is asked."""
    messages = expected("history.expected.json")["messages"]
    first_day = [m for m in messages if m["created_at"] < "2025-06-02"]
    assert 0 < len(first_day) < len(messages)
    imports = runtime.history_imports
    begun = await imports.begin(
        request(DATA / "history.jsonl", since_at="2025-06-01T00:00:00.000Z", until_at="2025-06-02T00:00:00.000Z")
    )
    job = await imports.run(begun.id)
    assert (job.stored, job.outside) == (len(first_day), len(messages) - len(first_day))
    assert len(await stored(runtime)) == len(first_day)


async def test_a_dry_run_counts_and_stores_nothing(runtime: Runtime) -> None:
    path = DATA / "claude/conversations.json"
    imports = runtime.history_imports
    dry = await imports.run((await imports.begin(request(path, dry_run=True))).id)
    total = len(expected("claude/expected.json")["messages"])
    assert (dry.status, dry.total, dry.stored, dry.duplicates) == ("done", total, total, 0)
    assert await runtime.db.all("SELECT id FROM messages") == []
    await imported(runtime, path)
    again = await imports.run((await imports.begin(request(path, dry_run=True))).id)
    assert (again.stored, again.duplicates) == (0, total)


async def test_a_job_cut_short_goes_on_where_it_stopped(runtime: Runtime, tmp_path: Path) -> None:
    """A step stores part of the file; a new process (a new service, nothing kept open)
    reads the file again, passes over what was handled, and ends with every message
    stored once, the counts exact."""
    path = tmp_path / "history.jsonl"
    lines = [
        json.dumps(
            {
                "conversation_id": f"c{n // 10}",
                "role": "user" if n % 2 == 0 else "assistant",
                "content": f"message {n}",
                "created_at": f"2024-01-{1 + n // 100:02d}T10:{n % 60:02d}:{n % 59:02d}Z",
            }
        )
        for n in range(1_200)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    first = runtime.history_imports
    job = await first.begin(request(path))
    job = await first.step(job.id)  # the check
    assert (job.status, job.total, job.position) == ("storing", 1_200, 0)
    job = await first.step(job.id, limit=700)
    assert (job.status, job.position, job.stored) == ("storing", 700, 700)

    again = HistoryImports(runtime.db, runtime.clock, runtime.ingestor, runtime.uploads, None, "UTC")
    assert (await again.begin(request(path))).id == job.id  # the same file's unfinished job
    done = await again.run(job.id)
    assert (done.status, done.position, done.stored, done.duplicates) == ("done", 1_200, 1_200, 0)
    count = await runtime.db.first("SELECT COUNT(*) AS n FROM messages")
    assert count is not None and count["n"] == 1_200


async def test_a_batch_run_twice_counts_once(runtime: Runtime) -> None:
    """Two deliveries of the same step (a queue delivers at least once) store and count
    each message once: the second's batch moves nothing from a position it is not at."""
    path = DATA / "history.jsonl"
    imports = runtime.history_imports
    job = await imports.step((await imports.begin(request(path))).id)
    other = HistoryImports(runtime.db, runtime.clock, runtime.ingestor, runtime.uploads, None, "UTC")
    await imports.step(job.id)
    late = await other.step(job.id)
    total = len(expected("history.expected.json")["messages"])
    assert (late.status, late.position, late.stored, late.duplicates) == ("done", total, total, 0)


async def test_parts_arrive_in_order_and_the_last_queues_the_job(runtime: Runtime) -> None:
    data = (DATA / "claude/conversations.json").read_bytes()
    imports = runtime.history_imports
    job = await imports.begin(ImportRequest(namespace="imported", name="conversations.json", size=len(data)))
    assert job.status == "uploading"
    half = len(data) // 2
    with pytest.raises(Conflict) as ahead:
        await imports.receive(job.id, half, data[half:])
    assert ahead.value.details == {"received": 0}
    await imports.receive(job.id, 0, data[:half])
    assert (await imports.receive(job.id, 0, data[:half])).received == half  # a repeat is taken again
    with pytest.raises(InvalidInput):
        await imports.receive(job.id, half, data[half:] + b"more than the size said")
    job = await imports.receive(job.id, half, data[half:])
    assert (job.status, job.received) == ("queued", len(data))
    done = await imports.run(job.id)
    assert done.stored == len(expected("claude/expected.json")["messages"])
    with pytest.raises(FileNotFoundError):  # the parts are gone with the job
        await imports.uploads.open(job.id)


async def test_an_upload_is_refused_when_it_is_too_big_or_empty(runtime: Runtime) -> None:
    imports = runtime.history_imports
    with pytest.raises(InvalidInput, match="at most"):
        await imports.begin(ImportRequest(namespace="imported", name="big.zip", size=imports.uploads.max_bytes + 1))
    with pytest.raises(InvalidInput, match="empty"):
        await imports.begin(ImportRequest(namespace="imported", name="empty.json", size=0))
    job = await imports.begin(ImportRequest(namespace="imported", name="a.jsonl", size=10))
    with pytest.raises(InvalidInput):
        await imports.receive(job.id, 0, b"x" * (PART_BYTES + 1))


async def test_the_night_gives_up_an_abandoned_upload_and_queues_a_stalled_job(
    runtime: Runtime, clock: FixedClock
) -> None:
    imports = runtime.history_imports
    data = (DATA / "history.jsonl").read_bytes()
    abandoned = await imports.begin(ImportRequest(namespace="imported", name="history.jsonl", size=len(data)))
    await imports.receive(abandoned.id, 0, data[:100])
    stalled = await imports.begin(ImportRequest(namespace="imported", name="history.jsonl", size=len(data)))
    await imports.receive(stalled.id, 0, data)
    clock.advance(hours=2)
    assert await imports.tidy() == {"abandoned": 0, "requeued": 1}
    clock.advance(days=1)
    assert await imports.tidy() == {"abandoned": 1, "requeued": 1}
    gone = await imports.get(abandoned.id)
    assert (
        gone.status == "failed"
        and gone.error == f"history.jsonl: the upload stopped at byte 100 of {len(data)}; start it again"
    )
    with pytest.raises(FileNotFoundError):
        await imports.uploads.open(abandoned.id)
