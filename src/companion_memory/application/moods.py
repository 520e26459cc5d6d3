"""The mood timeline: log how she feels (or how she perceives the owner feels), and read
the last days with their distribution. Entries are not memories: they fade and are never
recalled."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ..domain.mood import MOOD_LABELS
from ..domain.scopes import MEMORY_READ, MEMORY_WRITE
from ..memory.moods import distribution
from ..runtime import Runtime
from .fields import TIME_FORMAT, CutPrivate, LongPageLimit, Moment, Namespace, Score, ShortText
from .principal import Principal
from .use_case import Input, Output, use_case

Whose = Annotated[
    Literal["owner", "companion"],
    Field(description="companion: her own mood; owner: the owner's, as she perceives it."),
]
MoodLabel = Annotated[
    ShortText,
    Field(
        description=f"One of {', '.join(MOOD_LABELS)}; a loose word for one is read into it (开心 → happy, "
        "worn out → tired); anything else is refused (invalid_mood).",
        json_schema_extra={"examples": list(MOOD_LABELS)},
    ),
]


FELT_AT = f"When it was felt, {TIME_FORMAT} (without an offset: in DREAM_TIME_ZONE); default now."


class MoodRecord(BaseModel):
    id: str
    namespace: str
    whose: str
    label: str
    reason: str
    intensity: float
    felt_at: str
    source: str = Field(description="api, mcp or dream.")
    source_message_id: str | None = Field(description="The message the dream read the mood from.")
    created_at: str


class MoodCount(BaseModel):
    label: str
    count: int
    average_intensity: float


class TodaysMoods(BaseModel):
    owner: MoodRecord | None
    companion: MoodRecord | None


class WeekOfMoods(BaseModel):
    owner: list[MoodCount]
    companion: list[MoodCount]


class MoodOverview(BaseModel):
    today: TodaysMoods = Field(description="The latest entry of today (local day), per whose.")
    week: WeekOfMoods = Field(description="The last 7 local days: label → count and average intensity, per whose.")


class MoodWrite(Input):
    namespace: Namespace = "default"
    whose: Whose = "companion"
    label: MoodLabel
    reason: Annotated[str, Field(max_length=500, description="Why, in a few words."), CutPrivate] = ""
    intensity: Annotated[Score, Field(description="0 barely, 1 overwhelming.")] = 0.5
    felt_at: Annotated[Moment | None, Field(description=FELT_AT)] = None
    source: ShortText = "api"


RecentDays = Annotated[int, Field(ge=1, le=90, description="The last this many local days, today included.")]


class MoodQuery(Input):
    namespace: Namespace = "default"
    days: RecentDays = 7
    whose: Whose | None = None
    limit: LongPageLimit = 200


class MoodAnswer(Output):
    mood: MoodRecord


class MoodTimeline(Output):
    moods: list[MoodRecord] = Field(description="The newest first.")
    count: int
    distribution: list[MoodCount] = Field(description="Label → count and average intensity, the most frequent first.")


@use_case("moods.log", MEMORY_WRITE)
async def log_mood(runtime: Runtime, _: Principal, write: MoodWrite) -> MoodAnswer:
    """Log a mood on the timeline (hers by default, or the owner's as she perceives it)."""
    mood = await runtime.moods.log(
        write.namespace, write.whose, write.label, write.reason, write.intensity, write.felt_at, write.source
    )
    return MoodAnswer.model_validate({"mood": mood}, from_attributes=True)


@use_case("moods.recent", MEMORY_READ)
async def recent_moods(runtime: Runtime, _: Principal, query: MoodQuery) -> MoodTimeline:
    """The timeline of the last days, newest first, with its distribution."""
    moods = await runtime.moods.recent(query.namespace, query.days, query.whose, query.limit)
    return MoodTimeline.model_validate(
        {"moods": moods, "count": len(moods), "distribution": distribution(moods)}, from_attributes=True
    )
