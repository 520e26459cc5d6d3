"""The command line's commands that run on the local runtime (a use case each, or the
migrator): what they print, and their exit codes."""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..settings import Settings
from . import import_history
from .vector_fill import fill_index

if TYPE_CHECKING:  # the CLI starts without importing the whole runtime
    from ..application.doctor import HealthReportAnswer
    from ..application.dream import BackfillEstimate, DreamReport
    from ..runtime import Runtime


async def _migrate(settings: Settings, data_dir: Path, _: argparse.Namespace) -> int:
    from ..adapters.local.runtime import DATABASE_FILE
    from ..adapters.local.sqlite import SqliteDatabase
    from ..migrations import apply_migrations, default_migrations_dir, load_migrations

    data_dir.mkdir(parents=True, exist_ok=True)
    db = SqliteDatabase.open(data_dir / DATABASE_FILE)
    try:
        applied = await apply_migrations(db, load_migrations(default_migrations_dir()))
    finally:
        db.close()
    print("\n".join(f"applied {name}" for name in applied) or "database is up to date")
    return 0


async def _export(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from ..application import snapshot
    from ..application.principal import SYSTEM

    runtime = await _runtime(settings, data_dir)
    document = await snapshot.export(runtime, SYSTEM, snapshot.ExportScope(namespace=args.namespace))
    text = json.dumps(document.model_dump(), ensure_ascii=False, indent=1)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        counts = ", ".join(f"{len(rows)} {table}" for table, rows in (document.model_extra or {}).items())
        print(f"wrote {args.output}: {counts}", file=sys.stderr)
    else:
        sys.stdout.write(text + "\n")
    return 0


async def _import(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from ..application import snapshot
    from ..application.principal import SYSTEM
    from ..errors import ServiceError

    try:
        document: Any = json.loads(args.file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        print(f"cannot read {args.file}: {error}", file=sys.stderr)
        return 2
    runtime = await _runtime(settings, data_dir)
    try:
        report = await snapshot.import_document(runtime, SYSTEM, snapshot.ImportDocument(document=document))
    except ServiceError as error:
        print(f"cannot import {args.file}: {error.message}", file=sys.stderr)
        return 2
    print("imported " + ", ".join(f"{n} {table}" for table, n in report.imported.items()))
    for table, n in report.refused.items():
        print(f"refused {n} {table} rows that clash with existing ones", file=sys.stderr)
    await fill_index(runtime)
    return 0


async def _reindex(settings: Settings, data_dir: Path, _: argparse.Namespace) -> int:
    runtime = await _runtime(settings, data_dir)
    return 0 if await fill_index(runtime, restart=True) else 1


async def _cleanup(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from ..application import maintenance
    from ..application.principal import SYSTEM

    runtime = await _runtime(settings, data_dir)
    report = await maintenance.retention(runtime, SYSTEM, maintenance.RetentionRun(force=args.force))
    if report.skipped:
        print(f"retention already ran at {report.last_run}; use --force to run again")
        return 0
    counts = report.model_dump(exclude={"skipped", "last_run"})
    print(", ".join(f"{value} {name.replace('_', ' ')}" for name, value in counts.items()))
    return 0


# The dream's options that only the backfill takes.
BACKFILL_ONLY = {"since": "--since", "until": "--until", "budget_tokens": "--budget-tokens", "namespace": "--namespace"}


async def _dream(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from ..application import dream
    from ..application.principal import SYSTEM

    if args.backfill:
        return await _backfill(settings, data_dir, args)
    misplaced = [flag for name, flag in BACKFILL_ONLY.items() if getattr(args, name) is not None]
    if misplaced or args.yes:
        print(f"companion-memory dream: {(misplaced or ['--yes'])[0]} goes with --backfill", file=sys.stderr)
        return 2
    runtime = await _runtime(settings, data_dir)
    which = args.date or "recent days with messages not dreamt yet"
    print(
        f"dreaming {which} with {runtime.dream.extractor.name}" + (" (dry run)" if args.dry_run else "") + " …",
        flush=True,
    )
    answer = await dream.dream(runtime, SYSTEM, dream.DreamRun(date=args.date, dry_run=args.dry_run))
    if not answer.runs:
        print("no new messages; nothing to dream")
    for run in answer.runs:
        print(_run_text(run, args.dry_run))
    return 0 if all(run.status == "succeeded" for run in answer.runs) else 1


def _run_text(run: DreamReport, dry_run: bool) -> str:
    """A dream run's line, and a line for each of its candidates."""
    count = len(run.candidates)
    lines = [
        f"{run.namespace} {run.date}: {run.messages_read} messages, {run.counts.batches} batches, "
        f"{count} candidate{'' if count == 1 else 's'} {'would create' if dry_run else 'created'}; {run.status}"
        + (f" ({run.error})" if run.error else "")
        + ("; more messages wait for the next run (DREAM_MAX_RUNS)" if run.more_to_read else "")
    ]
    lines += [f"  - [{c.type}] {c.content}  (quote: {c.evidence[0].quote!r})" for c in run.candidates]
    return "\n".join(lines)


async def _backfill(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ..application import dream, maintenance
    from ..application.principal import SYSTEM
    from ..application.use_case import Nothing

    if args.date:
        print(
            "companion-memory dream: --backfill reads every past day; choose them with --since and --until",
            file=sys.stderr,
        )
        return 2
    try:
        scope = dream.BackfillRange(
            since=args.since, until=args.until, namespace=args.namespace, budget_tokens=args.budget_tokens
        )
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        print(f"companion-memory dream: {problems}", file=sys.stderr)
        return 2
    runtime = await _runtime(settings, data_dir)
    estimate = await dream.backfill_estimate(runtime, SYSTEM, scope)
    print(_estimate_text(estimate), flush=True)
    planned = estimate.days[: estimate.planned.days]
    if args.dry_run:
        for day in planned:
            print(f"would dream {day.namespace} {day.date}: {day.messages} messages, about {day.tokens:,} tokens")
    if args.dry_run or not estimate.days:
        return 0
    if not planned:
        return 1  # the budget is too small for the first day: this would stop here every time
    if not args.yes:
        if not sys.stdin.isatty():
            print("companion-memory dream: stdin is not a terminal; add --yes to dream these days", file=sys.stderr)
            return 2
        question = f"dream {_days(estimate.planned.days)}, about {estimate.planned.tokens:,} tokens? [y/N] "
        answer = await asyncio.to_thread(input, question)
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing dreamt")
            return 1
    failed = None
    for day in planned:
        done = await dream.backfill_day(runtime, SYSTEM, dream.BackfillDayRun(namespace=day.namespace, date=day.date))
        for run in done.runs:
            print(_run_text(run, dry_run=False), flush=True)
        if any(run.status != "succeeded" for run in done.runs):
            failed = day
            break
    rolled = await maintenance.rollups(runtime, SYSTEM, Nothing())
    print(f"rolled up: {rolled.weekly_written} weekly and {rolled.monthly_written} monthly entries written")
    if failed is not None:
        print(
            f"stopped: {failed.namespace} {failed.date} failed, and it and the days after it wait; to retry:\n"
            f"    {_backfill_again(args)}"
        )
        return 1
    left = estimate.left
    if left.days:
        print(
            f"stopped at the budget: {_days(left.days)} and {left.messages:,} messages are left; to continue:\n"
            f"    {_backfill_again(args)}"
        )
    return 0


def _days(count: int) -> str:
    return f"{count} day{'' if count == 1 else 's'}"


def _estimate_text(estimate: BackfillEstimate) -> str:
    """What the backfill would read, with what, and how much of it the budget allows."""
    total, days = estimate.total, estimate.days
    if not days:
        return "no past day has messages not dreamt yet; nothing to dream"
    lines = [
        f"backfill: {_days(total.days)} with messages not dreamt yet, {days[0].date} to {days[-1].date}: "
        f"{total.messages:,} messages in {total.batches:,} batches, about {total.tokens:,} input tokens"
    ]
    if estimate.calls_model:
        lines.append(
            f"DREAM_MODEL {estimate.dream_model} reads them; each batch's answer takes at most "
            f"{estimate.max_output_tokens:,} tokens (DREAM_MAX_TOKENS)"
        )
    else:
        lines.append(
            f"DREAM_MODEL {estimate.dream_model} is not configured: the embedded extractor dreams them and no "
            "model is called (the tokens are what DREAM_MODEL would read)"
        )
    planned, left, budget = estimate.planned, estimate.left, estimate.budget_tokens
    if budget is not None and not planned.days:
        first = days[0]
        lines.append(
            f"budget {budget:,} tokens: no day fits; {first.namespace} {first.date} alone takes about "
            f"{first.tokens:,} tokens (raise --budget-tokens to dream it)"
        )
    elif budget is not None:
        lines.append(
            f"budget {budget:,} tokens: the first {_days(planned.days)} fit "
            f"({planned.messages:,} messages, about {planned.tokens:,} tokens)"
            + (f"; {_days(left.days)} and {left.messages:,} messages are left" if left.days else "")
        )
    return "\n".join(lines)


def _backfill_again(args: argparse.Namespace) -> str:
    """The command that continues this backfill: the same one (days dreamt are not read again)."""
    words = ["companion-memory", "dream", "--backfill"]
    for name, flag in BACKFILL_ONLY.items():
        if getattr(args, name) is not None:
            words += [flag, str(getattr(args, name))]
    if args.data_dir:
        words += ["--data-dir", str(args.data_dir)]
    return shlex.join(words + (["--yes"] if args.yes else []))


async def _rollup(settings: Settings, data_dir: Path, _: argparse.Namespace) -> int:
    from ..application import maintenance
    from ..application.principal import SYSTEM
    from ..application.use_case import Nothing

    runtime = await _runtime(settings, data_dir)
    print(f"rolling up with {runtime.rollups.summarizer.name} summaries …", flush=True)
    written = await maintenance.rollups(runtime, SYSTEM, Nothing())
    print(f"{written.weekly_written} weekly and {written.monthly_written} monthly entries written")
    return 0


async def _nightly(settings: Settings, data_dir: Path, _: argparse.Namespace) -> int:
    from ..application import dream
    from ..application.principal import SYSTEM

    runtime = await _runtime(settings, data_dir)
    run = await dream.nightly(runtime, SYSTEM, dream.NightlyTrigger(trigger="cli"))
    for step in run.steps:
        print(f"{'ok    ' if step.ok else 'FAILED'} {step.name}: {step.describe()[:300]}")
    return 0 if run.ok else 1


async def _doctor(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from ..application import doctor
    from ..application.principal import SYSTEM
    from ..application.use_case import Nothing

    runtime = await _runtime(settings, data_dir)
    report = await doctor.report(runtime, SYSTEM, Nothing())
    if not args.repair:
        print(report.model_dump_json(indent=1) if args.json else _report_text(report))
        return 0 if report.ok else 1
    if not args.json:
        print(_report_text(report) + "\n\nrepairing …", flush=True)
    repaired = await doctor.repair(runtime, SYSTEM, doctor.RepairRequest())
    after = repaired.report
    if any(check.name == "backlog" and check.value for check in after.checks):
        await fill_index(runtime)  # nothing else drains the queue while the server is down
        after = await doctor.report(runtime, SYSTEM, Nothing())
    if args.json:
        print(repaired.model_copy(update={"report": after}).model_dump_json(indent=1))
        return 0 if after.ok else 1
    backup = repaired.backup
    print(f"backup: {backup.path}" if backup.path else f"no backup: {backup.note}")
    for action in repaired.actions:
        print(f"  {action.summary}")
    print("\nafterwards:\n" + _report_text(after))
    return 0 if after.ok else 1


def _report_text(report: HealthReportAnswer) -> str:
    width = max(len(check.name) for check in report.checks)
    lines = [f"{check.status.upper():<5} {check.name:<{width}}  {check.summary}" for check in report.checks]
    failed = sum(check.status == "fail" for check in report.checks)
    warned = sum(check.status == "warn" for check in report.checks)
    lines.append(f"{report.status}: {failed} failed, {warned} to look at, of {len(report.checks)} checks")
    return "\n".join(lines)


async def _starmap(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ..api.starmap_file import star_map_file
    from ..application import admin_views
    from ..application.principal import SYSTEM

    try:
        query = admin_views.StarMapQuery(format=args.format, namespace=args.namespace, types=[], limit=args.limit)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        print(f"companion-memory starmap: {problems}", file=sys.stderr)
        return 2
    runtime = await _runtime(settings, data_dir)
    drawn = await star_map_file(await admin_views.starmap(runtime, SYSTEM, query), runtime.heavy_reads)
    if args.output:
        args.output.write_text(drawn.content, encoding="utf-8")
        more = " (the most important; raise --limit for more)" if drawn.truncated else ""
        print(f"wrote {args.output}: {drawn.nodes} memories, {drawn.edges} relations{more}", file=sys.stderr)
    else:
        sys.stdout.write(drawn.content)
    return 0


async def _runtime(settings: Settings, data_dir: Path) -> Runtime:
    from ..adapters.local.runtime import build_local_runtime

    return await build_local_runtime(settings, data_dir)


COMMANDS = {
    "migrate": _migrate,
    "export": _export,
    "import": _import,
    "reindex": _reindex,
    "cleanup": _cleanup,
    "rollup": _rollup,
    "dream": _dream,
    "nightly": _nightly,
    "doctor": _doctor,
    "starmap": _starmap,
    "import-history": import_history.run,
}
