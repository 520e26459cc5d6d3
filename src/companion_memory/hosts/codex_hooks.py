"""``companion-memory hooks install codex``: Codex writes each turn back through its ``notify``
program and recalls through the MCP server, both set in Codex's ``config.toml``.

config.toml is the user's own file, so install edits it as text: the lines it owns (the
top-level ``notify`` and a ``[mcp_servers.companion-memory]`` table) and nothing else, and
every result is read back with tomllib before it is written. Comments, order and the rest
of the bytes stay as they were. The manifest beside the hook copy keeps what each edit
replaced, so uninstall puts the file back as it was.

Codex runs one ``notify`` program. If the user already has one, install keeps it in a
chain: the hook starts it first with the same JSON (the hook's ``--then``), and uninstall
puts the user's line back. The key is never written down: Codex passes COMPANION_MEMORY_KEY
from its environment to the MCP server (``bearer_token_env_var``) and to the notify program.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..domain.endpoints import MCP_PATHS
from .agent_hooks import (
    HOOK_FILE,
    KEY_VARIABLE,
    MANIFEST_FILE,
    Installation,
    copy_hook,
    program_state,
    python_command,
    read_json,
    write_with_backup,
)

SERVER = "companion-memory"
CHAIN = "--then"  # the hook's argument that starts the user's own notify program
_NOTIFY = re.compile(r"""[ \t]*(?:notify|"notify"|'notify')[ \t]*=""")
_HEADER = re.compile(r"[ \t]*\[")


@dataclass(frozen=True)
class CodexTarget:
    config: Path
    script: Path

    @property
    def manifest(self) -> Path:
        return self.script.with_name(MANIFEST_FILE)


def codex_target(home: Path | None = None) -> CodexTarget:
    configured = os.environ.get("CODEX_HOME")
    base = Path(configured) if configured else (home or Path.home()) / ".codex"
    return CodexTarget(base / "config.toml", base / "companion-memory" / HOOK_FILE)


def notify_command(script: Path, url: str, chained: list[str]) -> list[str]:
    command = [python_command(), "-S", str(script), "--url", url]
    return [*command, CHAIN, *chained] if chained else command


def _is_ours(notify: Any) -> bool:
    """A notify line that runs the hook: install's, or one written by hand from the README."""
    return isinstance(notify, list) and any(str(a).endswith(HOOK_FILE) for a in _own_part(notify))


def _own_part(notify: list[Any]) -> list[Any]:
    return notify[: notify.index(CHAIN)] if CHAIN in notify else notify


def _chained(notify: Any) -> list[str]:
    """The user's own notify program that ours starts first."""
    if not isinstance(notify, list) or CHAIN not in notify:
        return []
    return [str(a) for a in notify[notify.index(CHAIN) + 1 :]]


def _url_of(notify: Any) -> str | None:
    if not isinstance(notify, list):
        return None
    own = _own_part(notify)
    return str(own[own.index("--url") + 1]) if "--url" in own[:-1] else None


# -- TOML as text ---------------------------------------------------------------------------


def _parse(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, but TOML wants DEL escaped too."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _array(values: list[str]) -> str:
    return "[" + ", ".join(_string(v) for v in values) + "]"


def _lines(text: str) -> list[str]:
    """Lines with their ends, split at line feeds only (TOML's line ends; str.splitlines
    would also split inside a comment at a form feed or U+2028)."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _root_end(lines: list[str]) -> int:
    """The first table header: a line that opens one outside any multi-line value (what
    comes before it parses on its own); the end when there is none."""
    for index, line in enumerate(lines):
        if _HEADER.match(line) and _parse("".join(lines[:index])) is not None:
            return index
    return len(lines)


def _notify_span(lines: list[str]) -> tuple[int, int] | None:
    """The lines of the top-level ``notify = …`` (a multi-line array whole)."""
    end = _root_end(lines)
    for start in range(end):
        if _NOTIFY.match(lines[start]) and _parse("".join(lines[:start])) is not None:
            for stop in range(start + 1, end + 1):
                if "notify" in (_parse("".join(lines[start:stop])) or {}):
                    return start, stop
    return None


def _insertion_points(lines: list[str]) -> list[int]:
    """Where a new top-level key may go, best first: after the last top-level line that is
    not blank or a comment (the comments above the first table introduce it), else at the top."""
    at = _root_end(lines)
    while at and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
        at -= 1
    # Not after a last line without its line end: that would change the user's line.
    return [at, 0] if at and (at < len(lines) or lines[-1].endswith("\n")) else [0]


def read_config(path: Path) -> str:
    if not path.exists():
        return ""
    try:
        text = path.read_bytes().decode("utf-8")
        tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise SystemExit(f"{path} is not valid TOML ({error}); fix it first, nothing was changed") from None
    return text


# -- the two edits --------------------------------------------------------------------------


def _with_notify(text: str, target: CodexTarget, url: str, manifest: dict[str, Any]) -> str:
    current = (_parse(text) or {}).get("notify")
    if current is not None and not (isinstance(current, list) and all(isinstance(a, str) for a in current)):
        raise SystemExit(f"{target.config}: notify is not a list of strings; fix it first, nothing was changed")
    ours = _is_ours(current)
    wanted = notify_command(target.script, url, _chained(current) if ours else list(current or []))
    if current == wanted:
        return text
    line = f"notify = {_array(wanted)}"
    lines = _lines(text)
    span = _notify_span(lines)
    if span is not None:
        start, stop = span
        previous = "".join(lines[start:stop])
        if not ours:  # the user's own: chained now, put back by uninstall
            manifest["notify"] = {"previous": previous}
        ending = previous[len(previous.rstrip("\r\n")) :]
        candidates = [[*lines[:start], line + ending, *lines[stop:]]]
    else:
        manifest["notify"] = {"previous": ""}
        newline = _newline(text)
        candidates = [[*lines[:at], line + newline, *lines[at:]] for at in _insertion_points(lines)]
    for candidate in candidates:
        edited = "".join(candidate)
        if (_parse(edited) or {}).get("notify") == wanted:
            return edited
    raise SystemExit(f"could not set notify in {target.config} without breaking it; nothing was changed")


def _with_server(text: str, target: CodexTarget, url: str, manifest: dict[str, Any], say: Callable[[str], None]) -> str:
    newline = _newline(text)
    mcp_url = url.rstrip("/") + MCP_PATHS[0]
    block = newline.join(
        [f"[mcp_servers.{SERVER}]", f"url = {_string(mcp_url)}", f"bearer_token_env_var = {_string(KEY_VARIABLE)}", ""]
    )
    record = manifest.get("mcp_server")
    if record and record["separator"] + record["block"] in text:
        if record["block"] == block:
            return text
        before, _, after = text.rpartition(record["separator"] + record["block"])
        edited = before + record["separator"] + block + after
        record["block"] = block
    else:
        theirs = ((_parse(text) or {}).get("mcp_servers") or {}).get(SERVER)
        if theirs is not None:
            say(f"[mcp_servers.{SERVER}] is already in {target.config}: left as it is (url {theirs.get('url')})")
            return text
        separator = "" if not text or text.endswith(newline * 2) else newline if text.endswith(newline) else newline * 2
        manifest["mcp_server"] = {"separator": separator, "block": block}
        edited = text + separator + block
    server = ((_parse(edited) or {}).get("mcp_servers") or {}).get(SERVER) or {}
    if server.get("url") != mcp_url:
        raise SystemExit(
            f"could not add [mcp_servers.{SERVER}] to {target.config} without breaking it; nothing was changed"
        )
    return edited


def _without_notify(text: str, manifest: dict[str, Any]) -> str:
    lines = _lines(text)
    span = _notify_span(lines)
    if span is None:
        return text
    start, stop = span
    current = (_parse("".join(lines[start:stop])) or {}).get("notify")
    if not _is_ours(current):
        return text
    if "notify" in manifest:
        replacement = manifest["notify"]["previous"]
    else:  # the manifest is gone: the chained program is all that was there before
        chained = _chained(current)
        replacement = f"notify = {_array(chained)}{_newline(text)}" if chained else ""
    return "".join([*lines[:start], replacement, *lines[stop:]])


def _without_server(text: str, target: CodexTarget, manifest: dict[str, Any], say: Callable[[str], None]) -> str:
    record = manifest.get("mcp_server")
    if not record:
        return text
    ours = record["separator"] + record["block"]
    if ours not in text:
        if SERVER in ((_parse(text) or {}).get("mcp_servers") or {}):
            say(f"[mcp_servers.{SERVER}] in {target.config} was changed since install: left in place")
        return text
    before, _, after = text.rpartition(ours)
    return before + after


# -- install, uninstall, status -----------------------------------------------------------------


def install(target: CodexTarget, *, url: str, say: Callable[[str], None] = print) -> bool:
    """Copy the hook, set notify and the MCP server in config.toml; True when anything
    changed. Running it again changes nothing."""
    text = read_config(target.config)
    manifest = read_json(target.manifest)
    if not target.config.exists():
        manifest.setdefault("created", True)
    edited = _with_server(_with_notify(text, target, url, manifest), target, url, manifest, say)
    copied = copy_hook(target.script, say)
    target.manifest.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    if edited == text:
        say(f"already installed in {target.config}; nothing changed")
        return copied
    write_with_backup(target.config, edited, say)
    say(f"installed in {target.config}: notify (each turn written back) and [mcp_servers.{SERVER}] (recall)")
    return True


def uninstall(target: CodexTarget, *, say: Callable[[str], None] = print) -> bool:
    """Take out what install added: notify (the user's own comes back), the MCP server
    table it wrote (not one changed since), the hook copy."""
    text = read_config(target.config)
    manifest = read_json(target.manifest)
    edited = _without_notify(_without_server(text, target, manifest, say), manifest)
    if _parse(edited) is None:
        raise SystemExit(f"could not take companion-memory out of {target.config} cleanly; nothing was changed")
    changed = edited != text
    if changed and manifest.get("created") and not edited:
        target.config.unlink()  # install made the file, and nothing else is in it
        say(f"removed {target.config} (install had made it)")
    elif changed:
        write_with_backup(target.config, edited, say)
        say(f"removed companion-memory from {target.config}")
    for path in (target.script, target.manifest):
        if path.exists():
            path.unlink()
            changed = True
    if target.script.parent.is_dir() and not any(target.script.parent.iterdir()):
        target.script.parent.rmdir()  # the hook's own state (if any) is left where it is
    if not changed:
        say(f"not installed in {target.config}; nothing changed")
    return changed


def installation(target: CodexTarget) -> Installation:
    text = read_config(target.config)
    document = _parse(text) or {}
    notify = document.get("notify")
    server = (document.get("mcp_servers") or {}).get(SERVER)
    ours = _is_ours(notify)
    if not ours and server is None:
        return Installation("codex", target.config, None)
    parts = [*(["notify"] if ours else []), *([f"[mcp_servers.{SERVER}]"] if server is not None else [])]
    notes: list[str] = []
    url = _url_of(notify) if ours else None
    program = program_state(target.script) if ours else "not run"
    if ours and program == "up to date" and url and notify != notify_command(target.script, url, _chained(notify)):
        program = "run by another command than install writes now: install again"
    if not ours:
        notes.append("notify does not run the hook: turns are not written back (install again)")
    if server is None:
        notes.append(f"no [mcp_servers.{SERVER}]: Codex has no memory tools (install again)")
    else:
        variable = server.get("bearer_token_env_var")
        if variable and not os.environ.get(variable):
            notes.append(f"${variable} is not set here: Codex quietly starts without the memory tools")
        if url and server.get("url") != url.rstrip("/") + MCP_PATHS[0]:
            notes.append(f"the MCP server is at {server.get('url')}, the notify program writes to {url}")
    return Installation("codex", target.config, "installed: " + " and ".join(parts), program, url, None, tuple(notes))
