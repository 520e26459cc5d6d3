"""The boot package: what a new chat window should know before the first message, and
the same assembled into one block under the context budget (gateway/context.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from ..clock import day_bounds, local_date, parse_iso
from ..domain.diary import DiaryDay
from ..domain.glossary import Term
from ..domain.memory import Memory
from ..domain.person import Person
from ..domain.precious import Precious
from ..memory.config import MemoryConfig
from ..memory.moods import MoodOverview, Moods
from ..memory.people.registry import People
from ..memory.persona import Persona
from ..memory.plans import Plans
from ..memory.todos import TodoOverview, Todos
from ..ports import Clock, Database
from ..store.glossary import GlossaryStore
from ..store.logs import LogStore
from ..store.memories import MemoryStore
from ..store.messages import MessageRow, MessageStore
from ..store.precious import PreciousStore
from .context import Assembled, ContextAssembler
from .ladder import Ladder, LadderRead

NEWEST_PRECIOUS = 10
TODAY_MESSAGES = 200
UPCOMING_PLANS = 20
MOST_FAMILIAR = 10


@dataclass(frozen=True, kw_only=True)
class Package:
    """What a new chat window should know, on the local day ``date``."""

    namespace: str
    date: str
    time_zone: str
    impressions: LadderRead
    precious: list[Precious]
    glossary: list[Term]
    today_messages: list[MessageRow]
    counts: dict[str, int]
    plans: list[Memory]
    # The most familiar people, familiarity as it stood when the local day began.
    people: list[Person]
    context: Assembled
    moods: MoodOverview
    todos: TodoOverview
    # Her persona's summary; empty while every knob is at its baseline.
    persona: str


class Boot:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        config: MemoryConfig,
        plans: Plans,
        ladder: Ladder,
        context: ContextAssembler,
        moods: Moods,
        todos: Todos,
        people: People,
        persona: Persona,
    ) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.plans = plans
        self.ladder = ladder
        self.context = context
        self.moods = moods
        self.todos = todos
        self.people = people
        self.persona = persona

    async def package(self, namespace: str) -> Package:
        time_zone = self.config.dream_time_zone
        today = local_date(self.clock.now(), time_zone)
        ladder = await self.ladder.read(namespace)
        start, end = day_bounds(today, time_zone)
        precious, _ = await PreciousStore(self.db).page(namespace, limit=NEWEST_PRECIOUS, cursor=None)
        # Decayed to the day's start, not to now: the package (and a prompt cached on it)
        # stays the same all day unless someone is mentioned or edited.
        people = await self.people.most_familiar(namespace, parse_iso(start), MOST_FAMILIAR)
        return Package(
            namespace=namespace,
            date=today.isoformat(),
            time_zone=time_zone,
            impressions=ladder,
            precious=precious,
            glossary=await GlossaryStore(self.db).entries(namespace),
            today_messages=await MessageStore(self.db).between(namespace, since=start, until=end, limit=TODAY_MESSAGES),
            counts=await MemoryStore(self.db).count_active_by_type(namespace),
            plans=await self.plans.upcoming(namespace, UPCOMING_PLANS),
            people=people,
            context=await self.context.for_boot(namespace, people),
            moods=await self.moods.overview(namespace),
            todos=await self.todos.stats(namespace),
            persona=await self.persona.summary(namespace),
        )

    async def diary(self, namespace: str, day: str) -> DiaryDay | None:
        return await LogStore(self.db).daily(namespace, day)

    async def recent_diary(self, namespace: str) -> list[DiaryDay]:
        """Today's and yesterday's entries, those that exist, newest first."""
        today = local_date(self.clock.now(), self.config.dream_time_zone)
        days = [today.isoformat(), (today - timedelta(days=1)).isoformat()]
        return await LogStore(self.db).dailies(namespace, days)
