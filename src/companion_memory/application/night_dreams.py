"""Her night dreams (梦境): read the recent ones. The nightly job dreams them
(nightly/night_dreams.py); they are no memories and are never recalled."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from ..domain.mood import MOOD_LABELS
from ..domain.scopes import MEMORY_READ
from ..runtime import Runtime
from .fields import LongPageLimit, Namespace
from .principal import Principal
from .use_case import Input, Output, use_case


class NightDreamRecord(BaseModel):
    id: str
    namespace: str
    date: str = Field(description="The local day (DREAM_TIME_ZONE) the night followed: last night's is yesterday's.")
    seq: int = Field(description="Its place among the night's dreams, from 1.")
    text: str = Field(description="The dream, in her voice: not a fact about the owner.")
    mood: str = Field(description=f"One of {', '.join(MOOD_LABELS)}.")
    language: str = Field(description="zh or en: the language of its material.")
    material_ids: list[str] = Field(description="The memories it was dreamt from.")
    writer: str = Field(description="template, or model:<DREAM_MODEL>.")
    created_at: str


RecentNights = Annotated[
    int, Field(ge=1, le=3660, description="The last this many nights: 1 is last night's (and tonight's, once dreamt).")
]


class NightDreamQuery(Input):
    namespace: Namespace = "default"
    nights: RecentNights = 7
    limit: LongPageLimit = 20


class NightDreamList(Output):
    night_dreams: list[NightDreamRecord] = Field(description="The newest night first, each night's in order.")
    count: int


@use_case("night_dreams.recent", MEMORY_READ)
async def recent_night_dreams(runtime: Runtime, _: Principal, query: NightDreamQuery) -> NightDreamList:
    """Her night dreams of the last nights, the newest first, each with its mood and material."""
    dreams = await runtime.night_dreams.recent(query.namespace, query.nights, query.limit)
    return NightDreamList.model_validate({"night_dreams": dreams, "count": len(dreams)}, from_attributes=True)
