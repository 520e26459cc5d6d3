"""``companion-memory hooks``: put the coding-agent hook into Claude Code's settings, take it
out again, and say what is installed and whether the server answers.

The hook program (``integrations/claude-code/companion_memory_hook.py``, standard library
only) is copied next to the settings it is registered in, so it keeps working whatever
happens to this package's environment. What install adds, and only that, is recorded in a
small manifest beside the copy, so uninstall can take exactly that out again (and put back
an environment value it replaced).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HOOK_FILE = "companion_memory_hook.py"
MANIFEST_FILE = "companion_memory_hook.installed.json"
DEFAULT_URL = "http://127.0.0.1:8787"
URL_VARIABLE = "COMPANION_MEMORY_URL"
KEY_VARIABLE = "COMPANION_MEMORY_KEY"
# Claude Code's own limit per run of the hook (seconds): a backstop only, since the hook gives
# each call to the server 2 s and a Stop makes at most a few calls.
EVENTS: dict[str, int] = {"SessionStart": 10, "UserPromptSubmit": 10, "PreCompact": 30, "Stop": 30, "SessionEnd": 30}
PING_TIMEOUT = 2.0


def hook_source() -> Path:
    """The packaged copy in an installed wheel, else the repository's ``integrations/``."""
    packaged = Path(__file__).resolve().parents[1] / "_integrations" / "claude-code" / HOOK_FILE
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[3] / "integrations" / "claude-code" / HOOK_FILE


@dataclass(frozen=True)
class Target:
    """Where one scope's settings live, where the hook is copied and how it is run."""

    scope: str
    settings: Path
    script: Path
    command: str

    @property
    def manifest(self) -> Path:
        return self.script.with_name(MANIFEST_FILE)


def python_command() -> str:
    """The interpreter the hook runs under, as an absolute path: found once here rather than
    through PATH on every hook run (a version manager's shim costs a second each time)."""
    found = shutil.which("python3")
    if found:
        try:
            answer = subprocess.run(
                [found, "-c", "import sys; print(sys.version_info >= (3, 9) and sys.executable or '')"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            answer = None
        if answer is not None and answer.stdout.strip():
            return answer.stdout.strip()
    return sys.executable


def _quoted(path: str) -> str:
    return f'"{path}"' if " " in path else path


def claude_target(scope: str, *, home: Path | None = None, project: Path | None = None) -> Target:
    if scope == "user":
        python = _quoted(python_command())
        config = os.environ.get("CLAUDE_CONFIG_DIR")
        base = Path(config) if config else (home or Path.home()) / ".claude"
        script = base / "hooks" / HOOK_FILE
        # -S: the hook needs no site-packages, and skipping them is most of a second's start-up
        # on a busy machine
        return Target(scope, base / "settings.json", script, f'{python} -S "{script}"')
    base = (project or Path.cwd()) / ".claude"
    # The project's settings are shared: the command must not name this machine's paths.
    command = f'python3 -S "$CLAUDE_PROJECT_DIR/.claude/hooks/{HOOK_FILE}"'
    return Target(scope, base / "settings.json", base / "hooks" / HOOK_FILE, command)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        document = json.loads(path.read_text(encoding="utf-8") or "{}")
    except ValueError as error:
        raise SystemExit(f"{path} is not valid JSON ({error}); fix it first, nothing was changed") from None
    if not isinstance(document, dict):
        raise SystemExit(f"{path} does not hold a JSON object; nothing was changed")
    return document


def write_with_backup(path: Path, text: str, say: Callable[[str], None]) -> None:
    """Write an agent's settings file, after a copy of what was there (the backup is taken
    on every change, so it is always the state just before this command)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        shutil.copy2(path, backup)
        say(f"backup of the previous settings: {backup}")
    temporary = path.with_name(path.name + ".tmp")
    # Bytes, not text: a file with CRLF line ends keeps them.
    temporary.write_bytes(text.encode("utf-8"))
    os.replace(temporary, path)


def _write_settings(target: Target, settings: dict[str, Any], say: Callable[[str], None]) -> None:
    write_with_backup(target.settings, json.dumps(settings, indent=2, ensure_ascii=False) + "\n", say)


def copy_hook(script: Path, say: Callable[[str], None]) -> bool:
    """Put the hook program at ``script``; True when it was missing or outdated."""
    source = hook_source().read_bytes()
    if script.exists() and script.read_bytes() == source:
        return False
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_bytes(source)
    script.chmod(0o755)
    say(f"hook program: {script}")
    return True


def program_state(script: Path) -> str:
    if not script.exists():
        return "missing: install again"
    if script.read_bytes() != hook_source().read_bytes():
        return "outdated: install again"
    return "up to date"


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and HOOK_FILE in str(hook.get("command", ""))


def install(target: Target, *, url: str, key: str | None, say: Callable[[str], None] = print) -> bool:
    """Copy the hook, register it for each event and set its environment; True when
    anything changed. Running it again changes nothing."""
    original = read_json(target.settings)
    settings = json.loads(json.dumps(original))
    manifest = read_json(target.manifest)
    hooks = settings.setdefault("hooks", {})
    for event, timeout in EVENTS.items():
        groups = hooks.setdefault(event, [])
        entry = {"type": "command", "command": target.command, "timeout": timeout}
        ours = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if _is_ours(h)]
        if ours:
            ours[0].update(entry)  # an older install's command or timeout is brought up to date
        else:
            groups.append({"hooks": [entry]})
    wanted = {URL_VARIABLE: url}
    if key and target.scope == "user":
        wanted[KEY_VARIABLE] = key
    env = settings.setdefault("env", {})
    recorded = manifest.setdefault("env", {})
    for name, value in wanted.items():
        if name not in recorded:
            recorded[name] = {"previous": env.get(name)}
        env[name] = value
        recorded[name]["digest"] = _digest(value)
    manifest["added_sections"] = sorted(
        set(manifest.get("added_sections", [])) | {s for s in ("hooks", "env") if s not in original}
    )
    copied = copy_hook(target.script, say)
    target.manifest.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    if settings == original:
        say(f"already installed in {target.settings}; nothing changed")
        return copied
    _write_settings(target, settings, say)
    say(f"installed for {', '.join(EVENTS)} in {target.settings}")
    if key is None:
        where = "your environment" if target.scope == "project" else f"your environment or {target.settings}"
        say(f"no {KEY_VARIABLE} was set: set it in {where} (the MCP key is enough)")
    elif target.scope == "project":
        say(f"the key is not written into the project's shared settings: set {KEY_VARIABLE} in your environment")
    return True


def uninstall(target: Target, *, say: Callable[[str], None] = print) -> bool:
    """Take out what install added: our hook entries, the environment values it set (when
    they are still the ones it set; a value it replaced comes back), the hook copy."""
    original = read_json(target.settings)
    settings = json.loads(json.dumps(original))
    manifest = read_json(target.manifest)
    hooks = settings.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            for group in groups:
                if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                    group["hooks"] = [h for h in group["hooks"] if not _is_ours(h)]
            hooks[event] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
            if not hooks[event] and event in EVENTS:
                del hooks[event]
    env = settings.get("env")
    if isinstance(env, dict):
        for name, record in manifest.get("env", {}).items():
            if name in env and _digest(str(env[name])) == record.get("digest"):
                if record.get("previous") is None:
                    del env[name]
                else:
                    env[name] = record["previous"]
    for section in manifest.get("added_sections", []):
        if settings.get(section) == {}:
            del settings[section]
    changed = settings != original
    if changed:
        _write_settings(target, settings, say)
        say(f"removed the companion-memory hook from {target.settings}")
    for path in (target.script, target.manifest):
        if path.exists():
            path.unlink()
            changed = True
    if not changed:
        say(f"not installed in {target.settings}; nothing changed")
    return changed


@dataclass
class Ping:
    reachable: bool
    reads: bool
    writes: bool
    detail: str


def ping(url: str, key: str | None) -> Ping:
    """Whether the server answers, and whether the key may read and write memories. The
    write check sends an empty batch: the scope is checked before the body is read, so a key
    that may write is told its (empty) input is invalid, one that may not gets 403, and nothing
    is stored."""
    import httpx

    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        with httpx.Client(base_url=url, timeout=PING_TIMEOUT, headers=headers) as client:
            client.get("/health").raise_for_status()
            read = client.post("/v1/memory/search", json={"query": "ping", "k": 1})
            write = client.post("/v1/ingest/messages", json={"messages": []})
    except httpx.HTTPError as error:
        return Ping(False, False, False, f"{url} does not answer ({type(error).__name__}: {error})")
    if read.status_code == 401:
        return Ping(True, False, False, f"the key was refused: {_message(read)}")
    reads = read.status_code == 200
    writes = write.status_code in (400, 422)
    detail = "the key may read and write memories" if reads and writes else f"read {read.status_code} {_message(read)}"
    if reads and not writes:
        detail = f"the key may read but not write memories ({_message(write)})"
    return Ping(True, reads, writes, detail)


def _message(response: Any) -> str:
    try:
        return str(response.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200]


@dataclass(frozen=True)
class Installation:
    """What one agent's settings hold of ours, as ``hooks status`` tells it."""

    name: str
    settings: Path
    what: str | None  # None: not installed
    program: str = ""
    url: str | None = None
    key: str | None = None
    notes: tuple[str, ...] = ()


def claude_installation(target: Target) -> Installation:
    name = f"claude-code {target.scope}"
    settings = read_json(target.settings)
    ours = {
        event: [h for g in groups if isinstance(g, dict) for h in g.get("hooks", []) if _is_ours(h)]
        for event, groups in (settings.get("hooks") or {}).items()
        if isinstance(groups, list)
    }
    events = [event for event, hooks in ours.items() if hooks]
    if not events:
        return Installation(name, target.settings, None)
    program = program_state(target.script)
    if program == "up to date" and any(h.get("command") != target.command for hooks in ours.values() for h in hooks):
        # e.g. the Python it ran under was removed, or the hook was edited by hand
        program = f"run by another command than install writes now ({target.command}): install again"
    env = settings.get("env") or {}
    return Installation(
        name,
        target.settings,
        f"installed for {', '.join(events)}",
        program,
        env.get(URL_VARIABLE),
        env.get(KEY_VARIABLE),
    )


def status(installations: list[Installation], say: Callable[[str], None] = print) -> bool:
    """What is installed where, and a ping of the server the installed hook would call;
    True when it is installed somewhere and the server takes the key for reads and writes."""
    url, key, installed = os.environ.get(URL_VARIABLE), os.environ.get(KEY_VARIABLE), False
    for found in installations:
        if found.what is None:
            say(f"{found.name}: not installed ({found.settings})")
            continue
        installed = True
        say(f"{found.name}: {found.what} ({found.settings}); hook program {found.program}")
        for note in found.notes:
            say(f"  {note}")
        url = url or found.url
        key = key or found.key
    url = url or DEFAULT_URL
    answer = ping(url, key)
    say(f"server {url}: {answer.detail}" + ("" if key else f" (no {KEY_VARIABLE} set)"))
    return installed and answer.reads and answer.writes
