"""Cherry Studio's legacy backup (``data.json``, alone or in its zip; versions 2 to 5,
FORMATS.md §4): the topics' messages, their words from ``message_blocks``, their titles
from the redux-persist string in ``localStorage``.

``message_blocks`` comes after ``topics`` in the file, so it is read in two passes: the
first keeps each block's words or marker (and the titles), the second streams the topics.
The provider keys and WebDAV/S3 credentials beside them are never parsed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..clock import shown
from ..errors import UnreadableHistory
from .json_stream import JsonStream
from .message import IMAGE, ImportedMessage, file_marker, with_markers
from .options import ReadOptions
from .shape import array, key, obj, text
from .source import Source
from .tally import Tally
from .times import fill_times, stored_time, undated

SOURCE = "cherry-studio"
PERSIST_KEY = "persist:cherry-studio"
WORDS = ("main_text", "code")
SUPPORTED = range(2, 6)


@dataclass(frozen=True)
class Topic:
    title: str | None
    created_at: str | None


@dataclass(frozen=True)
class Block:
    """What a kept message takes from a block: words, a marker, or nothing (its kind
    is then counted as dropped)."""

    kind: str
    words: str = ""
    marker: str = ""


def read(sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]:
    for source in sources:
        topics, blocks = _first_pass(source)
        with source.open() as file:
            stream = JsonStream(file, source.name)
            for name, where in stream.members(stream.name):
                if name == "indexedDB":
                    for table, path in stream.members(where):
                        if table == "topics":
                            for element, topic in stream.items(path):
                                yield from _topic(obj(topic, element), element, topics, blocks, tally)
            stream.end()


def _first_pass(source: Source) -> tuple[dict[str, Topic], dict[str, Block]]:
    topics: dict[str, Topic] = {}
    blocks: dict[str, Block] = {}
    with source.open() as file:
        stream = JsonStream(file, source.name)
        for name, where in stream.members(stream.name):
            if name == "version":
                version = stream.value(where)
                if version not in SUPPORTED:
                    raise UnreadableHistory(
                        f"{where}: backup version {shown(version)} is not supported (versions 2 to 5 are)"
                    )
            elif name == "localStorage":
                topics = _titles(obj(stream.value(where), where), where)
            elif name == "indexedDB":
                for table, path in stream.members(where):
                    if table == "message_blocks":
                        for element, block in stream.items(path):
                            block = obj(block, element)
                            blocks[key(block.get("id"), f"{element}.id")] = _block(block, element)
    return topics, blocks


def _titles(local_storage: dict[str, Any], where: str) -> dict[str, Topic]:
    """The topics' names and times: JSON in a JSON string in a JSON string. Only the
    ``assistants`` slice is parsed; ``llm`` and ``settings`` hold keys and passwords."""
    path = f"{where}.{PERSIST_KEY}.assistants"
    try:
        persisted = json.loads(text(local_storage.get(PERSIST_KEY), f"{where}.{PERSIST_KEY}") or "{}")
        assistants = json.loads(obj(persisted, f"{where}.{PERSIST_KEY}").get("assistants") or "{}")
    except (ValueError, TypeError):
        raise UnreadableHistory(f"{path}: not the JSON Cherry Studio writes there") from None
    assistants = obj(assistants, path)
    holders = [assistants.get("defaultAssistant") or {}, *array(assistants.get("assistants"), f"{path}.assistants")]
    topics: dict[str, Topic] = {}
    for holder in holders:
        for index, topic in enumerate(array(obj(holder, path).get("topics"), f"{path}.topics")):
            topic = obj(topic, f"{path}.topics[{index}]")
            created = topic.get("createdAt")
            topics[str(topic.get("id"))] = Topic(
                title=text(topic.get("name"), f"{path}.topics[{index}].name") or None,
                created_at=None if created is None else stored_time(created, f"{path}.topics[{index}].createdAt"),
            )
    return topics


def _block(block: dict[str, Any], where: str) -> Block:
    kind = str(block.get("type"))
    if kind in WORDS:
        return Block(kind, words=text(block.get("content"), f"{where}.content"))
    if kind == "image":
        return Block(kind, marker=IMAGE)
    if kind == "file":
        attached = obj(block.get("file") or {}, f"{where}.file")
        return Block(kind, marker=file_marker(text(attached.get("origin_name") or attached.get("name"), where)))
    return Block(kind)


def _topic(
    topic: dict[str, Any], where: str, topics: dict[str, Topic], blocks: dict[str, Block], tally: Tally
) -> Iterator[ImportedMessage]:
    ident = key(topic.get("id"), f"{where}.id")
    known = topics.get(ident, Topic(None, None))
    messages = [
        (f"{where}.messages[{index}]", obj(message, f"{where}.messages[{index}]"))
        for index, message in enumerate(array(topic.get("messages"), f"{where}.messages"))
    ]
    # Several replies to one question folded together: only the one selected was shown.
    folded_away = {
        str(message.get("askId"))
        for _, message in messages
        if message.get("multiModelMessageStyle") == "fold" and message.get("foldSelected") is True
    }
    dated: list[tuple[ImportedMessage, str | None]] = []
    for path, message in messages:
        role = message.get("role")
        if message.get("type") == "clear":
            tally.skip("marker")
            continue
        if role not in ("user", "assistant"):
            tally.skip("system")
            continue
        if (
            message.get("multiModelMessageStyle") == "fold"
            and message.get("foldSelected") is not True
            and str(message.get("askId")) in folded_away
        ):
            tally.skip("off_branch")
            continue
        content, dropped = _content(message, path, blocks)
        if not content:
            tally.skip("error" if message.get("status") == "error" or message.get("error") else "empty")
            continue
        for kind in dropped:
            tally.drop(kind)
        created = message.get("createdAt")
        imported = undated(
            f"{SOURCE}:{ident}", known.title, role, content, f"{SOURCE}:{key(message.get('id'), f'{path}.id')}"
        )
        dated.append((imported, None if created is None else stored_time(created, f"{path}.createdAt")))
    yield from fill_times(dated, known.created_at, tally)


def _content(message: dict[str, Any], path: str, blocks: dict[str, Block]) -> tuple[str, list[str]]:
    """The message's content, and the kinds of the blocks it leaves out."""
    markers: list[str] = []
    words: list[str] = []
    dropped: list[str] = []
    if "blocks" in message:
        for block_id in array(message.get("blocks"), f"{path}.blocks"):
            block = blocks.get(str(block_id))
            if block is None:  # listed but missing from message_blocks
                continue
            if block.marker:
                markers.append(block.marker)
            elif block.kind in WORDS:
                if block.words.strip():
                    words.append(block.words.strip())
            else:
                dropped.append(block.kind)
    else:  # versions 2 and 3: the words and files on the message itself
        words.append(text(message.get("content"), f"{path}.content").strip())
        for index, attached in enumerate(array(message.get("files"), f"{path}.files")):
            attached = obj(attached, f"{path}.files[{index}]")
            name = text(attached.get("origin_name") or attached.get("name"), f"{path}.files[{index}].origin_name")
            markers.append(IMAGE if attached.get("type") == "image" else file_marker(name))
    return with_markers(markers, "\n\n".join(word for word in words if word)), dropped
