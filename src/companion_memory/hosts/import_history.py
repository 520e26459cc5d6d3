"""``companion-memory import-history FILE``: a chat export imported into the local data
dir, or, with ``--url``, uploaded in parts to a running server (a Worker's too), with a
progress line and the summary at the end. Running it again after a crash goes on with
the same job (locally) or stores nothing twice (anywhere)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..settings import Settings

if TYPE_CHECKING:
    from ..application.history_imports import ImportJob
    from ..history.message import ImportedMessage
    from ..history.tally import Summary

# How often the remote form asks how far its import got.
POLL_SECONDS = 1.0


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("file", type=Path, help="the export: a .json, .jsonl, .md, or the app's .zip")
    command.add_argument(
        "--format",
        default="auto",
        choices=("auto", "chatgpt", "claude", "chatbox", "cherry-studio", "jsonl", "markdown"),
        help="which app's export it is (default: detect it, and say why)",
    )
    command.add_argument("--namespace", default="default", help="where the messages go (default: default)")
    command.add_argument("--since", metavar="YYYY-MM-DD", help="only what was said from this day on")
    command.add_argument("--until", metavar="YYYY-MM-DD", help="only what was said up to this day, included")
    command.add_argument("--dry-run", action="store_true", help="read and count; store nothing")
    command.add_argument(
        "--no-embed", action="store_true", help="leave the embedding to the server instead of waiting for it here"
    )
    command.add_argument(
        "--url",
        help="import into the server at this address (the key from $COMPANION_MEMORY_KEY) instead of the data dir",
    )


async def run(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ..application.history_imports import ImportStart

    try:
        size = args.file.stat().st_size
    except OSError as error:
        print(f"cannot read {args.file}: {error.strerror or error}", file=sys.stderr)
        return 2
    fields = {"since": args.since, "until": args.until, "namespace": args.namespace}
    try:
        start = ImportStart.model_validate(
            {"name": args.file.name, "size": size, "format": args.format, "dry_run": args.dry_run, **fields}
        )
    except ValidationError as error:
        problems = "; ".join(f"--{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        print(f"companion-memory import-history: {problems}", file=sys.stderr)
        return 2
    if args.url:
        return _ended(await _remote(args.url, args.file, start, settings.DREAM_TIME_ZONE))
    return await _local(settings, data_dir, args.file, start, embed=not args.no_embed)


def _ended(job: ImportJob) -> int:
    print(file=sys.stderr)
    print(describe(job), flush=True)
    return 0 if job.status == "done" else 1


async def _local(settings: Settings, data_dir: Path, file: Path, start: Any, *, embed: bool) -> int:
    """Imported here, then embedded here too (the server may not be running): Ctrl-C
    while embedding leaves the rest to the server's background work."""
    from ..adapters.local.runtime import build_local_runtime
    from ..application.history_imports import answer, request_of
    from .vector_fill import fill_index

    runtime = await build_local_runtime(settings, data_dir)
    imports = runtime.history_imports
    job = await imports.begin(request_of(runtime, start, path=str(file.resolve())))
    if job.position:
        print(f"going on with the import begun at {job.created_at}", file=sys.stderr)
    ended = await imports.run(job.id, lambda step: _progress(step.status, step.position, step.total, step.name))
    code = _ended(await answer(runtime, ended))
    if embed and ended.stored and not ended.dry_run:
        print("embedding the new episodes (Ctrl-C leaves the rest to the server) …", file=sys.stderr)
        await fill_index(runtime)
    return code


async def _remote(url: str, file: Path, start: Any, time_zone: str, transport: Any = None) -> ImportJob:
    import httpx

    headers = {"Authorization": f"Bearer {os.environ.get('COMPANION_MEMORY_KEY', '')}"}
    async with httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, timeout=120, transport=transport) as client:
        server = _Server(client, url.rstrip("/"))
        try:
            with file.open("rb") as source:
                return await server.send(start, source)
        except _TooLarge as refused:
            print(f"{file.name} is more than the server takes at once; sending it in pieces", file=sys.stderr)
            return await _in_pieces(server, file, start, time_zone, refused.max_bytes // 2)


class _TooLarge(Exception):
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes


class _Server:
    """The server's /v1/imports, as the command line uses it."""

    def __init__(self, client: Any, url: str) -> None:
        self.client, self.url = client, url

    async def call(self, method: str, path: str, **kwargs: Any) -> ImportJob:
        import httpx

        from ..application.history_imports import ImportJob

        try:
            response = await self.client.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise SystemExit(f"companion-memory import-history: cannot reach {self.url}: {error}") from None
        if response.status_code >= 400:
            details = _error_body(response)
            if details.get("code") == "payload_too_large" and "max_bytes" in details.get("details", {}):
                raise _TooLarge(int(details["details"]["max_bytes"]))
            message = details.get("message") or f"HTTP {response.status_code}"
            raise SystemExit(f"companion-memory import-history: {self.url}{path}: {message}")
        return ImportJob.model_validate(response.json())

    async def send(self, start: Any, source: BinaryIO) -> ImportJob:
        """The file uploaded part after part, then followed until its import ends."""
        job = await self.call("POST", "/v1/imports", json=start.model_dump(mode="json"))
        while job.status == "uploading":
            source.seek(job.received)
            part = source.read(job.part_bytes)
            job = await self.call("PUT", f"/v1/imports/{job.id}/parts/{job.received}", content=part)
            _progress("uploading", job.received, job.size, job.name, unit="bytes")
        while job.status not in ("done", "failed"):
            await asyncio.sleep(POLL_SECONDS)
            job = await self.call("GET", f"/v1/imports/{job.id}")
            _progress(job.status, job.position, job.total, job.name)
        return job


async def _in_pieces(server: _Server, file: Path, start: Any, time_zone: str, piece_bytes: int) -> ImportJob:
    """A file larger than the server takes (the Worker's), read here and sent as our JSONL
    in pieces, each an import of its own; one summary for the whole file."""
    from ..history.options import ReadOptions
    from ..history.reading import read_history

    jobs: list[ImportJob] = []

    async def send(piece: bytes) -> None:
        name = f"{file.stem}.{len(jobs) + 1}.jsonl"
        fields = {"name": name, "size": len(piece), "format": "jsonl"}
        jobs.append(await server.send(start.model_copy(update=fields), io.BytesIO(piece)))

    with file.open("rb") as source:
        read = read_history(source, file.name, format=start.format, options=ReadOptions(time_zone=time_zone))
        piece = bytearray()
        for message in read.messages():
            piece += _jsonl(message)
            if len(piece) >= piece_bytes:
                await send(bytes(piece))
                piece.clear()
        if piece or not jobs:
            await send(bytes(piece))
    return _whole(jobs, read.format, f"{read.reason}; sent in {len(jobs)} pieces", file.name, read.tally.summary())


def _jsonl(message: ImportedMessage) -> bytes:
    """A message as our JSONL says it, with the id its reader gave it (``source_id``)."""
    metadata = {**(message.metadata or {}), **({"estimated_time": True} if message.estimated else {})}
    line = {
        "conversation_id": message.conversation_id,
        "title": message.title,
        "source_id": message.source_id,
        "role": message.role,
        "content": message.content,
        "created_at": message.created_at,
        "name": message.name,
        "metadata": metadata or None,
    }
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


def _whole(jobs: list[ImportJob], format: str, reason: str, name: str, summary: Summary) -> ImportJob:
    from ..application.history_imports import ImportSummary

    failed = next((job for job in jobs if job.status == "failed"), None)
    return jobs[-1].model_copy(
        update={
            "name": name,
            "detected": format,
            "reason": reason,
            "status": "failed" if failed else "done",
            "error": failed.error if failed else None,
            "total": sum(job.total or 0 for job in jobs),
            "position": sum(job.position for job in jobs),
            "stored": sum(job.stored for job in jobs),
            "duplicates": sum(job.duplicates for job in jobs),
            "outside": sum(job.outside for job in jobs),
            "summary": ImportSummary.model_validate(dataclasses.asdict(summary)),
        }
    )


def _error_body(response: Any) -> dict[str, Any]:
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return {}
    return error if isinstance(error, dict) else {}


_last_shown = 0.0


def _progress(status: str, done: int, total: int | None, name: str, *, unit: str = "messages") -> None:
    """One line, rewritten in place, at most a few times a second."""
    global _last_shown
    now = time.monotonic()
    if now - _last_shown < 0.2 and status == "storing":
        return
    _last_shown = now
    if status == "checking" or (status == "storing" and not total):
        line = f"checking {name} …"
    elif total:
        width = 30
        filled = width * done // total
        line = f"{status} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} {unit} ({100 * done // total}%)"
    else:
        line = f"{status} {name} …"
    print(f"\r{line:<80}", end="", file=sys.stderr, flush=True)


def describe(job: ImportJob) -> str:
    """The summary: what the file held, what was stored, and what was not, and why."""
    lines = [f"{job.name}: {job.detected or job.format} ({job.reason or 'not read'}) into {job.namespace}"]
    if job.error:
        lines.append(f"failed: {job.error}")
        if not job.stored:
            lines.append("nothing of it was stored")
        return "\n".join(lines)
    summary = job.summary
    if summary is not None:
        lines.append(
            f"{summary.conversations:,} conversations, {summary.messages:,} messages"
            + (f", from {summary.first[:10]} to {summary.last[:10]}" if summary.first and summary.last else "")
        )
        if summary.skipped:
            reasons = ", ".join(f"{n:,} {reason}" for reason, n in sorted(summary.skipped_by_reason.items()))
            lines.append(f"skipped {summary.skipped:,} messages ({reasons})")
        if summary.empty_conversations:
            lines.append(f"{summary.empty_conversations:,} conversations without a message")
        lines += [f"warning: {warning}" for warning in summary.warnings]
    verb = "would store" if job.dry_run else "stored"
    lines.append(f"{verb} {job.stored:,}, {job.duplicates:,} duplicates (stored before)")
    if job.outside:
        lines.append(f"{job.outside:,} outside --since/--until")
    if job.embedding_left and not job.dry_run:
        lines.append(f"{job.embedding_left:,} episodes still to embed: the server embeds them in the background")
    return "\n".join(lines)
