"""``--format auto``: which export a file is, from its first bytes and keys (FORMATS.md
§7), and which of its files (a zip's members) hold the messages. Cheap: a JSON array is
judged by its first element, an object by its keys up to the first that decides.

An error never quotes what the file holds beyond key names: backups keep API keys.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import UnreadableHistory
from .day_file import CHECKPOINT, TURN
from .json_stream import JsonStream
from .source import Export, Source

FORMATS = ("chatgpt", "claude", "chatbox", "cherry-studio", "jsonl", "markdown")
HEAD = 64 << 10
CONVERSATIONS = re.compile(r"conversations(?:-[0-9]+)?\.json")
CHATGPT_SIBLINGS = ("user.json", "chat.html", "message_feedback.json", "export_manifest.json")
CHATBOX_KEYS = ("chat-sessions", "chat-sessions-list", "__exported_at", "__exported_items")
JSONL_KEYS = ("conversation_id", "role", "content")
LEGACY_BACKUP = "make a Legacy backup instead (Settings, Data settings, Backup) and import its zip"


@dataclass(frozen=True)
class Detected:
    format: str
    sources: tuple[Source, ...]
    # What decided it, for the importer to say ("a JSON array whose first element has mapping").
    reason: str


def detect(export: Export) -> Detected:
    if export.archive is not None:
        return _zip(export)
    source = export.whole()
    with source.open() as file:
        head = file.read(HEAD)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UnreadableHistory(f"{export.name}: UTF-16 text, not UTF-8; export it again as UTF-8")
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")("strict").decode(head, final=len(head) < HEAD)
    except UnicodeDecodeError as error:
        raise UnreadableHistory(
            f"{export.name}: not UTF-8 text (byte {error.start}); export it again as UTF-8"
        ) from None
    start = text.lstrip()[:1]
    if start == "[":
        return _array(source)
    if start == "{":
        return _object(source, text)
    if any(TURN.match(line) for line in text.splitlines()) or CHECKPOINT.search(text):
        return Detected("markdown", (source,), "a Markdown day file (turn lines or a checkpoint)")
    raise UnreadableHistory(
        f"{export.name}: not an export this importer knows (ChatGPT, Claude, Chatbox, Cherry Studio, "
        f"JSONL, Markdown day file): {'an empty file' if not start else 'text with no turn line or checkpoint'}"
    )


def sources_for(export: Export, format: str) -> tuple[Source, ...]:
    """The files holding the messages when the format is given, not detected."""
    if format not in FORMATS:
        raise UnreadableHistory(f"unknown format {format!r}: one of auto, {', '.join(FORMATS)}")
    if export.archive is None:
        return (export.whole(),)
    found = _zip(export)
    if found.format != format:
        raise UnreadableHistory(f"{export.name}: asked to read it as {format}, but it is {found.reason}")
    return found.sources


def _array(source: Source) -> Detected:
    with source.open() as file:
        stream = JsonStream(file, source.name)
        for where, first in stream.items(stream.name):
            keys = first.keys() if isinstance(first, dict) else ()
            if "mapping" in keys or "current_node" in keys:
                return Detected("chatgpt", (source,), "a JSON array whose first element has mapping (ChatGPT)")
            if "chat_messages" in keys:
                return Detected("claude", (source,), "a JSON array whose first element has chat_messages (Claude)")
            raise UnreadableHistory(f"{where}: not an export this importer knows: a JSON array of {_seen(first)}")
    raise UnreadableHistory(f"{source.name}: an empty JSON array: nothing to import")


def _object(source: Source, head: str) -> Detected:
    first_line = head.lstrip().partition("\n")[0]
    try:
        line = json.loads(first_line)
    except ValueError:
        line = None
    if isinstance(line, dict) and all(name in line for name in JSONL_KEYS):
        return Detected("jsonl", (source,), "JSONL: one message object a line")
    seen: list[str] = []
    with source.open() as file:
        stream = JsonStream(file, source.name)
        for name, _ in stream.members(stream.name):
            if name in ("indexedDB", "localStorage"):
                return Detected("cherry-studio", (source,), f"a JSON object with {name} (Cherry Studio data.json)")
            if name in CHATBOX_KEYS or name.startswith("session:"):
                return Detected("chatbox", (source,), f"a JSON object with {name} (a Chatbox backup)")
            if name in ("mapping", "current_node"):
                return Detected("chatgpt", (source,), f"a JSON object with {name} (one ChatGPT conversation)")
            if name == "chat_messages":
                return Detected("claude", (source,), "a JSON object with chat_messages (one Claude conversation)")
            seen.append(name)
    if all(name in seen for name in JSONL_KEYS):  # a first line longer than the head
        return Detected("jsonl", (source,), "JSONL: one message object a line")
    raise UnreadableHistory(f"{source.name}: not an export this importer knows: a JSON object with keys {_names(seen)}")


def _zip(export: Export) -> Detected:
    names = export.names()
    root = [name for name in names if "/" not in name]
    if "metadata.json" in root and any(name.startswith(("IndexedDB/", "Local Storage/")) for name in names):
        _refuse_direct_backup(export)
    if "data.json" in root:
        return Detected("cherry-studio", (export.member("data.json"),), "a Cherry Studio backup zip (data.json)")
    conversations = tuple(export.member(name) for name in sorted(root) if CONVERSATIONS.fullmatch(name))
    if conversations:
        if "users.json" in root:
            return Detected("claude", conversations, "a Claude export zip (conversations.json, users.json)")
        if any(name in root for name in CHATGPT_SIBLINGS):
            return Detected("chatgpt", conversations, "a ChatGPT export zip (conversations.json, chat.html)")
        found = _array(conversations[0])
        return Detected(found.format, conversations, f"a zip of {found.reason}")
    raise UnreadableHistory(
        f"{export.name}: a zip without conversations.json or data.json: not an export this importer knows"
    )


def _refuse_direct_backup(export: Export) -> None:
    with export.member("metadata.json").open() as file:
        head = file.read(HEAD)
    try:
        metadata: Any = json.loads(head)
    except ValueError:
        metadata = {}
    version = metadata.get("version") if isinstance(metadata, dict) else None
    if version == 7:
        raise UnreadableHistory(
            f"{export.name}: a Cherry Studio 2.x backup (version 7); its database is not read yet: {LEGACY_BACKUP}"
        )
    raise UnreadableHistory(
        f"{export.name}: a Cherry Studio direct backup (version {version}) copies the app's LevelDB "
        f"storage, which holds no JSON to import: {LEGACY_BACKUP}"
    )


def _seen(value: object) -> str:
    if isinstance(value, dict):
        return f"objects with keys {_names(list(value))}"
    return type(value).__name__ if value is not None else "null"


def _names(keys: list[str]) -> str:
    return ", ".join(keys[:8]) + (", …" if len(keys) > 8 else "") if keys else "(none)"
