"""Chatbox's data backup (FORMATS.md §3): the sessions under ``chat-sessions`` (before
1.12) or ``session:<id>`` (after), each message in either shape; the settings, which hold
API keys, are skipped unread."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .json_stream import JsonStream
from .message import IMAGE, ImportedMessage, file_marker, with_markers
from .options import ReadOptions
from .shape import array, key, obj, text
from .source import Source
from .tally import Tally
from .times import epoch_millis, fill_times, undated

SOURCE = "chatbox"
# The demo sessions a new install seeds (Chatbox's own list of them): their preset
# messages have no time and are not the user's; anything the user added to one is.
EXAMPLE_SESSIONS = frozenset(
    {
        "6dafa15e-c72f-4036-ac89-33c09e875bdc",
        "e22ab364-4681-4e24-aaba-461ed0fccfd3",
        "55d92e88-02af-4c3b-a378-aa0a1970abb1",
        "35df5a96-b612-406a-985b-3ab4d2c481ff",
        "776eac23-7b4a-40da-91cd-f233bb4742ed",
        "81cfc426-48b4-4a13-ad42-bfcfc4544299",
        "8732ec08-b23c-4b5e-8f65-d63d808f970f",
        "3e091ac6-ebfa-42c9-b125-c67ac2d45ee1",
        "chatbox-chat-demo-image-creator",
        "chatbox-chat-demo-artifact-1-cn",
        "chatbox-chat-demo-artifact-1-en",
        "mermaid-demo-1-en",
        "mermaid-demo-1-cn",
    }
)
SESSION_KEY = "session:"


def read(sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]:
    for source in sources:
        with source.open() as file:
            stream = JsonStream(file, source.name)
            listed: list[str] = []
            found: set[str] = set()
            for name, where in stream.members(stream.name):
                if name == "chat-sessions":
                    for path, session in stream.items(where):
                        yield from _session(obj(session, path), path, tally)
                elif name.startswith(SESSION_KEY):
                    found.add(name.removeprefix(SESSION_KEY))
                    yield from _session(obj(stream.value(where), where), where, tally)
                elif name == "chat-sessions-list":
                    listed = [str(obj(meta, where).get("id")) for meta in array(stream.value(where), where)]
            stream.end()
            for missing in [ident for ident in listed if ident not in found]:
                tally.warn(f"{source.name}: session {missing} is listed but not in the backup")


def _session(session: dict[str, Any], where: str, tally: Tally) -> Iterator[ImportedMessage]:
    ident = key(session.get("id"), f"{where}.id")
    title = text(session.get("name"), f"{where}.name") or None
    forks = session.get("messageForksHash")
    for fork in (forks or {}).values() if isinstance(forks, dict) else ():
        for branch in array(fork.get("lists") if isinstance(fork, dict) else None, f"{where}.messageForksHash"):
            tally.skip("off_branch", len(array(branch.get("messages") if isinstance(branch, dict) else None, where)))
    hidden = session.get("hidden") is True or session.get("type") == "picture"
    for index, thread in enumerate(array(session.get("threads"), f"{where}.threads")):
        thread = obj(thread, f"{where}.threads[{index}]")
        thread_id = key(thread.get("id"), f"{where}.threads[{index}].id")
        yield from _messages(
            thread.get("messages"),
            f"{where}.threads[{index}].messages",
            f"{SOURCE}:{ident}:{thread_id}",
            text(thread.get("name"), f"{where}.threads[{index}].name") or None,
            hidden,
            ident in EXAMPLE_SESSIONS,
            tally,
        )
    yield from _messages(
        session.get("messages"),
        f"{where}.messages",
        f"{SOURCE}:{ident}",
        title,
        hidden,
        ident in EXAMPLE_SESSIONS,
        tally,
    )


def _messages(
    messages: Any, where: str, conversation_id: str, title: str | None, hidden: bool, example: bool, tally: Tally
) -> Iterator[ImportedMessage]:
    dated: list[tuple[ImportedMessage, str | None]] = []
    for index, message in enumerate(array(messages, where)):
        path = f"{where}[{index}]"
        message = obj(message, path)
        role = message.get("role")
        stamp = message.get("timestamp")
        if role in ("system", "tool"):
            tally.skip(role)
            continue
        if role not in ("user", "assistant") or message.get("isSummary"):
            tally.skip("system")
            continue
        if hidden:
            tally.skip("hidden")
            continue
        if example and stamp is None:
            tally.skip("example")
            continue
        content = _content(message, path, tally)
        if not content:
            tally.skip("error" if message.get("error") or message.get("errorCode") else "empty")
            continue
        imported = undated(conversation_id, title, role, content, f"{SOURCE}:{key(message.get('id'), f'{path}.id')}")
        dated.append((imported, None if stamp is None else epoch_millis(stamp, f"{path}.timestamp")))
    yield from fill_times(dated, None, tally)


def _content(message: dict[str, Any], path: str, tally: Tally) -> str:
    """Markers, then words: from ``contentParts``, or from the old ``content`` and
    ``pictures`` when the parts are missing, empty or only "..." (what Chatbox's own
    ``migrateMessage`` does; one backup can mix both shapes)."""
    parts = array(message.get("contentParts"), f"{path}.contentParts")
    markers: list[str] = []
    words: list[str] = []
    if parts and not (len(parts) == 1 and isinstance(parts[0], dict) and parts[0].get("text") == "..."):
        for index, part in enumerate(parts):
            part = obj(part, f"{path}.contentParts[{index}]")
            kind = part.get("type")
            if kind == "text":
                words.append(text(part.get("text"), f"{path}.contentParts[{index}].text"))
            elif kind == "image":
                markers.append(IMAGE)
            else:
                tally.drop(str(kind))
    else:
        words.append(text(message.get("content"), f"{path}.content"))
        markers.extend(IMAGE for _ in array(message.get("pictures"), f"{path}.pictures"))
    for index, attached in enumerate(array(message.get("files"), f"{path}.files")):
        markers.append(file_marker(text(obj(attached, f"{path}.files[{index}]").get("name"), f"{path}.files[{index}]")))
    for _ in array(message.get("links"), f"{path}.links"):
        tally.drop("link")
    return with_markers(markers, "\n".join(word for word in words if word.strip()).strip())
