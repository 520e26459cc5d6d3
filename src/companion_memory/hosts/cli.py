"""``companion-memory``: serve, migrate, export, import, doctor, starmap (the local runtime),
hooks: the parser, the settings and data directory, the server and the hook installers;
the commands that run a use case are in cli_commands.py."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from datetime import date
from pathlib import Path

from ..clock import TimeError, parse_day
from ..settings import Settings
from . import import_history
from .cli_commands import COMMANDS

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
    dream.add_argument(
        "--backfill",
        action="store_true",
        help="dream every past day with messages not dreamt yet, however old (imported history): an estimate "
        "first, then the days oldest first, then the rollups",
    )
    dream.add_argument("--since", type=_day, help="--backfill: the first day (default: the first with messages)")
    dream.add_argument("--until", type=_day, help="--backfill: the last day (default: yesterday)")
    dream.add_argument(
        "--budget-tokens",
        type=_positive,
        help="--backfill: stop before the day that would pass this many estimated tokens (run again to continue)",
    )
    dream.add_argument("--namespace", help="--backfill: one namespace (default: all)")
    dream.add_argument("--yes", action="store_true", help="--backfill: do not ask before dreaming")
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

    history = commands.add_parser(
        "import-history",
        help="import a chat export (ChatGPT, Claude, Chatbox, Cherry Studio, JSONL, Markdown) with its dates",
    )
    import_history.add_arguments(history)
    history.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS)

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


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


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
        return asyncio.run(COMMANDS[args.command](settings, data_dir, args))
    except ServiceError as error:  # what the API would answer with a 4xx
        print(f"companion-memory {args.command}: {error.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # what was written stays written: every step commits as it goes
        print(f"\ncompanion-memory {args.command}: interrupted", file=sys.stderr)
        return 130


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


if __name__ == "__main__":
    raise SystemExit(main())
