"""``companion-memory``: serve, migrate, export, import, doctor, starmap (the local runtime)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import TimeError, parse_day
from ..settings import Settings

if TYPE_CHECKING:  # the CLI starts without importing the whole runtime
    from ..application.doctor import HealthReportAnswer
    from ..runtime import Runtime

DATA_DIR_VARIABLE = "COMPANION_MEMORY_DATA_DIR"


def default_data_dir() -> Path:
    if os.environ.get(DATA_DIR_VARIABLE):
        return Path(os.environ[DATA_DIR_VARIABLE]).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("companion-memory", appauthor=False))


def load_settings() -> Settings:
    """Environment variables, plus a ``.env`` in the working directory (which never
    overrides a variable that is already set). Days are cut in the machine's own time zone
    unless DREAM_TIME_ZONE says otherwise."""
    from dotenv import load_dotenv
    from pydantic import ValidationError

    from ..adapters.local.machine_zone import machine_time_zone

    load_dotenv(Path.cwd() / ".env", override=False)
    env = dict(os.environ)
    if not env.get("DREAM_TIME_ZONE") and (own := machine_time_zone(env)):
        env["DREAM_TIME_ZONE"] = own
    try:
        return Settings.from_env(env)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise SystemExit(f"companion-memory: invalid setting ({problems})") from None


def _parser() -> argparse.ArgumentParser:
    from .agent_hooks import DEFAULT_URL

    parser = argparse.ArgumentParser(prog="companion-memory", description="Long-term memory for AI chat clients.")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"where data lives (default: ${DATA_DIR_VARIABLE} or a per-user dir)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="migrate, load the embedder and serve the API")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8787)
    serve.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    migrate = commands.add_parser("migrate", help="apply database migrations")
    migrate.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    export = commands.add_parser("export", help="write everything to a JSON file")
    export.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    export.add_argument("--namespace", help="export one namespace (default: all)")
    export.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    reindex = commands.add_parser(
        "reindex", help="rebuild the vector index from the database (after changing EMBEDDING_MODEL)"
    )
    reindex.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    cleanup = commands.add_parser("cleanup", help="apply retention now (old messages and logs, expiry, purge)")
    cleanup.add_argument("--force", action="store_true", help="run even if retention ran in the last 24 hours")
    cleanup.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    dream = commands.add_parser("dream", help="turn a day's messages into a diary entry and candidate memories")
    dream.add_argument(
        "--date",
        type=_day,
        default=None,
        help="YYYY-MM-DD (default: every recent day, up to yesterday in DREAM_TIME_ZONE, with messages not dreamt yet)",
    )
    dream.add_argument("--dry-run", action="store_true", help="show what would be written; write nothing")
    dream.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    rollup = commands.add_parser("rollup", help="roll diary days into weeks and weeks into months now")
    rollup.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    nightly = commands.add_parser(
        "nightly", help="run the whole nightly job now (dream, retention, GitHub pull, rollups)"
    )
    nightly.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    doctor = commands.add_parser(
        "doctor", help="check the memory's health (exit 1 when a check fails); --repair fixes what is safe to fix"
    )
    doctor.add_argument(
        "--repair",
        action="store_true",
        help="keep an export in the data dir's backups/ first, then requeue missing vectors, drop orphaned ones, "
        "expire plans past their end and rebuild the full-text indexes",
    )
    doctor.add_argument("--json", action="store_true", help="print the report (and the repair) as JSON")
    doctor.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    starmap = commands.add_parser("starmap", help="draw the star map as a standalone SVG or as Mermaid text")
    starmap.add_argument("--format", choices=("svg", "mermaid"), default="svg")
    starmap.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    starmap.add_argument("--namespace", default="default")
    starmap.add_argument("--limit", type=int, default=500, help="at most this many stars, the most important (≤ 2000)")
    starmap.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    import_ = commands.add_parser("import", help="load a JSON export (rows are upserted by id)")
    import_.add_argument("file", type=Path)
    import_.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

    hooks = commands.add_parser("hooks", help="coding-agent hooks: recall before each prompt, write the session back")
    actions = hooks.add_subparsers(dest="action", required=True)
    for action, what in (
        (
            "install",
            "merge the hook into Claude Code's settings or Codex's config.toml (a backup first; running it "
            "again changes nothing)",
        ),
        ("uninstall", "take out exactly what install added"),
    ):
        command = actions.add_parser(action, help=what)
        command.add_argument("agent", choices=("claude-code", "codex"))
        command.add_argument(
            "--scope",
            choices=("user", "project"),
            default="user",
            help="claude-code: user: ~/.claude/settings.json (default); project: .claude/settings.json here. "
            "codex: user only ($CODEX_HOME/config.toml, default ~/.codex)",
        )
        if action == "install":
            command.add_argument(
                "--url",
                help=f"the server (default: $COMPANION_MEMORY_URL or {DEFAULT_URL}); the key is read "
                "from $COMPANION_MEMORY_KEY",
            )
    actions.add_parser("status", help="what is installed, and whether the server answers and takes the key")
    return parser


def _day(text: str) -> date:
    try:
        return parse_day(text)
    except TimeError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "hooks":
        return _hooks(args)
    data_dir = (args.data_dir or default_data_dir()).resolve()
    settings = load_settings()
    from ..adapters.local import native_threads

    native_threads.configure()  # first: numpy reads it when it loads
    if args.command == "serve":
        return _serve(settings, data_dir, args.host, args.port)
    from ..errors import ServiceError

    try:
        return asyncio.run(_COMMANDS[args.command](settings, data_dir, args))
    except ServiceError as error:  # what the API would answer with a 4xx
        print(f"companion-memory {args.command}: {error.message}", file=sys.stderr)
        return 2


def _hooks(args: argparse.Namespace) -> int:
    from . import agent_hooks, codex_hooks

    if args.action == "status":
        found = [agent_hooks.claude_installation(agent_hooks.claude_target(scope)) for scope in ("user", "project")]
        found.append(codex_hooks.installation(codex_hooks.codex_target()))
        return 0 if agent_hooks.status(found) else 1
    key = os.environ.get(agent_hooks.KEY_VARIABLE) or None
    url = getattr(args, "url", None) or os.environ.get(agent_hooks.URL_VARIABLE) or agent_hooks.DEFAULT_URL
    if args.agent == "codex":
        if args.scope != "user":
            raise SystemExit("companion-memory hooks: codex is installed for the user only (--scope user)")
        target = codex_hooks.codex_target()
        if args.action == "uninstall":
            codex_hooks.uninstall(target)
            return 0
        codex_hooks.install(target, url=url)
        print(
            f"Codex reads {agent_hooks.KEY_VARIABLE} from the environment it starts in (the MCP server and the "
            f"notify program both): export it in your shell's profile"
            + ("" if key else " (it is not set in this shell)")
        )
    else:
        claude = agent_hooks.claude_target(args.scope)
        if args.action == "uninstall":
            agent_hooks.uninstall(claude)
            return 0
        agent_hooks.install(claude, url=url, key=key)
    print(f"server {url}: {agent_hooks.ping(url, key).detail}")
    return 0


def _serve(settings: Settings, data_dir: Path, host: str, port: int) -> int:
    import uvicorn

    from ..adapters.local.keys import load_or_create_owner_key
    from ..adapters.local.runtime import build_local_runtime
    from .local_server import create_local_app, issuer_warning, redact_access_log, server_options

    data_dir.mkdir(parents=True, exist_ok=True)
    if not settings.CHATBOX_API_KEY:
        key, new = load_or_create_owner_key(data_dir)
        settings = settings.model_copy(update={"CHATBOX_API_KEY": key})
        if new:
            print(
                f"No CHATBOX_API_KEY set: generated an owner key (shown once, kept in {data_dir}):\n\n    {key}\n",
                flush=True,
            )
        else:
            print(f"Using the owner key kept in {data_dir} (set CHATBOX_API_KEY to choose your own).", flush=True)
    runtime = asyncio.run(build_local_runtime(settings, data_dir))
    print(f"companion-memory: data in {data_dir}, embedder {runtime.embedder.model} ({runtime.embedder.dimensions}-d)")
    print(f"Days begin at midnight in {settings.DREAM_TIME_ZONE} (DREAM_TIME_ZONE)")
    print(f"Serving on http://{host}:{port}  (API docs at /docs)", flush=True)
    warning = issuer_warning(host, settings)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    redact_access_log()
    uvicorn.run(**server_options(create_local_app(runtime), settings), host=host, port=port, log_level="info")
    return 0


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
    await _fill_index(runtime)
    return 0


async def _reindex(settings: Settings, data_dir: Path, _: argparse.Namespace) -> int:
    runtime = await _runtime(settings, data_dir)
    return 0 if await _fill_index(runtime, restart=True) else 1


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


async def _dream(settings: Settings, data_dir: Path, args: argparse.Namespace) -> int:
    from ..application import dream
    from ..application.principal import SYSTEM

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
        label = "would create" if args.dry_run else "created"
        count = len(run.candidates)
        print(
            f"{run.namespace} {run.date}: {run.messages_read} messages, {run.counts.batches} batches, "
            f"{count} candidate{'' if count == 1 else 's'} {label}; {run.status}"
            + (f" ({run.error})" if run.error else "")
            + ("; more messages wait for the next run (DREAM_MAX_RUNS)" if run.more_to_read else "")
        )
        for candidate in run.candidates:
            print(f"  - [{candidate.type}] {candidate.content}  (quote: {candidate.evidence[0].quote!r})")
    return 0 if all(run.status == "succeeded" for run in answer.runs) else 1


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
        await _fill_index(runtime)  # nothing else drains the queue while the server is down
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


async def _fill_index(runtime: Runtime, *, restart: bool = False) -> bool:
    """Catch the vector index up with the database (or, with ``restart``, rebuild it)
    batch by batch, with a progress line; says whether everything got indexed."""
    from ..application import health
    from ..application.principal import SYSTEM

    batch = health.MAX_BATCH
    progress = await health.vector_reindex(runtime, SYSTEM, health.ReindexRequest(restart=restart, batch=batch))
    if progress.queued is not None:
        print(f"rebuilding the vector index with {runtime.embedder.model}: {progress.queued} memories", file=sys.stderr)
    of = f"/{progress.queued}" if progress.queued else ""
    embedded = progress.indexed_now
    while not progress.done and (progress.indexed_now or progress.rebuilding):
        print(f"\rindexing vectors: {embedded}{of}", end="", file=sys.stderr, flush=True)
        progress = await health.vector_reindex(runtime, SYSTEM, health.ReindexRequest(batch=batch))
        embedded += progress.indexed_now
    left = progress.pending
    print(f"\rindexed {embedded} vectors" + (f", {left} left to retry" if left else ""), file=sys.stderr)
    return progress.done


async def _runtime(settings: Settings, data_dir: Path) -> Runtime:
    from ..adapters.local.runtime import build_local_runtime

    return await build_local_runtime(settings, data_dir)


_COMMANDS = {
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
}

if __name__ == "__main__":
    raise SystemExit(main())
