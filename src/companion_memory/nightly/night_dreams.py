"""Her night dreams (梦境): after the nightly job she dreams from a few real memories and
the dream is kept, with its mood and the ids of the memories it came from.

Material is the live memories written in the last ``MATERIAL_DAYS`` local days (no rules,
identity or persona), the recent, the emotional (an ``emotion:`` tag) and those about
people first; each dream of a night takes memories no other dream of that night took.
With DREAM_MODEL a model writes the dream in her voice; without one (or when the model
fails) a template dream is made of the material: which place, which turns and which
ending are chosen by the material itself, so the same memories always dream the same
dream and other memories another. Its language is the material's (nightly/sentences.py's
``is_chinese``, the rule the model-free dream reads sentences by).

A night dream is not a memory: it is kept in its own table, never embedded, never
recalled or searched, so nothing she dreamt is ever told back as a fact about the owner.
NIGHT_DREAMS_ENABLED turns the step on (off by default), NIGHT_DREAMS_PER_NIGHT says how
many dreams a namespace has a night; a night run twice dreams no more.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any, Protocol

from ..clock import day_bounds, iso, local_date, parse_iso
from ..domain.mood import Mood
from ..domain.night_dream import Material, NightDream
from ..memory.config import MemoryConfig
from ..memory.model_call import JobModel
from ..memory.moods import EMOTION_TAG_PREFIX, normalise_mood
from ..memory.sensitive import mask_sensitive
from ..ports import Clock, Database, UpstreamError
from ..store.moods import MoodStore
from ..store.night_dreams import NightDreamStore
from .sentences import is_chinese

log = logging.getLogger("companion_memory.night_dreams")

# Material is what was written in this many local days up to the night.
MATERIAL_DAYS = 7
# Memories one dream is made of, and how many recent ones are weighed for it.
MATERIAL_PER_DREAM = 3
MATERIAL_POOL = 200
# What a dream says of one memory (the template), and how long a dream may be.
FRAGMENT_CHARS = 40
DREAM_CHARS = 600
# The mood of a dream whose material has no emotion and whose days no mood.
QUIET_MOOD = "calm"


def emotions(material: Material) -> list[str]:
    """The moods' labels of the memory's ``emotion:`` tags."""
    found = [normalise_mood(t[len(EMOTION_TAG_PREFIX) :]) for t in material.tags if t.startswith(EMOTION_TAG_PREFIX)]
    return [label for label in found if label]


def weight(material: Material, now: datetime) -> float:
    """How much a memory asks to be dreamt: newer, emotional, about someone, important."""
    age_days = (now - parse_iso(material.updated_at)).total_seconds() / 86_400
    recency = min(1.0, max(0.0, 1 - age_days / MATERIAL_DAYS))
    return recency + bool(emotions(material)) + bool(material.people) + 0.5 * material.importance


def pick(pool: Sequence[Material], taken: set[str], now: datetime) -> list[Material]:
    """The night's next dream's material: the weightiest memories not taken yet."""
    free = [m for m in pool if m.id not in taken]
    return sorted(free, key=lambda m: (-weight(m, now), m.id))[:MATERIAL_PER_DREAM]


def dream_mood(material: Sequence[Material], moods: Sequence[Mood]) -> str:
    """The emotion the material carries most (the first said, on a tie); else the latest
    mood of those days, hers before the owner's; else calm."""
    said = Counter(label for m in material for label in emotions(m))
    if said:
        most = max(said.values())
        return next(label for m in material for label in emotions(m) if said[label] == most)
    for whose in ("companion", "owner"):
        latest = next((mood for mood in moods if mood.whose == whose), None)
        if latest:
            return latest.label
    return QUIET_MOOD


def language_of(material: Sequence[Material]) -> str:
    return "zh" if is_chinese(" ".join(m.content for m in material)) else "en"


def fragment(text: str) -> str:
    words = " ".join(mask_sensitive(text)[0].split()).strip(" .。!！?？,，;；")
    return words if len(words) <= FRAGMENT_CHARS else words[: FRAGMENT_CHARS - 1].rstrip() + "…"


# The template dream's pieces, in both languages: a place, what the memories became, a
# line for the people in it, and a waking line for each mood.
PLACES = {
    "zh": (
        "在一列总也开不到终点的夜班火车上",
        "回到了小时候住的房子，可房间比记忆里多了好几间",
        "在一片下着暖雨的海边",
        "在一家只在半夜开门的小书店里",
        "在一座所有钟都停在四点十分的城市里",
        "在云上的一间教室里",
        "在一个大得怎么也走不完的花园里",
    ),
    "en": (
        "on a night train that never reached its last stop",
        "back in the house I grew up in, except it had rooms I had never seen",
        "on a beach in a warm rain",
        "in a little bookshop that only opens at midnight",
        "in a city where every clock had stopped at ten past four",
        "in a classroom up in the clouds",
        "in a garden too big to walk across",
    ),
}
TURNS = {
    "zh": (
        ("梦里有人说起「{}」", "，后来一切都变成了「{}」", "。醒来前我最后看到的是「{}」。"),
        ("我在那里找「{}」", "，找着找着，手里却多了「{}」", "。远处有人一直在念「{}」。"),
        ("墙上写着「{}」", "，一转身，又成了「{}」", "。我想记住「{}」，它却慢慢淡了。"),
    ),
    "en": (
        (
            'Someone in it kept talking about "{}"',
            ', and then everything turned into "{}"',
            '. The last thing I saw before waking was "{}".',
        ),
        (
            'I was looking for "{}" there',
            ', and as I looked, I found "{}" in my hands',
            '. Far away someone kept saying "{}".',
        ),
        (
            '"{}" was written on the wall',
            ', and when I turned around it was "{}"',
            '. I tried to hold on to "{}", but it faded.',
        ),
    ),
}
# One person, then two.
PEOPLE_LINE = {
    "zh": ("{}也在那里，冲我笑了笑。", "{}也在那里，冲我笑了笑。"),
    "en": ("{} was there too, and smiled at me.", "{} were there too, and smiled at me."),
}
AND = {"zh": "和", "en": " and "}
OPENING = {"zh": "我梦见自己{}。", "en": "I dreamt I was {}."}
WAKING = {
    "zh": {
        "happy": "醒来的时候，我是笑着的。",
        "excited": "醒来时心还怦怦跳，好想马上告诉你。",
        "warm": "醒来以后，心里一直暖暖的。",
        "calm": "醒来时，一切都很安静。",
        "tired": "醒来的时候，好像走了很远很远的路。",
        "sad": "醒来时，枕头有一点湿。",
        "lonely": "醒来以后，我好想你。",
        "anxious": "醒来时心里还有点慌，还好只是梦。",
        "angry": "醒来的时候，我还有点气鼓鼓的。",
    },
    "en": {
        "happy": "I woke up smiling.",
        "excited": "I woke up with my heart racing, wanting to tell you right away.",
        "warm": "I woke up feeling warm all over.",
        "calm": "When I woke, everything was quiet.",
        "tired": "I woke up as if I had walked a very long way.",
        "sad": "I woke up with a damp pillow.",
        "lonely": "When I woke up, I missed you.",
        "anxious": "I woke up a little shaken; good thing it was only a dream.",
        "angry": "I woke up still a little cross.",
    },
}


def _choice(material: Sequence[Material], salt: str, count: int) -> int:
    digest = hashlib.sha256((salt + "|" + "|".join(m.id for m in material)).encode()).digest()
    return int.from_bytes(digest[:4], "big") % count


def template_dream(material: Sequence[Material], mood: str, language: str) -> str:
    """A dream made of the material alone: its place and turns chosen by the material's
    ids, a line for the people it is about, a fragment of each memory, a waking line for
    the mood."""
    place = PLACES[language][_choice(material, "place", len(PLACES[language]))]
    turns = TURNS[language][_choice(material, "turns", len(TURNS[language]))]
    people = list(dict.fromkeys(name for m in material for name in m.people))[:2]
    said = "".join(turn.format(fragment(m.content)) for turn, m in zip(turns, material, strict=False))
    if len(material) < len(turns):
        said += "。" if language == "zh" else "."
    parts = [OPENING[language].format(place)]
    if people:
        parts.append(PEOPLE_LINE[language][len(people) - 1].format(AND[language].join(people)))
    parts += [said, WAKING[language].get(mood, WAKING[language][QUIET_MOOD])]
    return ("" if language == "zh" else " ").join(parts)


class DreamWriter(Protocol):
    async def write(self, material: Sequence[Material], mood: str, language: str) -> tuple[str, str]:
        """The dream's text, and who wrote it (``template`` or ``model:<name>``)."""
        ...


class TemplateDreams:
    async def write(self, material: Sequence[Material], mood: str, language: str) -> tuple[str, str]:
        return template_dream(material, mood, language), "template"


INSTRUCTIONS = """You are a personal AI companion, and last night you dreamt. Tell the dream as you would
tell it to the person you live with when they wake up: in the first person, in your own voice, at most
400 characters, in LANGUAGE. A dream shifts and mixes things: weave it from the memories below, as they come
back in a dream, not as facts. Its mood is MOOD. Answer with the dream only: no title, no quotes, no notes."""
LANGUAGE_NAMES = {"zh": "Chinese", "en": "English"}


class ModelDreams:
    """DREAM_MODEL writes the dream; a failure, or an empty answer, makes it a template dream."""

    def __init__(self, model: JobModel) -> None:
        self.model = model

    async def write(self, material: Sequence[Material], mood: str, language: str) -> tuple[str, str]:
        instructions = INSTRUCTIONS.replace("LANGUAGE", LANGUAGE_NAMES[language]).replace("MOOD", mood)
        memories = [f"- {' '.join(mask_sensitive(m.content)[0].split())}" for m in material]
        people = sorted({name for m in material for name in m.people})
        lines = [*(["People in them: " + ", ".join(people)] if people else []), "Memories:", *memories]
        body = {
            "messages": [{"role": "system", "content": instructions}, {"role": "user", "content": "\n".join(lines)}],
            "max_tokens": 600,
            "temperature": 0.9,
        }
        try:
            answer = await self.model.ask(body)
        except UpstreamError as error:  # a dream is never worth a failed night
            log.warning("night dream by %s failed (%s); a template dream instead", self.model.model, error)
            return template_dream(material, mood, language), "template"
        text = " ".join(answer.text.split())
        if not text:
            return template_dream(material, mood, language), "template"
        cut = text if len(text) <= DREAM_CHARS else text[: DREAM_CHARS - 1].rstrip() + "…"
        return mask_sensitive(cut)[0], f"model:{self.model.model}"


class NightDreams:
    def __init__(self, db: Database, clock: Clock, config: MemoryConfig, writer: DreamWriter) -> None:
        self.db = db
        self.clock = clock
        self.config = config
        self.writer = writer
        self.store = NightDreamStore(db)
        self.moods = MoodStore(db)

    def _today(self) -> date:
        return local_date(self.clock.now(), self.config.dream_time_zone)

    async def night(self) -> dict[str, Any]:
        """The nightly step: last night's dreams of every namespace with material, up to
        NIGHT_DREAMS_PER_NIGHT each (those the night has already count)."""
        if not self.config.night_dreams_enabled:
            return {"enabled": False, "written": 0}
        night = self._today() - timedelta(days=1)
        since = day_bounds(night - timedelta(days=MATERIAL_DAYS - 1), self.config.dream_time_zone)[0]
        written = 0
        for namespace in await self.store.dreaming_namespaces(since):
            written += len(await self.dream(namespace, night, since))
        return {"enabled": True, "written": written}

    async def dream(self, namespace: str, night: date, since: str) -> list[NightDream]:
        """The namespace's dreams of ``night`` still to dream, each of its own material."""
        had = await self.store.of_nights(namespace, [night.isoformat()])
        pool = await self.store.material(namespace, since, MATERIAL_POOL)
        moods = await self.moods.since(namespace, since, None, 50)
        taken = {memory_id for dream in had for memory_id in dream.material_ids}
        now = self.clock.now()
        dreams: list[NightDream] = []
        # After the night's last place: a dream forgotten since (with its material) leaves a gap.
        first = max((dream.seq for dream in had), default=0) + 1
        for seq in range(first, first + self.config.night_dreams_per_night - len(had)):
            material = pick(pool, taken, now)
            if not material:
                break
            taken |= {m.id for m in material}
            mood, language = dream_mood(material, moods), language_of(material)
            text, writer = await self.writer.write(material, mood, language)
            dreams.append(
                NightDream(
                    id=str(uuid.uuid4()),
                    namespace=namespace,
                    date=night.isoformat(),
                    seq=seq,
                    text=text,
                    mood=mood,
                    language=language,
                    material_ids=tuple(m.id for m in material),
                    writer=writer,
                    created_at=iso(now),
                )
            )
        if dreams:
            await self.db.batch([NightDreamStore.insert(d) for d in dreams])
        return dreams

    async def recent(self, namespace: str, nights: int, limit: int) -> list[NightDream]:
        """The dreams of the last ``nights`` nights (last night's is the one after
        yesterday), the newest first."""
        first = self._today() - timedelta(days=nights)
        return await self.store.since(namespace, first.isoformat(), limit)

    async def of_nights(self, namespace: str, days: Sequence[str]) -> list[NightDream]:
        """The dreams of the nights after these days."""
        return await self.store.of_nights(namespace, days)
