"""What the dream takes from a batch of messages, and the extractor that works with no
model at all: explicit requests ("remember …", "记住…", "以后不要…", "always/never …")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, Field, field_validator

from ..domain.memory import Memory

Quote = Annotated[str, Field(min_length=2, max_length=1000)]


class ExtractedMemory(BaseModel):
    content: Annotated[str, Field(min_length=2, max_length=2000)]
    type: str = "note"
    fact_key: Annotated[str | None, Field(max_length=200)] = None
    importance: Annotated[float, Field(ge=0, le=1)] = 0.5
    confidence: Annotated[float, Field(ge=0, le=1)] = 0.6
    # Verbatim quotes from the batch's messages that back the memory.
    evidence: Annotated[list[Quote], Field(min_length=1, max_length=10)]


class ExtractedChange(BaseModel):
    """An update to (or, without content, the deletion of) a memory the model was shown."""

    target_id: Annotated[str, Field(min_length=1, max_length=200)]
    content: Annotated[str | None, Field(max_length=2000)] = None
    evidence: Annotated[list[Quote], Field(min_length=1, max_length=10)]


class Extraction(BaseModel):
    title: str = ""
    summary: Annotated[str, Field(max_length=4000)] = ""
    add: list[ExtractedMemory] = []
    update: list[ExtractedChange] = []
    delete: list[ExtractedChange] = []

    @field_validator("title")
    @classmethod
    def _short_title(cls, title: str) -> str:
        # The diary shows at most 12 characters; a longer title is cut, not refused.
        return title.strip()[:12]


class Extractor(Protocol):
    name: str

    async def extract(self, messages: Sequence[dict[str, Any]], day: str, memories: Sequence[Memory]) -> Extraction:
        """``memories`` are live ones the extractor may propose to update or delete."""
        ...


_END = r"[^\n.!?。！？]"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?:please\s+)?remember(?:\s+that)?\s*[:,：，]?\s*(?P<fact>{_END}{{3,300}})", re.IGNORECASE), "note"),
    (re.compile(rf"(?:请)?记住\s*[:：,，]?\s*(?P<fact>{_END}{{2,200}})"), "note"),
    (re.compile(rf"(?P<fact>(?:以后|今后|永远|千万)(?:都)?(?:不要|别|要|请){_END}{{1,200}})"), "boundary"),
    (re.compile(rf"\b(?P<fact>(?:always|never)\s+{_END}{{3,300}})", re.IGNORECASE), "boundary"),
)


def _title(messages: Sequence[dict[str, Any]]) -> str:
    first = next((m["content"] for m in messages if m["role"] == "user" and m["content"].strip()), "")
    return " ".join(first.split())[:12] or "Quiet day"


class RequestExtractor:
    """The embedded default's dream: it keeps what the user explicitly asked to keep, and
    writes a plain diary entry. Every memory quotes the words it came from."""

    name = "requests"

    async def extract(self, messages: Sequence[dict[str, Any]], day: str, memories: Sequence[Memory]) -> Extraction:
        found: list[ExtractedMemory] = []
        for message in messages:
            if message["role"] != "user":
                continue
            for pattern, kind in _RULES:
                for match in pattern.finditer(message["content"]):
                    fact = match.group("fact").strip(" ,，:：")
                    if len(fact) >= 2:
                        found.append(ExtractedMemory(content=fact, type=kind, evidence=[match.group(0).strip()]))
        users = [" ".join(m["content"].split())[:60] for m in messages if m["role"] == "user" and m["content"].strip()]
        summary = f"{len(messages)} messages." + (f" The user said: {' / '.join(users[:3])}" if users else "")
        return Extraction(title=_title(messages), summary=summary, add=_unique(found))


def _unique(memories: list[ExtractedMemory]) -> list[ExtractedMemory]:
    seen: dict[str, ExtractedMemory] = {}
    for memory in memories:
        seen.setdefault(memory.content.lower(), memory)
    return list(seen.values())
