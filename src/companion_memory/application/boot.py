"""The boot package for a new conversation, and the diary."""

from __future__ import annotations

import dataclasses

from pydantic import BaseModel, ConfigDict, Field

from ..domain.person import Person, familiarity_word
from ..domain.scopes import MEMORY_READ
from ..errors import NotFound
from ..memory.sensitive import mask_sensitive
from ..runtime import Runtime
from .fields import Day, Namespace
from .moods import MoodOverview
from .night_dreams import NightDreamRecord
from .principal import Principal
from .records import ContextBlock, GlossaryEntry, PlanRecord, PreciousRecord
from .todos import TodoStats
from .use_case import Input, Output, use_case


class DiaryEntry(BaseModel):
    id: str
    namespace: str
    date: str
    title: str
    summary: str
    message_count: int
    created_at: str
    updated_at: str


class Rollup(BaseModel):
    """A weekly or monthly summary row (week, start_date, end_date or month)."""

    model_config = ConfigDict(extra="allow")
    title: str
    summary: str


class Impressions(BaseModel):
    text: str = Field(description="Yesterday, the newest week and month, as one short ladder.")
    daily: DiaryEntry | None
    weekly: Rollup | None
    monthly: Rollup | None


class FamiliarPerson(BaseModel):
    id: str
    name: str
    aliases: list[str]
    relation: str
    familiarity: float = Field(
        description="0–1, as it stood when the local day began (it fades without mentions), to two places."
    )
    familiarity_word: str = Field(description="close (≥ 0.75), familiar (≥ 0.5), known (≥ 0.25) or distant.")

    @classmethod
    def of(cls, person: Person) -> FamiliarPerson:
        return cls(
            id=person.id,
            name=person.name,
            aliases=person.aliases,
            relation=person.relation,
            familiarity=person.familiarity,
            familiarity_word=familiarity_word(person.familiarity),
        )


class TodayMessage(BaseModel):
    id: str
    conversation_id: str | None
    role: str
    content: str
    source: str
    model: str | None
    created_at: str


class BootPackage(Output):
    namespace: str
    date: str
    time_zone: str
    companion_name: str = Field(description="COMPANION_NAME: what the owner calls the companion; empty for none.")
    impressions: Impressions
    precious: list[PreciousRecord]
    glossary: list[GlossaryEntry]
    today_messages: list[TodayMessage]
    counts: dict[str, int] = Field(description="Active memories by type.")
    plans: list[PlanRecord] = Field(description="Open plans, the soonest end first.")
    people: list[FamiliarPerson] = Field(
        description="The ten most familiar people in the owner's life, the most familiar first."
    )
    context: ContextBlock = Field(
        description="What a new conversation should be told, as one block: permanent memories and the people "
        "with their familiarity, open plans, impressions and shared memories, each section under its cap of "
        "CONTEXT_BUDGET_TOKENS."
    )
    moods: MoodOverview = Field(description="Today's mood and the last seven days', hers and the owner's.")
    todos: TodoStats = Field(description="Her own todos: counts, the next one and a summary for the prompt.")
    persona: str = Field(
        description='Her persona knobs in a few words, in PERSONA_LANGUAGE ("tsundere: medium; playful: rather '
        'high; …", 「傲娇 中等；爱玩 偏高；…」): how she speaks, for the system prompt. Empty while every knob is '
        "at its baseline."
    )


class Scope(Input):
    namespace: Namespace = "default"


class DiaryDay(Scope):
    date: Day


# Last night's dreams and tonight's: two nights of at most NIGHT_DREAMS_PER_NIGHT (5).
LAST_NIGHTS_DREAMS = 10


class DiaryAnswer(Output):
    diary: DiaryEntry
    night_dreams: list[NightDreamRecord] = Field(
        description="Her night dreams of the night after that day, with their mood and material: dreams, not facts."
    )


class DiaryList(Output):
    diaries: list[DiaryEntry]
    count: int
    night_dreams: list[NightDreamRecord] = Field(
        description="Her night dreams of last night (and tonight, once dreamt), the newest first, with their mood "
        "and material: dreams, not facts."
    )


@use_case("boot.package", MEMORY_READ)
async def boot(runtime: Runtime, principal: Principal, scope: Scope) -> BootPackage:
    """Impressions ladder, newest precious words, glossary, today's messages, counts by type, open plans,
    moods, her todos, her persona."""
    package = await runtime.boot.package(scope.namespace)
    messages = package.today_messages
    if not principal.actor.owner:
        # The raw message keeps a pasted secret for the dream; another key sees it as its episode does.
        messages = [dataclasses.replace(m, content=mask_sensitive(m.content)[0]) for m in messages]
    return BootPackage.model_validate(
        {
            **{f.name: getattr(package, f.name) for f in dataclasses.fields(package)},
            # Plain values: the answer keeps every field of a week or a month (Rollup allows extras).
            "impressions": dataclasses.asdict(package.impressions),
            "context": dataclasses.asdict(package.context),
            "today_messages": messages,
            "people": [FamiliarPerson.of(p) for p in package.people],
            "companion_name": runtime.settings.COMPANION_NAME,
        },
        from_attributes=True,
    )


@use_case("diary.get", MEMORY_READ)
async def diary(runtime: Runtime, _: Principal, day: DiaryDay) -> DiaryAnswer:
    """One day's diary entry."""
    entry = await runtime.boot.diary(day.namespace, day.date.isoformat())
    if entry is None:
        raise NotFound(f"no diary for {day.date.isoformat()} in {day.namespace!r}")
    dreams = await runtime.night_dreams.of_nights(day.namespace, [entry.date])
    return DiaryAnswer.model_validate({"diary": entry, "night_dreams": dreams}, from_attributes=True)


@use_case("diary.recent", MEMORY_READ)
async def recent_diary(runtime: Runtime, _: Principal, scope: Scope) -> DiaryList:
    """Today's and yesterday's entries, those that exist, newest first, and her night dreams of last night
    (and tonight's, once dreamt)."""
    entries = await runtime.boot.recent_diary(scope.namespace)
    dreams = await runtime.night_dreams.recent(scope.namespace, 1, LAST_NIGHTS_DREAMS)
    return DiaryList.model_validate(
        {"diaries": entries, "count": len(entries), "night_dreams": dreams}, from_attributes=True
    )
