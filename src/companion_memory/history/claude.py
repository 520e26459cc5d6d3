"""Claude's data export (``conversations.json`` with ``chat_messages``, FORMATS.md §2):
the text blocks of each message, on the branch ending in its last message."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from .json_stream import JsonStream, records
from .message import IMAGE, ImportedMessage, Role, file_marker, with_markers
from .options import ReadOptions
from .shape import array, key, obj, text
from .source import Source
from .tally import Tally
from .times import fill_times, stored_time, undated

SOURCE = "claude"
ROOT_PARENT = "00000000-0000-4000-8000-000000000000"
ROLES: dict[str, Role] = {"human": "user", "assistant": "assistant"}
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".heic")
# What ``text`` holds where a tool ran: not words Claude said.
PLACEHOLDER = re.compile(r"(?:\s*```\nThis block is not supported on your current device yet\.\n```\s*)+")


def read(sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]:
    for source in sources:
        with source.open() as file:
            for where, conversation in records(JsonStream(file, source.name)):
                yield from _conversation(obj(conversation, where), where, tally)


def _conversation(conversation: dict[str, Any], where: str, tally: Tally) -> Iterator[ImportedMessage]:
    conversation_id = f"{SOURCE}:{key(conversation.get('uuid'), f'{where}.uuid')}"
    title = (
        text(conversation.get("name"), f"{where}.name") or text(conversation.get("summary"), f"{where}.summary") or None
    )
    started = conversation.get("created_at")
    start = None if started is None else stored_time(started, f"{where}.created_at")
    messages = [
        (f"{where}.chat_messages[{index}]", obj(message, f"{where}.chat_messages[{index}]"))
        for index, message in enumerate(array(conversation.get("chat_messages"), f"{where}.chat_messages"))
    ]
    if not messages:
        tally.empty_conversations += 1
    shown = _branch(messages)
    tally.skip("off_branch", len(messages) - len(shown))
    dated: list[tuple[ImportedMessage, str | None]] = []
    for path, message in shown:
        role = ROLES.get(str(message.get("sender")))
        if role is None:
            tally.skip("system")
            continue
        content = _content(message, path, tally)
        if not content:
            tally.skip("empty")
            continue
        created = message.get("created_at")
        imported = undated(
            conversation_id, title, role, content, f"{SOURCE}:{key(message.get('uuid'), f'{path}.uuid')}"
        )
        dated.append((imported, None if created is None else stored_time(created, f"{path}.created_at")))
    yield from fill_times(dated, start, tally)


def _branch(messages: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The chain from the last message up through ``parent_message_uuid``: the export
    keeps no current leaf, so the last message is the best guess of the one shown. Older
    exports have no parent ids: every message, in order."""
    if not messages or not all("parent_message_uuid" in message for _, message in messages):
        return messages
    by_id = {message.get("uuid"): (path, message) for path, message in messages}
    chain: list[tuple[str, dict[str, Any]]] = []
    current: Any = messages[-1][1].get("uuid")
    while current in by_id and current != ROOT_PARENT and len(chain) < len(messages):
        chain.append(by_id[current])
        current = by_id[current][1].get("parent_message_uuid")
    return chain[::-1]


def _content(message: dict[str, Any], path: str, tally: Tally) -> str:
    markers = [
        file_marker(text(obj(entry, f"{path}.attachments[{index}]").get("file_name"), f"{path}.attachments[{index}]"))
        for index, entry in enumerate(array(message.get("attachments"), f"{path}.attachments"))
    ]
    for index, entry in enumerate(array(message.get("files"), f"{path}.files")):
        name = text(obj(entry, f"{path}.files[{index}]").get("file_name"), f"{path}.files[{index}].file_name")
        markers.append(IMAGE if name.lower().endswith(IMAGE_EXTENSIONS) else file_marker(name))
    words: list[str] = []
    for index, block in enumerate(array(message.get("content"), f"{path}.content")):
        block = obj(block, f"{path}.content[{index}]")
        if block.get("type") == "text":
            if said := text(block.get("text"), f"{path}.content[{index}].text").strip():
                words.append(said)
        else:
            tally.drop(str(block.get("type")))
    if not words:
        # Older exports have no blocks: the flattened text, without the tool placeholders.
        words = [PLACEHOLDER.sub("\n\n", text(message.get("text"), f"{path}.text")).strip()]
    return with_markers(markers, "\n\n".join(word for word in words if word))
