#!/usr/bin/env python3
"""companion-memory for coding agents: a Claude Code hook (and a Codex ``notify`` program).

Standard library only, Python 3.9+, so it runs wherever the agent runs. Configured by the
environment: COMPANION_MEMORY_URL (default http://127.0.0.1:8787), COMPANION_MEMORY_KEY (the
MCP key is enough: it may read and write memories), COMPANION_MEMORY_NAMESPACE (default
``default``).

Claude Code runs it with one JSON object on stdin; ``hook_event_name`` says what happened:

- SessionStart      the boot package (permanent memories, open plans, impressions, precious
                    words), short, as additionalContext.
- UserPromptSubmit  recall on the prompt (/v1/memory/recall); the hits (memories, and what
                    was said in other sessions, dated "[said <day> by you]") as a <memories>
                    block in additionalContext, nothing when no memory passes the floor. The
                    session's own turns are in its context already and are not recalled.
- Stop, SessionEnd  the transcript's new user and assistant turns, from where the last run
                    stopped, to /v1/ingest/messages. Each turn's id is its transcript line's
                    uuid, so a re-run (or a resumed or forked session) stores nothing twice.
                    Tool calls become a one-line summary; tool outputs are skipped.
- PreCompact        what is pending, plus a checkpoint: what was being worked on and what
                    is unfinished, before Claude Code compacts the conversation away.

Codex runs it as its ``notify`` program with the JSON as the last argument
(``agent-turn-complete``): the turn's prompts and answer are ingested. Before the JSON,
``--url URL`` names the server (over COMPANION_MEMORY_URL), and ``--then PROGRAM ARGS...``
a notify program of the user's, which is started first with the same JSON.

It fails open: each call to the server has 2 s; a server that is down, a wrong key or a bad
answer costs one line on stderr, exit status 0, and the agent carries on. After a call that
waited in vain, the hooks of the next 30 s do not try (so a hanging server costs a turn 2 s,
not 2 s per hook); what they did not write back is sent by the next Stop that reaches it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

DEFAULT_URL = "http://127.0.0.1:8787"
TIMEOUT = 2.0  # seconds per call to the server, connecting included
SOURCE_CLAUDE = "claude-code"
SOURCE_CODEX = "codex"
MAX_TEXT = 16_000  # characters kept of one message: a pasted log is not a memory
MAX_LINE = 4_000_000  # bytes: a longer transcript line (a huge tool output) is skipped unread
MAX_READ = 64_000_000  # bytes of transcript read per run (Claude Code writes ~100 kB a turn)
TOOL_SUMMARY = 160  # characters of a tool call's one-line summary
BOOT_CHARS = 6_000  # the session-start context is read on every session: keep it short
RECALL_CHARS = 8_000  # Claude Code shows a longer additionalContext as a preview, not whole
PRECIOUS_SHOWN = 3
# Who said an episode, as the server's block says it: the user is "you", the agent "me".
SAID_BY = {"user": "you", "assistant": "me", "system": "the system", "tool": "a tool"}
BATCH = 200  # messages per ingest call
MAX_CALLS = 5  # ingest calls per run; the rest waits for the next Stop
CHECKPOINT_TAIL = 2_000_000  # bytes of the transcript's end read for the checkpoint
# After a call that waited and got no answer (a hanging server, an unroutable address), the
# hooks of the next this many seconds do not try: four hook runs a turn pay the 2 s once.
QUIET_AFTER_FAILURE = 30
# User lines that Claude Code writes itself (slash commands, their output, `!` shell runs).
_NOT_TYPED = ("<command-name>", "<command-message>", "<local-command-", "<bash-stdout>", "<bash-stderr>")
_TASK_CREATED = re.compile(r"^Task #(\S+) created successfully")
# The argument most telling of what a tool call did, in order of preference.
_TOOL_ARGS = ("command", "file_path", "path", "pattern", "url", "query", "description", "prompt", "skill")

# Run as Codex's notify program: its state lives in Codex's home, not Claude Code's.
_CODEX = False

if TYPE_CHECKING:  # annotations only: the module itself runs on Pythons without dict[...]
    Message = dict[str, Any]


class Failed(Exception):
    """The server could not be used; the hook says so on one line and carries on."""


class Unreachable(Failed):
    """No answer at all: the next hooks leave the server alone for a while."""


# -- the server -------------------------------------------------------------------------------


def _config() -> tuple[str, str, str]:
    url = os.environ.get("COMPANION_MEMORY_URL") or DEFAULT_URL
    return (
        url.rstrip("/"),
        os.environ.get("COMPANION_MEMORY_KEY", ""),
        os.environ.get("COMPANION_MEMORY_NAMESPACE", "default"),
    )


def call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """One request to the server, given TIMEOUT seconds in all (a slow-dripping answer or a
    hanging name lookup included); the JSON answer, or Failed."""
    base, key, _ = _config()
    quiet = _quiet_until(base)
    if quiet > time.time():
        raise Failed(f"not tried: the server did not answer {QUIET_AFTER_FAILURE - int(quiet - time.time())} s ago")
    # Imported here: urllib.request is most of the hook's start-up time, and a run with
    # nothing to send (or a quiet server) does not need it.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8"),
        method=method,
        headers={"content-type": "application/json", "accept": "application/json"},
    )
    if key:
        request.add_header("authorization", "Bearer " + key)
    outcome: list[Any] = []

    def run() -> None:
        try:
            # The socket's own timeout comes after the join's, which then says what happened.
            with urllib.request.urlopen(request, timeout=TIMEOUT + 1) as response:
                outcome.append(json.loads(response.read().decode("utf-8")))
        except urllib.error.HTTPError as error:
            outcome.append(Failed(f"{method} {path}: HTTP {error.code} {_error_message(error)}"))
        except (OSError, ValueError) as error:  # refused, reset, timed out, not JSON
            outcome.append(Unreachable(f"{method} {path}: {error}"))

    started = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(TIMEOUT)
    if not outcome:
        outcome.append(Unreachable(f"{method} {path}: no answer within {TIMEOUT:g} s"))
    # A refused connection costs nothing: only a failure that took time is worth avoiding.
    if isinstance(outcome[0], Unreachable) and time.monotonic() - started > TIMEOUT / 4:
        _set_quiet(base, time.time() + QUIET_AFTER_FAILURE)
    elif quiet:
        _set_quiet(base, 0)
    if isinstance(outcome[0], Failed):
        raise outcome[0]
    return outcome[0]


def _quiet_file(base: str) -> str:
    name = hashlib.sha256(base.encode("utf-8")).hexdigest()[:16]
    return os.path.join(_home(), "companion-memory", f"unreachable-{name}")


def _quiet_until(base: str) -> float:
    try:
        with open(_quiet_file(base), encoding="utf-8") as f:
            return float(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0.0


def _set_quiet(base: str, until: float) -> None:
    path = _quiet_file(base)
    try:
        if not until:
            os.remove(path)
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(str(until))
    except OSError:
        pass  # only an optimisation: without it, each hook tries the server again


def _error_message(error: Any) -> str:
    try:
        return str(json.loads(error.read().decode("utf-8"))["error"]["message"])
    except (OSError, ValueError, KeyError, TypeError):
        return error.reason if isinstance(error.reason, str) else ""


# -- the transcript ---------------------------------------------------------------------------


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" … [{len(text) - limit} more characters not kept]"


def tool_summary(block: dict[str, Any]) -> str:
    """A tool call as one short line: its name and its most telling argument."""
    arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
    detail = next((arguments[k] for k in _TOOL_ARGS if isinstance(arguments.get(k), str) and arguments[k]), "")
    detail = " ".join(str(detail).split())
    line = f"[used {block.get('name') or 'a tool'}" + (f": {detail}" if detail else "")
    return (line[: TOOL_SUMMARY - 2] + "…" if len(line) > TOOL_SUMMARY - 1 else line) + "]"


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return "" if content.lstrip().startswith(_NOT_TYPED) else content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if not block["text"].lstrip().startswith(_NOT_TYPED):
                parts.append(block["text"])
        elif block.get("type") in ("image", "document"):
            parts.append(f"[{block['type']}]")
        # tool_result blocks are tool outputs, not the user speaking: skipped
    return "\n".join(parts)


def _assistant_parts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    parts = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") in ("tool_use", "server_tool_use"):
            parts.append(tool_summary(block))
        # thinking and redacted_thinking are the model's scratch work: skipped
    return [p for p in parts if p.strip()]


def turn_of(entry: Any) -> tuple[str, str, list[str], dict[str, Any]] | None:
    """(role, message id, text parts, line) for a transcript line that is a turn worth keeping."""
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    if entry.get("isSidechain") or entry.get("isMeta") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    uuid = entry.get("uuid")
    if not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
        return None
    if entry["type"] == "user":
        text = _user_text(message.get("content"))
        return ("user", "", [text], entry) if text.strip() else None
    parts = _assistant_parts(message.get("content"))
    return ("assistant", str(message.get("id") or ""), parts, entry) if parts else None


def read_transcript(
    path: str, offset: int, *, limit_lines: int = MAX_LINE, budget: int = MAX_READ
) -> tuple[list[tuple[Message, int]], int]:
    """The turns after byte ``offset`` of a Claude Code transcript: (ingest message, the
    offset just past its last line) for each, and the offset past the last complete line.

    A line still being written (no newline yet) is left for the next run; a line longer than
    ``limit_lines`` bytes (a huge tool output) is skipped without being held in memory; a
    line that is not JSON is skipped. An assistant reply that Claude Code wrote over several
    lines (one per content block, same message id) becomes one message. If the file is now
    shorter than ``offset`` it was rewritten: it is read from the start (the ids keep the
    server from storing anything twice). Reading stops after the line that crosses
    ``budget`` bytes, so a first run over a long session stays quick; the next run goes on."""
    turns: list[tuple[Message, int]] = []
    last_reply = ""  # the message id of the assistant turn at the end of ``turns``
    with open(path, "rb") as transcript:
        transcript.seek(0, os.SEEK_END)
        if transcript.tell() < offset:
            offset = 0
        transcript.seek(offset)
        start = offset
        while offset - start < budget:
            line = transcript.readline(limit_lines + 1)
            if not line.endswith(b"\n"):
                if len(line) <= limit_lines:
                    break  # the end of the file, or a line still being written
                if not _skip_rest_of_line(transcript):
                    break  # an oversized line still being written: its start is re-read next time
                offset = transcript.tell()
                continue
            offset = transcript.tell()
            try:
                turn = turn_of(json.loads(line))
            except ValueError:
                continue
            if turn is None:
                continue
            role, reply_id, parts, entry = turn
            if role == "assistant" and reply_id and reply_id == last_reply and turns:
                previous = turns[-1][0]
                previous["content"] = _cut(previous["content"] + "\n\n" + "\n".join(parts), MAX_TEXT)
                turns[-1] = (previous, offset)
                continue
            last_reply = reply_id if role == "assistant" else ""
            turns.append((_message(role, parts, entry), offset))
    return turns, offset


def _skip_rest_of_line(transcript: Any) -> bool:
    """Read past the end of an oversized line in chunks; False when the file ends first."""
    while True:
        chunk = transcript.readline(1 << 20)
        if not chunk:
            return False
        if chunk.endswith(b"\n"):
            return True


def _message(role: str, parts: list[str], entry: dict[str, Any]) -> Message:
    message: Message = {
        "role": role,
        "content": _cut("\n".join(parts), MAX_TEXT),
        "id": f"{SOURCE_CLAUDE}:{entry['uuid']}",
        "metadata": {"session_id": entry.get("sessionId"), "cwd": entry.get("cwd")},
    }
    if isinstance(entry.get("timestamp"), str):
        message["created_at"] = entry["timestamp"]
    model = entry["message"].get("model")
    if role == "assistant" and isinstance(model, str) and model and not model.startswith("<"):
        message["model"] = model[:200]
    return message


# -- where each transcript was read up to ----------------------------------------------------


def _home() -> str:
    if _CODEX:
        return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def _state_file(transcript_path: str) -> str:
    name = hashlib.sha256(os.path.abspath(transcript_path).encode("utf-8")).hexdigest()[:32]
    return os.path.join(_home(), "companion-memory", "transcripts", name + ".json")


def read_offset(transcript_path: str) -> int:
    try:
        with open(_state_file(transcript_path), encoding="utf-8") as f:
            offset = json.load(f).get("offset", 0)
        return offset if isinstance(offset, int) and offset >= 0 else 0
    except (OSError, ValueError, AttributeError):
        return 0


def save_offset(transcript_path: str, offset: int) -> None:
    state = _state_file(transcript_path)
    os.makedirs(os.path.dirname(state), exist_ok=True)
    temporary = f"{state}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        json.dump({"transcript": os.path.abspath(transcript_path), "offset": offset}, f)
    os.replace(temporary, state)  # a concurrent Stop and SessionEnd never see half a file


# -- the events -------------------------------------------------------------------------------


def ingest(messages: list[Message], conversation_id: str | None, source: str) -> None:
    _, _, namespace = _config()
    for start in range(0, len(messages), BATCH):
        body = {
            "namespace": namespace,
            "conversation_id": conversation_id,
            "source": source,
            "messages": messages[start : start + BATCH],
        }
        call("POST", "/v1/ingest/messages", body)


def sync(event: dict[str, Any]) -> None:
    """Ingest the transcript's turns since the last run; remember how far it got after each
    call that succeeded, so a failure costs a retry, never a turn."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not os.path.isfile(path):
        return
    turns, end = read_transcript(path, read_offset(path))
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else None
    for call_number, start in enumerate(range(0, len(turns), BATCH)):
        if call_number == MAX_CALLS:
            return
        batch = turns[start : start + BATCH]
        ingest([message for message, _ in batch], session, SOURCE_CLAUDE)
        save_offset(path, batch[-1][1])
    save_offset(path, end)


def checkpoint(event: dict[str, Any]) -> Message | None:
    """What was being worked on and what is unfinished, from the end of the transcript: the
    latest prompts, the latest answer and the todo list's open items."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not os.path.isfile(path):
        return None
    start = max(0, os.path.getsize(path) - CHECKPOINT_TAIL)
    turns, end = read_transcript(path, start)  # a first line cut in the middle is not JSON: skipped
    prompts = [m["content"] for m, _ in turns if m["role"] == "user"][-3:]
    answers = [m["content"] for m, _ in turns if m["role"] == "assistant"][-1:]
    open_todos = _open_todos(path, start)
    if not (prompts or open_todos):
        return None
    lines = [
        f"[checkpoint: Claude Code compacted this session ({event.get('trigger') or 'auto'}) in {event.get('cwd')}]"
    ]
    lines += ["Working on:"] + [f"- {_cut(p, 400)}" for p in prompts]
    lines += [f"Last answer: {_cut(a, 600)}" for a in answers]
    lines += (["Unfinished:"] + [f"- {t}" for t in open_todos]) if open_todos else ["Unfinished: no open todo items."]
    session = event.get("session_id") or ""
    return {
        "role": "system",
        "content": "\n".join(lines),
        "id": f"{SOURCE_CLAUDE}:{session}:checkpoint:{end}",  # the same point compacted twice: stored once
        "metadata": {"session_id": session, "cwd": event.get("cwd"), "checkpoint": True},
    }


def _open_todos(path: str, start: int) -> list[str]:
    """The open items of the agent's todo list in the transcript's tail, followed the way
    Claude Code itself rebuilds it: the newest TodoWrite list, and the tasks of TaskCreate
    (numbered by its answer "Task #N created successfully") as TaskUpdate changed them."""
    todos: list[dict[str, Any]] = []
    tasks: dict[str, dict[str, Any]] = {}
    pending: dict[str, dict[str, Any]] = {}  # TaskCreate calls not answered yet, by tool_use id
    with open(path, "rb") as transcript:
        transcript.seek(start)
        while True:
            line = transcript.readline(MAX_LINE + 1)
            if not line:
                break
            if not line.endswith(b"\n") and len(line) > MAX_LINE:
                _skip_rest_of_line(transcript)
                continue
            if b"TodoWrite" not in line and b"Task" not in line:
                continue
            try:
                content = json.loads(line)["message"]["content"]
            except (ValueError, KeyError, TypeError):
                continue
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                given = block.get("input") if isinstance(block.get("input"), dict) else {}
                if block.get("type") == "tool_use" and block.get("name") == "TodoWrite":
                    todos = [t for t in given.get("todos") or [] if isinstance(t, dict)]
                elif block.get("type") == "tool_use" and block.get("name") == "TaskCreate":
                    pending[str(block.get("id"))] = {"content": given.get("subject"), "status": "pending"}
                elif block.get("type") == "tool_use" and block.get("name") == "TaskUpdate":
                    number = str(given.get("taskId"))
                    if given.get("status") == "deleted":
                        tasks.pop(number, None)
                    elif number in tasks:
                        tasks[number].update({k: given[k] for k in ("status",) if given.get(k)})
                        if given.get("subject"):
                            tasks[number]["content"] = given["subject"]
                elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in pending:
                    created = _TASK_CREATED.match(_result_text(block))
                    if created:
                        tasks.setdefault(created.group(1), pending.pop(str(block.get("tool_use_id"))))
    items = [*todos, *tasks.values(), *pending.values()]
    return [
        _cut(str(item.get("content") or ""), 200)
        for item in items
        if item.get("status") != "completed" and item.get("content")
    ]


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def boot_context() -> str:
    _, _, namespace = _config()
    package = call("GET", "/v1/memory_boot?namespace=" + urllib.parse.quote(namespace))
    block = str((package.get("context") or {}).get("text") or "")
    precious = [p for p in package.get("precious") or [] if isinstance(p, dict) and p.get("content")]
    words = [f'- "{_cut(str(p["content"]), 200)}"' for p in precious[:PRECIOUS_SHOWN]]
    if words:
        section = "\n".join(["Precious words (verbatim, newest first):", *words])
        block = (
            block.replace("</memories>", section + "\n</memories>") if block else f"<memories>\n{section}\n</memories>"
        )
    return _fit(block, BOOT_CHARS)


def _fit(block: str, limit: int) -> str:
    """A <memories> block cut to ``limit`` characters: its end (the least relevant lines, or
    the last sections) goes first."""
    if len(block) <= limit:
        return block
    return block[:limit].rstrip() + " …\n</memories>"


def _label(hit: dict[str, Any]) -> str:
    """How the server's own <memories> block dates a hit (gateway/context.py)."""
    day = hit.get("day") or str(hit.get("updated_at", ""))[:10]
    if hit.get("type") == "episode":
        who = hit.get("speaker") or SAID_BY.get(str(hit.get("role")), hit.get("role"))
        return f"[said {day} by {who}]"
    until = f", until {hit['valid_to']}" if hit.get("valid_to") else ""
    return f"[{hit.get('type')}, {day}{until}]"


def recall_context(prompt: str, session: Any = None) -> str:
    """The memories recalled for the prompt as a <memories> block; empty when none passed."""
    if not prompt.strip() or prompt.lstrip().startswith("/"):
        return ""
    _, _, namespace = _config()
    body: dict[str, Any] = {"query": prompt, "namespace": namespace}
    if session:
        body["conversation_id"] = str(session)
    answer = call("POST", "/v1/memory/recall", body)
    lines = [f"{number}. {_label(hit)} {hit.get('content')}" for number, hit in enumerate(answer.get("hits") or [], 1)]
    glossary = answer.get("glossary_hits") or []
    if glossary:
        lines.append("Glossary (the user's own words):")
        for entry in glossary:
            definition = f": {entry['definition']}" if entry.get("definition") else ""
            lines.append(f"- {entry.get('term')}{definition}")
    if not lines:
        return ""
    block = "\n".join(["<memories>", "What I remember (most relevant first):", *lines, "</memories>"])
    return _fit(block, RECALL_CHARS)


def codex_turn(payload: dict[str, Any]) -> None:
    """Codex's notify: one finished turn, its prompts and its last answer."""
    if payload.get("type") != "agent-turn-complete":
        return
    thread, turn = str(payload.get("thread-id") or ""), str(payload.get("turn-id") or "")
    if not thread or not turn:
        return
    meta = {"session_id": thread, "cwd": payload.get("cwd")}
    messages: list[Message] = []
    for number, text in enumerate(payload.get("input-messages") or []):
        if isinstance(text, str) and text.strip():
            messages.append(
                {
                    "role": "user",
                    "content": _cut(text, MAX_TEXT),
                    "id": f"{SOURCE_CODEX}:{thread}:{turn}:{number}",
                    "metadata": meta,
                }
            )
    answer = payload.get("last-assistant-message")
    if isinstance(answer, str) and answer.strip():
        messages.append(
            {
                "role": "assistant",
                "content": _cut(answer, MAX_TEXT),
                "id": f"{SOURCE_CODEX}:{thread}:{turn}:answer",
                "metadata": meta,
            }
        )
    if messages:
        ingest(messages, thread, SOURCE_CODEX)


def handle(event: dict[str, Any]) -> str | None:
    """What to print on stdout for a Claude Code hook event (None: nothing)."""
    name = event.get("hook_event_name")
    context = ""
    if name == "SessionStart":
        context = boot_context()
    elif name == "UserPromptSubmit":
        context = recall_context(str(event.get("prompt") or ""), event.get("session_id"))
    elif name in ("Stop", "SessionEnd"):
        sync(event)
    elif name == "PreCompact":
        sync(event)
        note = checkpoint(event)
        if note is not None:
            ingest([note], event.get("session_id"), SOURCE_CLAUDE)
    if not context:
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}, ensure_ascii=False)


def codex_notify(options: list[str], payload: str) -> None:
    """Codex's notify line: ``--url URL`` and ``--then PROGRAM ARGS...`` before the JSON."""
    global _CODEX
    _CODEX = True
    if "--then" in options:
        at = options.index("--then")
        options, chained = options[:at], options[at + 1 :]
        if chained:
            import subprocess  # here: the Claude Code hooks start without it

            try:  # theirs first, and not waited for: Codex does not wait for its notify either
                subprocess.Popen([*chained, payload], stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as error:
                _warn("codex notify", f"could not start {chained[0]}: {error}")
    if len(options) >= 2 and options[0] == "--url":
        os.environ["COMPANION_MEMORY_URL"] = options[1]
    codex_turn(json.loads(payload))


def main(argv: list[str]) -> int:
    what = "hook"
    try:
        if len(argv) > 1 and argv[-1].lstrip().startswith("{"):  # Codex: the JSON is the last argument
            what = "codex notify"
            codex_notify(argv[1:-1], argv[-1])
            return 0
        event = json.loads(sys.stdin.buffer.read().decode("utf-8", "replace") or "{}")
        what = str(event.get("hook_event_name") or what)
        output = handle(event)
        if output:
            sys.stdout.write(output + "\n")
    except Failed as error:
        _warn(what, str(error))
    except Exception as error:  # noqa: BLE001 - fail open: the agent must never be blocked by its memory
        _warn(what, f"{type(error).__name__}: {error}")
    return 0


def _warn(what: str, problem: str) -> None:
    base, _, _ = _config()
    print(f"companion-memory {what}: {problem} (server {base}); carrying on without memory", file=sys.stderr)


if __name__ == "__main__":
    sys.stdout.flush()
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # do not wait for a call still hanging in its thread
