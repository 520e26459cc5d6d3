"""ChatGPT's data export (``conversations.json``, FORMATS.md §1): the branch shown, from
``current_node`` up through the parents, never the regenerated or edited ones."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from .json_stream import JsonStream, records
from .message import IMAGE, ImportedMessage, file_marker, with_markers
from .options import ReadOptions
from .shape import array, key, obj, text
from .source import Source
from .tally import Tally
from .times import epoch_seconds, fill_times, undated

SOURCE = "chatgpt"
# Web-search answers carry inline markers in private-use characters:
# U+E200 kind U+E202 payload U+E201 (FORMATS.md §1.5).
INLINE_MARK = re.compile("\ue200([a-z_]+)\ue202(.*?)\ue201", re.DOTALL)
LABELLED = ("entity", "url")
# content types that are never words said in the conversation, by the reason counted
NOT_SAID = {
    "user_editable_context": "system",
    "model_editable_context": "system",
    "thoughts": "reasoning",
    "reasoning_recap": "reasoning",
    "system_error": "error",
    "execution_output": "tool",
    "computer_output": "tool",
    "tether_browsing_display": "tool",
    "tether_browsing_code": "tool",
    "tether_quote": "tool",
}


def read(sources: Sequence[Source], tally: Tally, options: ReadOptions) -> Iterator[ImportedMessage]:
    for source in sources:
        with source.open() as file:
            for where, conversation in records(JsonStream(file, source.name)):
                yield from _conversation(obj(conversation, where), where, tally)


def _conversation(conversation: dict[str, Any], where: str, tally: Tally) -> Iterator[ImportedMessage]:
    ident = key(conversation.get("conversation_id") or conversation.get("id"), f"{where}.id")
    conversation_id = f"{SOURCE}:{ident}"
    title = text(conversation.get("title"), f"{where}.title") or None
    started = conversation.get("create_time")
    start = None if started is None else epoch_seconds(started, f"{where}.create_time")
    mapping = obj(conversation.get("mapping"), f"{where}.mapping")
    branch = _branch(mapping, conversation.get("current_node"), where, tally)
    on_branch = set(branch)
    tally.skip("off_branch", sum(1 for node, value in mapping.items() if node not in on_branch and _message(value)))
    dated: list[tuple[ImportedMessage, str | None]] = []
    for node in branch:
        path = f"{where}.mapping.{node}.message"
        if _message(mapping[node]) is None:  # the root
            continue
        message = obj(_message(mapping[node]), path)
        kept = _said(message, path, tally)
        if kept is None:
            continue
        role, content = kept
        created = message.get("create_time")
        imported = undated(
            conversation_id, title, role, content, f"{SOURCE}:{key(message.get('id') or node, f'{path}.id')}"
        )
        dated.append((imported, None if created is None else epoch_seconds(created, f"{path}.create_time")))
    yield from fill_times(dated, start, tally)


def _message(node: Any) -> Any:
    return node.get("message") if isinstance(node, dict) else None


def _branch(mapping: dict[str, Any], current: Any, where: str, tally: Tally) -> list[str]:
    """The node ids from the root down to the leaf shown."""
    if not isinstance(current, str) or current not in mapping:
        current = _newest_leaf(mapping)
        tally.warn(f"{where}: no current_node; took the branch ending in the newest message")
    branch: list[str] = []
    seen: set[str] = set()
    node: Any = current
    while isinstance(node, str) and node in mapping and node not in seen:
        seen.add(node)
        branch.append(node)
        node = obj(mapping[node], f"{where}.mapping.{node}").get("parent")
    return branch[::-1]


def _newest_leaf(mapping: dict[str, Any]) -> str | None:
    leaves = [
        (_seconds(_message(node)), ident)
        for ident, node in mapping.items()
        if isinstance(node, dict) and not node.get("children")
    ]
    return max(leaves)[1] if leaves else None


def _seconds(message: Any) -> float:
    """A message's time for ordering leaves; none counts as the oldest."""
    created = message.get("create_time") if isinstance(message, dict) else None
    return float(created) if isinstance(created, int | float) and not isinstance(created, bool) else 0.0


def _said(message: dict[str, Any], path: str, tally: Tally) -> tuple[Any, str] | None:
    """The role and content of a message the user saw, or None (counted) when it is not."""
    author = obj(message.get("author") or {}, f"{path}.author")
    role = author.get("role")
    content = obj(message.get("content") or {}, f"{path}.content")
    kind = content.get("content_type")
    metadata: dict[str, Any] = message["metadata"] if isinstance(message.get("metadata"), dict) else {}
    recipient = message.get("recipient")
    if role == "system" or metadata.get("is_user_system_message"):
        reason: str | None = "system"
    elif role == "tool" or (role == "assistant" and recipient not in (None, "all")):
        reason = "tool"
    elif kind in NOT_SAID:
        reason = NOT_SAID[kind]
    elif message.get("channel") == "analysis":
        reason = "reasoning"
    elif metadata.get("is_visually_hidden_from_conversation"):
        reason = "hidden"
    elif role not in ("user", "assistant"):
        reason = "system"
    else:
        reason = None
    if reason is not None:
        tally.skip(reason)
        return None
    markers, words, pointers = _parts(content, kind, f"{path}.content", tally)
    for index, attachment in enumerate(array(metadata.get("attachments"), f"{path}.metadata.attachments")):
        attachment = obj(attachment, f"{path}.metadata.attachments[{index}]")
        mime = str(attachment.get("mime_type") or "")
        # The images the parts already show come back here: one marker each, not two.
        if attachment.get("id") in pointers or mime.startswith("image/"):
            continue
        markers.append(file_marker(text(attachment.get("name"), f"{path}.metadata.attachments[{index}].name")))
    said = _resolve_marks("\n".join(words)).strip()
    if not said and not markers:
        tally.skip("empty")
        return None
    return role, with_markers(markers, said)


def _parts(content: dict[str, Any], kind: Any, path: str, tally: Tally) -> tuple[list[str], list[str], set[str]]:
    """The markers, the words and the image pointers' file ids of a message's content."""
    if kind == "code":
        return [], [text(content.get("text"), f"{path}.text")], set()
    markers: list[str] = []
    words: list[str] = []
    pointers: set[str] = set()
    for index, part in enumerate(array(content.get("parts"), f"{path}.parts")):
        if isinstance(part, str):
            if part:
                words.append(part)
        elif isinstance(part, dict):
            part_kind = part.get("content_type")
            if part_kind == "image_asset_pointer":
                markers.append(IMAGE)
                pointer = str(part.get("asset_pointer") or "")
                pointers.add(pointer.rpartition("/")[2])
            elif part_kind == "audio_transcription":
                words.append(text(part.get("text"), f"{path}.parts[{index}].text"))
            elif isinstance(part_kind, str):
                tally.drop(part_kind)
    return markers, words, pointers


def _resolve_marks(said: str) -> str:
    """An entity or url marker becomes its label, every other marker goes (Cherry
    Studio's ChatGPT importer does the same): left in, they reach the episodes as noise."""

    def label(match: re.Match[str]) -> str:
        if match.group(1) not in LABELLED:
            return ""
        try:
            payload = json.loads(match.group(2))
        except ValueError:
            return ""
        return payload[1] if isinstance(payload, list) and len(payload) > 1 and isinstance(payload[1], str) else ""

    return INLINE_MARK.sub(label, said)
