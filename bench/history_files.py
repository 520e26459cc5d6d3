"""Generated chat exports for bench/import_history.py: ChatGPT's ``conversations.json`` and
our JSONL, of any size, written as a stream. The words are varied (a sentence drawn from a
few hundred words, some Chinese) so that the full-text index and the embedder see text
shaped like a real history, and every message has its own time."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

_SAID = (
    "morning coffee train office meeting lunch rain walk dog cat sister brother mother father "
    "weekend trip mountain sea book movie song guitar piano code bug deploy server database "
    "garden tomato basil bread oven recipe dinner friend birthday gift present doctor dentist "
    "appointment tuesday friday monday plan idea worry happy tired sleep dream run bike swim "
    "photo camera lens light shadow city hangzhou shanghai berlin tokyo paris market tea "
    "茶 雨 周末 朋友 工作 晚饭 电影 跑步 猫 妈妈 生日 旅行 咖啡 代码 服务器"
)
WORDS = _SAID.split()
START = 1_600_000_000.0  # 2020-09-13


@dataclass(frozen=True)
class Said:
    role: str
    text: str
    at: float
    id: str


def conversations(messages: int, *, per_conversation: int = 20, seed: int = 7) -> Iterator[tuple[str, list[Said]]]:
    """(title, turns) for ``messages`` turns in all, alternating user and assistant, a
    conversation every ``per_conversation`` turns, spread over the years since 2020."""
    rng = random.Random(seed)
    at = START
    left = messages
    while left:
        count = min(per_conversation, left)
        left -= count
        at += rng.uniform(3_000, 40_000)
        turns = []
        for n in range(count):
            at += rng.uniform(5, 300)
            length = rng.randint(4, 60)
            text = " ".join(rng.choice(WORDS) for _ in range(length))
            turns.append(
                Said("user" if n % 2 == 0 else "assistant", text, at, str(uuid.UUID(int=rng.getrandbits(128))))
            )
        yield " ".join(rng.choice(WORDS) for _ in range(3)), turns


def write_chatgpt(path: Path, messages: int, **kwargs: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for index, (title, turns) in enumerate(conversations(messages, **kwargs)):
            out.write(",\n" if index else "\n")
            _chatgpt_conversation(out, title, turns)
        out.write("\n]\n")


def _chatgpt_conversation(out: TextIO, title: str, turns: list[Said]) -> None:
    root = str(uuid.uuid4())
    mapping = {root: {"id": root, "message": None, "parent": None, "children": [turns[0].id]}}
    for n, turn in enumerate(turns):
        mapping[turn.id] = {
            "id": turn.id,
            "message": {
                "id": turn.id,
                "author": {"role": turn.role, "name": None, "metadata": {}},
                "create_time": turn.at,
                "update_time": None,
                "content": {"content_type": "text", "parts": [turn.text]},
                "status": "finished_successfully",
                "end_turn": turn.role == "assistant",
                "weight": 1.0,
                "metadata": {},
                "recipient": "all",
                "channel": None,
            },
            "parent": turns[n - 1].id if n else root,
            "children": [turns[n + 1].id] if n + 1 < len(turns) else [],
        }
    conversation = {
        "title": title,
        "create_time": turns[0].at,
        "update_time": turns[-1].at,
        "mapping": mapping,
        "current_node": turns[-1].id,
        "conversation_id": str(uuid.uuid4()),
        "id": str(uuid.uuid4()),
    }
    json.dump(conversation, out, ensure_ascii=False)


def write_jsonl(path: Path, messages: int, **kwargs: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for index, (title, turns) in enumerate(conversations(messages, **kwargs)):
            for turn in turns:
                line = {
                    "conversation_id": f"c{index}",
                    "title": title,
                    "id": turn.id,
                    "role": turn.role,
                    "content": turn.text,
                    "created_at": turn.at,
                }
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
