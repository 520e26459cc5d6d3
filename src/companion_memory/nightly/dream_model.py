"""The dream's extractor when DREAM_MODEL is configured: one chat call per batch that
must answer strict JSON, validated before anything is written.

Invalid or truncated JSON is asked again; a rate limit or provider error waits 2 s, then
8 s. If the answer is still unusable the batch fails, and the dream's cursor stays put.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date

from ..domain.memory import Memory
from ..domain.message import Message
from ..domain.mood import MOOD_LABELS
from ..domain.tokens import text_tokens
from ..memory.model_call import JobModel
from ..ports import ModelError, UpstreamError
from .extraction import Extraction, read_extraction

JSON_ATTEMPTS = 2

INSTRUCTIONS = """You are the memory keeper of a personal AI companion. Read one day's chat messages and
answer with ONE JSON object, nothing else:
{"title": "<diary title, at most 12 characters>",
 "summary": "<what happened today, a few sentences, in the conversation's language>",
 "add": [{"content": "<one lasting fact, preference, boundary, habit, decision or event about the user>",
          "type": "fact|event|preference|relationship|boundary|habit|decision|note|plan",
          "fact_key": "<stable dotted key, e.g. user.drink.coffee>", "importance": 0.0-1.0, "confidence": 0.0-1.0,
          "valid_to": "<plans only: YYYY-MM-DD, the last day of the plan>",
          "evidence": ["<exact words copied from the messages>"]}],
 "update": [{"target_id": "<id of a memory below>", "content": "<the corrected memory>", "evidence": ["<exact words>"]}],
 "delete": [{"target_id": "<id of a memory below>", "evidence": ["<exact words showing it is no longer true>"]}],
 "moods": [{"whose": "owner|companion", "label": "MOOD_LABELS", "intensity": 0.0-1.0,
            "reason": "<why, a few words>", "evidence": ["<exact words where the feeling is said>"]}],
 "people": [{"name": "<a person in the user's life, as the user calls them>", "aliases": ["<other names used>"],
             "relation": "<who they are to the user: sister, friend, colleague…>", "evidence": ["<exact words>"]}],
 "same_person": [{"names": ["<a name>", "<another name for the same person>"], "evidence": ["<exact words>"]}]}
Facts about the world rather than the user (places, organisations, products) take a fact_key starting
with "world."; an update to one of those is applied at once, everything else waits for the user's review.
Something the user means to do on a day ahead ("周末去看海", "明天/后天/下周/下个月…", "tomorrow",
"next week", "this weekend", "on Friday") is a "plan": resolve its words to a date counted from the Day
the messages were said (周末 and "this weekend" end on that week's Sunday, 下周 and "next week" on next
week's Sunday, 下个月 and "next month" on its last day) and give it as valid_to. A plan may be short-lived;
everything else: only keep what will still matter in a month. "moods" are feelings said in the messages
today, not memories: the user's (whose "owner", from [user] messages) and yours (whose "companion", from
[assistant] messages), e.g. "我今天好累" → tired, "I'm so happy" → happy; only what is said, never guessed.
"people" are people the user names (not public figures), each with the names they go by ("Ana",
"my sister", "安娜"); "same_person" says two names belong to one person. Both wait for the user's review.
Evidence quotes must be copied character for character from the messages. Never store passwords, keys,
tokens or ID numbers.""".replace("MOOD_LABELS", "|".join(MOOD_LABELS))


def _prompt(messages: Sequence[Message], memories: Sequence[Memory], day: str) -> str:
    lines = [f"Day: {day} ({date.fromisoformat(day).strftime('%A')})", "", "Memories you may update or delete:"]
    lines += [f"- {m.id} [{m.type}] {m.content}" for m in memories] or ["(none)"]
    lines += ["", "Messages:"]
    lines += [f"[{m.role}] {m.content}" for m in messages]
    return "\n".join(lines)


def prompt_tokens(messages: Sequence[Message], memories: Sequence[Memory], day: str) -> int:
    """About how many tokens the model reads for one batch (domain/tokens.py): the
    instructions, the memories it is shown and the messages, as ``extract`` sends them."""
    return text_tokens(INSTRUCTIONS) + text_tokens(_prompt(messages, memories, day))


def parse(text: str) -> Extraction:
    """The JSON object in ``text`` (code fences tolerated), validated."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        raise ValueError("no JSON object in the answer")
    return read_extraction(json.loads(match.group(0)))


class ModelExtractor:
    def __init__(self, model: JobModel, max_tokens: int) -> None:
        self.model = model
        self.name = f"model:{model.model}"
        self.max_tokens = max_tokens

    async def extract(self, messages: Sequence[Message], day: str, memories: Sequence[Memory]) -> Extraction:
        body = {
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": _prompt(messages, memories, day)},
            ],
            "max_tokens": self.max_tokens,
            "temperature": 0.2,
        }
        problem = ""
        for _ in range(JSON_ATTEMPTS):
            answer = await self.model.ask(body)
            try:
                return parse(answer.text)
            except ValueError as error:
                problem = (
                    "the answer was cut off"
                    if answer.truncated
                    else f"the answer is not valid JSON ({str(error)[:200]})"
                )
        raise ValueError(f"dream model: {problem}")


JUDGE_INSTRUCTIONS = """Two statements about the same user were written at different times. Can both be
true now? Answer with ONE JSON object, nothing else: {"contradicts": true} when they cannot both be
true, {"contradicts": false} when they can (two different preferences, or one adds detail to the other)."""


async def confirms_contradiction(model: JobModel, newer: str, older: str) -> bool | None:
    """The model's verdict on a pair the rules suspect; None when it gives none (it failed,
    or answered something else), and the rules' verdict then stands."""
    body = {
        "messages": [
            {"role": "system", "content": JUDGE_INSTRUCTIONS},
            {"role": "user", "content": f"Older: {older}\nNewer: {newer}"},
        ],
        "max_tokens": 200,
        "temperature": 0,
    }
    try:
        answer = await model.ask(body)
    except (ModelError, UpstreamError):  # a hint only: the rules found the pair on their own
        return None
    match = re.search(r"\{.*\}", answer.text, re.DOTALL)
    try:
        value = json.loads(match.group(0)) if match else None
    except ValueError:
        return None
    verdict = value.get("contradicts") if isinstance(value, dict) else None
    return verdict if isinstance(verdict, bool) else None
