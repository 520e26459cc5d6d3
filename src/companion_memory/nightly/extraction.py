"""What the dream takes from a batch of messages, and the extractor that works with no
model at all: the owner's explicit requests ("please remember that I …", "记住…"), rules
("never call me …", "以后不要…") and plans with a day ("周末去看海", "I'm visiting my
sister next week"), each a whole sentence of theirs (nightly/statements.py); stated moods
("我今天好累", "I'm so happy"); and people named with who they are ("my sister Ana",
"我姐姐安娜")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Protocol, TypeVar

from ..domain.memory import Memory
from ..domain.message import Message
from ..memory.moods import moods_in
from ..memory.people.extract import PersonFound, SamePerson, people_in, same_people_in
from .statements import PLAN, REQUEST, RULE, statements_in

# The diary shows at most this many characters of a title; a longer one is cut, not refused.
TITLE_CHARS = 12


@dataclass(frozen=True)
class ExtractedMemory:
    content: str
    # Verbatim quotes from the batch's messages that back the memory.
    evidence: list[str]
    type: str = "note"
    fact_key: str | None = None
    importance: float = 0.5
    confidence: float = 0.6
    # Plans: the day (YYYY-MM-DD) or time the plan is good until.
    valid_to: str | None = None


@dataclass(frozen=True)
class ExtractedChange:
    """An update to (or, without content, the deletion of) a memory the model was shown."""

    target_id: str
    evidence: list[str]
    content: str | None = None


@dataclass(frozen=True)
class ExtractedMood:
    """A mood said in the batch: the owner's (user messages) or the companion's (hers).
    Written to the mood timeline directly, never a candidate. ``whose`` and ``label`` are
    a model's words: the dream drops what the vocabulary does not know."""

    whose: str
    label: str
    evidence: list[str]
    intensity: float = 0.5
    reason: str = ""


@dataclass(frozen=True)
class Extraction:
    title: str = ""
    summary: str = ""
    add: list[ExtractedMemory] = field(default_factory=list)
    update: list[ExtractedChange] = field(default_factory=list)
    delete: list[ExtractedChange] = field(default_factory=list)
    moods: list[ExtractedMood] = field(default_factory=list)
    # People named with who they are to the owner, and names said to be one person: the
    # dream turns them into proposals for the owner (memory/people/proposals.py).
    people: list[PersonFound] = field(default_factory=list)
    same_people: list[SamePerson] = field(default_factory=list)


def read_extraction(value: Any) -> Extraction:
    """The extraction in a model's decoded JSON answer. A ValueError lists every problem
    with its place (``add.0.evidence: missing``); members the shape does not know are
    ignored."""
    reader = _Reader()
    extraction = reader.extraction(value)
    if reader.problems:
        raise ValueError(f"the extraction does not fit: {'; '.join(reader.problems)}")
    return extraction


_ABSENT = object()
T = TypeVar("T")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


class _Reader:
    """Checks one decoded answer against the extraction's shape. It notes every problem
    rather than stopping at the first, so a failed run's error shows all of them."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def extraction(self, value: Any) -> Extraction:
        if not isinstance(value, dict):
            self.problems.append(f"the answer: expected an object, got {_kind(value)}")
            return Extraction()
        return Extraction(
            title=self.text(value, "", "title", default="").strip()[:TITLE_CHARS],
            summary=self.text(value, "", "summary", default="", max_length=4000),
            add=self.objects(value, "add", self.memory),
            update=self.objects(value, "update", self.change),
            delete=self.objects(value, "delete", self.change),
            moods=self.objects(value, "moods", self.mood),
            people=self.objects(value, "people", self.person),
            same_people=self.objects(value, "same_person", self.same_person),
        )

    def person(self, value: Mapping[str, Any], at: str) -> PersonFound:
        return PersonFound(
            name=self.text(value, at, "name", min_length=1, max_length=100),
            aliases=self.names(value, at, "aliases"),
            relation=self.optional_text(value, at, "relation", max_length=100) or "",
            evidence=self.quotes(value, at),
        )

    def same_person(self, value: Mapping[str, Any], at: str) -> SamePerson:
        names = self.names(value, at, "names")
        if len(names) != 2:
            self.problems.append(f"{at}.names: {len(names)} names, 2 expected")
            names = [*names, "", ""][:2]
        return SamePerson(names=(names[0], names[1]), evidence=self.quotes(value, at))

    def names(self, value: Mapping[str, Any], at: str, key: str) -> list[str]:
        """A list of up to 20 names (1–100 characters each)."""
        place, member = self._member(value, at, key, required=False)
        if member is _ABSENT or member is None:
            return []
        if not isinstance(member, list) or len(member) > 20:
            self.problems.append(f"{place}: expected a list of at most 20 names, got {_kind(member)}")
            return []
        return [self._string(name, f"{place}.{index}", 1, 100) for index, name in enumerate(member)]

    def memory(self, value: Mapping[str, Any], at: str) -> ExtractedMemory:
        return ExtractedMemory(
            content=self.text(value, at, "content", min_length=2, max_length=2000),
            type=self.text(value, at, "type", default="note"),
            fact_key=self.optional_text(value, at, "fact_key", max_length=200),
            importance=self.score(value, at, "importance", default=0.5),
            confidence=self.score(value, at, "confidence", default=0.6),
            evidence=self.quotes(value, at),
            valid_to=self.optional_text(value, at, "valid_to", max_length=40),
        )

    def mood(self, value: Mapping[str, Any], at: str) -> ExtractedMood:
        return ExtractedMood(
            whose=self.text(value, at, "whose", default="owner", max_length=20),
            label=self.text(value, at, "label", min_length=1, max_length=40),
            intensity=self.score(value, at, "intensity", default=0.5),
            reason=self.optional_text(value, at, "reason", max_length=500) or "",
            evidence=self.quotes(value, at),
        )

    def change(self, value: Mapping[str, Any], at: str) -> ExtractedChange:
        return ExtractedChange(
            target_id=self.text(value, at, "target_id", min_length=1, max_length=200),
            content=self.optional_text(value, at, "content", max_length=2000),
            evidence=self.quotes(value, at),
        )

    def _member(self, value: Mapping[str, Any], at: str, key: str, *, required: bool) -> tuple[str, Any]:
        place = f"{at}.{key}" if at else key
        if required and key not in value:
            self.problems.append(f"{place}: missing")
        return place, value.get(key, _ABSENT)

    def _string(self, value: Any, place: str, min_length: int, max_length: int | None) -> str:
        if not isinstance(value, str):
            self.problems.append(f"{place}: expected a string, got {_kind(value)}")
            return ""
        if len(value) < min_length:
            self.problems.append(f"{place}: {len(value)} characters, at least {min_length} expected")
        elif max_length is not None and len(value) > max_length:
            self.problems.append(f"{place}: {len(value)} characters, at most {max_length} expected")
        return value

    def text(
        self,
        value: Mapping[str, Any],
        at: str,
        key: str,
        *,
        default: str | None = None,
        min_length: int = 0,
        max_length: int | None = None,
    ) -> str:
        """A string member; without a default it is required."""
        place, member = self._member(value, at, key, required=default is None)
        if member is _ABSENT:
            return default or ""
        return self._string(member, place, min_length, max_length)

    def optional_text(self, value: Mapping[str, Any], at: str, key: str, *, max_length: int) -> str | None:
        place, member = self._member(value, at, key, required=False)
        if member is _ABSENT or member is None:
            return None
        return self._string(member, place, 0, max_length)

    def score(self, value: Mapping[str, Any], at: str, key: str, *, default: float) -> float:
        """A number from 0 to 1. Models sometimes quote their numbers ("0.8"); those count."""
        place, member = self._member(value, at, key, required=False)
        if member is _ABSENT:
            return default
        try:
            number = float(member) if isinstance(member, int | float | str) else None
        except (ValueError, OverflowError):
            number = None
        if number is None:
            self.problems.append(f"{place}: expected a number, got {_kind(member)}")
            return default
        if not 0 <= number <= 1:
            self.problems.append(f"{place}: {number} is not between 0 and 1")
        return number

    def quotes(self, value: Mapping[str, Any], at: str) -> list[str]:
        place, member = self._member(value, at, "evidence", required=True)
        if member is _ABSENT:
            return []
        if not isinstance(member, list):
            self.problems.append(f"{place}: expected a list, got {_kind(member)}")
            return []
        if not 1 <= len(member) <= 10:
            self.problems.append(f"{place}: {len(member)} quotes, 1 to 10 expected")
        return [self._string(quote, f"{place}.{index}", 2, 1000) for index, quote in enumerate(member)]

    def objects(self, value: Mapping[str, Any], key: str, read: Callable[[Mapping[str, Any], str], T]) -> list[T]:
        """An optional list member, each of its objects read at its place."""
        _, member = self._member(value, "", key, required=False)
        if member is _ABSENT:
            return []
        if not isinstance(member, list):
            self.problems.append(f"{key}: expected a list, got {_kind(member)}")
            return []
        found: list[T] = []
        for index, item in enumerate(member):
            if isinstance(item, dict):
                found.append(read(item, f"{key}.{index}"))
            else:
                self.problems.append(f"{key}.{index}: expected an object, got {_kind(item)}")
        return found


class Extractor(Protocol):
    name: str

    async def extract(self, messages: Sequence[Message], day: str, memories: Sequence[Memory]) -> Extraction:
        """``memories`` are live ones the extractor may propose to update or delete."""
        ...


# What each kind of statement becomes (nightly/statements.py).
_TYPES = {REQUEST: "note", RULE: "boundary", PLAN: "plan"}


def _kept_from(text: str, said_on: date) -> list[ExtractedMemory]:
    """The owner's requests, rules and plans in a message, each quoting its sentence."""
    return [
        ExtractedMemory(content=s.content, type=_TYPES[s.kind], evidence=[s.quote], valid_to=s.valid_to)
        for s in statements_in(text, said_on)
    ]


def _title(messages: Sequence[Message]) -> str:
    first = next((m.content for m in messages if m.role == "user" and m.content.strip()), "")
    return " ".join(first.split())[:TITLE_CHARS].rstrip() or "Quiet day"


# Whose mood a message states: the user's is the owner's, the assistant's the companion's.
_SPEAKERS = {"user": "owner", "assistant": "companion"}


def stated_moods(message: Message) -> list[ExtractedMood]:
    whose = _SPEAKERS.get(message.role)
    if whose is None:
        return []
    return [
        ExtractedMood(whose=whose, label=m.label, evidence=[m.quote], intensity=m.intensity, reason=m.reason)
        for m in moods_in(message.content)
    ]


class RequestExtractor:
    """The embedded default's dream: it proposes what the user explicitly asked to keep,
    the rules they set and the plans they named a day for, logs the moods the owner and
    the companion said they feel, and writes a plain diary entry. Every memory and mood
    quotes the words it came from."""

    name = "requests"

    async def extract(self, messages: Sequence[Message], day: str, memories: Sequence[Memory]) -> Extraction:
        found: list[ExtractedMemory] = []
        people: list[PersonFound] = []
        same: list[SamePerson] = []
        moods = [mood for message in messages for mood in stated_moods(message)]
        for message in messages:
            if message.role != "user":
                continue
            found += _kept_from(message.content, date.fromisoformat(day))
            people += people_in(message.content)
            same += same_people_in(message.content)
        users = [" ".join(m.content.split())[:60] for m in messages if m.role == "user" and m.content.strip()]
        summary = f"{len(messages)} messages." + (f" The user said: {' / '.join(users[:3])}" if users else "")
        return Extraction(
            title=_title(messages),
            summary=summary,
            add=found,
            moods=moods,
            people=people,
            same_people=same,
        )
