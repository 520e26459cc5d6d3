"""Moods: the vocabulary, reading loose labels ("开心", "worn out") into it, finding explicit
statements of a mood in chat ("我今天好累", "I'm so happy"), and a week's distribution.

The vocabulary is small on purpose: a timeline and a seven-day distribution are only
readable when the same feeling always has the same name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from ..clock import day_bounds, iso, local_date, read_time
from ..domain.mood import MOOD_LABELS, Mood, MoodCount
from ..errors import InvalidInput
from ..ports import Clock, Database
from ..store.moods import MoodStore, mood_row
from .config import MemoryConfig

WHOSE = ("owner", "companion")
# A memory carries an emotion as a tag of this form (emotion:happy); see emotion_tags.
EMOTION_TAG_PREFIX = "emotion:"
# The boot package's distribution covers this many local days (today included).
WEEK_DAYS = 7
# Entries read for the overview: plenty for a week of moods, a cap for a flood of them.
OVERVIEW_LIMIT = 2000

# Loose words for each label, English and Chinese; the label itself counts too.
_ALIASES: dict[str, tuple[str, ...]] = {
    "happy": ("glad", "joyful", "cheerful", "great", "good", "开心", "高兴", "快乐", "愉快", "幸福", "开森"),
    "excited": ("thrilled", "pumped", "hyped", "兴奋", "激动", "期待"),
    "warm": ("loved", "grateful", "touched", "温暖", "暖", "感动", "被爱", "感激"),
    "calm": ("relaxed", "peaceful", "content", "chill", "平静", "放松", "安心", "轻松", "踏实"),
    "tired": ("exhausted", "sleepy", "drained", "worn out", "burnt out", "累", "疲惫", "疲倦", "困", "乏"),
    "sad": ("upset", "unhappy", "depressed", "难过", "伤心", "失落", "低落", "郁闷", "不开心", "委屈"),
    "lonely": ("alone", "孤独", "寂寞", "孤单"),
    "anxious": ("worried", "nervous", "stressed", "scared", "焦虑", "紧张", "担心", "慌", "害怕", "压力大"),
    "angry": ("mad", "annoyed", "frustrated", "furious", "生气", "愤怒", "恼火", "烦躁", "气死", "烦"),
}
_BY_WORD = {word: label for label, words in _ALIASES.items() for word in (label, *words)}
# Degree words around a Chinese label ("好累", "有点难过了"): dropped before the lookup.
_ZH_DEGREE = re.compile(
    r"^(?:我|今天|有点|有些|好|很|太|超级|超|非常|特别|真的|挺|蛮|还|比较)+|(?:死了|坏了|了|啊|呀|的|哦|呢|！|!)+$"
)


def normalise_mood(text: str) -> str | None:
    """The vocabulary's label for a loose one ("Happy", "开心", "好累", "worn out"); None
    when it names no mood the vocabulary knows."""
    word = " ".join(text.strip().lower().split())
    if word in _BY_WORD:
        return _BY_WORD[word]
    return _BY_WORD.get(_ZH_DEGREE.sub("", word))


# A model may name the speakers by their chat roles.
_WHOSE = {"owner": "owner", "user": "owner", "companion": "companion", "assistant": "companion"}


def normalise_whose(text: str) -> str | None:
    return _WHOSE.get(text.strip().lower())


def emotion_tags(tags: Iterable[str]) -> tuple[list[str], list[str]]:
    """Tags with every ``emotion:`` tag in the vocabulary's words (emotion:开心 →
    emotion:happy), and the emotion tags that name no mood."""
    kept: list[str] = []
    unknown: list[str] = []
    for tag in tags:
        if not tag.lower().startswith(EMOTION_TAG_PREFIX):
            kept.append(tag)
            continue
        label = normalise_mood(tag[len(EMOTION_TAG_PREFIX) :])
        if label is None:
            unknown.append(tag)
        else:
            kept.append(EMOTION_TAG_PREFIX + label)
    return list(dict.fromkeys(kept)), unknown


# How strongly the words say it: "有点累" / "a bit tired" is mild, "太累了" / "so tired" strong.
MILD, PLAIN, STRONG, EXTREME = 0.4, 0.6, 0.75, 0.9
_ZH_STRENGTH = (("有点", MILD), ("有些", MILD), ("太", EXTREME), ("超", EXTREME), ("非常", EXTREME), ("特别", EXTREME))
_ZH_STRONG = ("好", "很", "好好")
_EN_STRENGTH = {
    "a bit": MILD,
    "a little": MILD,
    "kind of": MILD,
    "kinda": MILD,
    "slightly": MILD,
    "so": STRONG,
    "really": STRONG,
    "very": STRONG,
    "pretty": PLAIN,
    "quite": PLAIN,
    "super": EXTREME,
    "extremely": EXTREME,
    "incredibly": EXTREME,
    "totally": EXTREME,
}


@dataclass(frozen=True)
class StatedMood:
    label: str
    intensity: float
    # The sentence it was said in: a verbatim quote of the message.
    quote: str
    reason: str


_SENTENCE = re.compile(r"[^\n.!?。！？；;~～]+[.!?。！？；;~～]*")
_ZH_WORDS = sorted((w for w in _BY_WORD if re.match(r"[\u4e00-\u9fff]", w)), key=len, reverse=True)
# "(我)(今天)(真的)好累", "有点难过", "我累了": 我 or a degree word must come first, so
# "累计" or "困难" alone are not moods; a negation or a question is not a statement.
_ZH_MOOD = re.compile(
    r"(?P<who>我)?(?:今天|今晚|现在|最近|这几天|刚才)?(?:真的|实在|也|都|还)?"
    r"(?P<degree>有点|有些|好好|好|很|太|超级|超|非常|特别|挺|蛮)?"
    rf"(?P<word>{'|'.join(map(re.escape, _ZH_WORDS))})"
    # 困难 (hard), 困惑 (puzzled), 累计 (in total) are other words.
    r"(?![难惑扰计积])"
)
# Labels, but not statements of one: "I'm good at chess", "I'm great with kids", "I am
# content with it", "I'm alone at home", "I'm mad about you".
_NOT_STATED = frozenset({"good", "great", "content", "chill", "alone", "mad"})
_EN_WORDS = sorted((w for w in _BY_WORD if re.match(r"[a-z]", w) and w not in _NOT_STATED), key=len, reverse=True)
_EN_MOOD = re.compile(
    r"\bI(?:['’]m|\s+am|\s+feel|\s+felt|['’]ve\s+been|\s+have\s+been)(?:\s+feeling)?\s+"
    rf"(?P<degree>(?:(?:{'|'.join(_EN_STRENGTH)})\s+)*)(?P<word>{'|'.join(map(re.escape, _EN_WORDS))})\b",
    re.IGNORECASE,
)
_ZH_OTHERS = re.compile(r"你|他|她|它|别人")
_REASON = re.compile(r"(?:因为|由于|\bbecause(?:\s+of)?\b)\s*(?P<why>.+)$", re.IGNORECASE)


def _reason(sentence: str) -> str:
    """What the sentence gives as the cause ("…因为加班", "… because …"), else the sentence."""
    match = _REASON.search(sentence)
    text = match.group("why") if match else sentence
    return text.strip(" ,，.。!！~～")[:200]


def _zh_intensity(degree: str | None) -> float:
    if not degree:
        return PLAIN
    if degree in _ZH_STRONG:
        return STRONG
    return next((value for word, value in _ZH_STRENGTH if degree.startswith(word)), PLAIN)


_EN_DEGREE = re.compile(rf"\b(?:{'|'.join(_EN_STRENGTH)})\b")


def _en_intensity(degree: str) -> float:
    values = [_EN_STRENGTH[word] for word in _EN_DEGREE.findall(" ".join(degree.lower().split()))]
    # "so so tired", "really very tired": stacked degree words say it more strongly.
    return min(EXTREME, max(values) + 0.05 * (len(values) - 1)) if values else PLAIN


def moods_in(text: str) -> list[StatedMood]:
    """Moods a speaker states about themself, one per label: "我今天好累", "好开心",
    "有点难过，因为考砸了", "I'm so happy", "I feel anxious". Questions, negations
    ("不开心" is sad, "not happy" says nothing) and feelings of others are left out."""
    found: dict[str, StatedMood] = {}
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0).strip()
        if not sentence or sentence.rstrip("~～").endswith(("?", "？", "吗", "么", "呢")):
            continue
        for mood in _EN_MOOD.finditer(sentence):
            label = _BY_WORD[mood.group("word").lower()]
            found.setdefault(label, StatedMood(label, _en_intensity(mood.group("degree")), sentence, _reason(sentence)))
        for mood in _ZH_MOOD.finditer(sentence):
            before = sentence[: mood.start()]
            if not (mood.group("who") or mood.group("degree")):
                continue
            if not mood.group("who") and _ZH_OTHERS.search(before) and "我" not in before:
                continue  # "你好累吧": someone else's
            if before.endswith(("不", "没", "别", "不是", "没有", "并不")):
                continue
            label = _BY_WORD[mood.group("word")]
            found.setdefault(label, StatedMood(label, _zh_intensity(mood.group("degree")), sentence, _reason(sentence)))
    return list(found.values())


def distribution(entries: Iterable[Mood]) -> list[MoodCount]:
    """Label → how often and how strongly, the most frequent first (then the label)."""
    counts: dict[str, list[float]] = {}
    for entry in entries:
        counts.setdefault(entry.label, []).append(float(entry.intensity))
    rows = [MoodCount(label, len(values), round(sum(values) / len(values), 3)) for label, values in counts.items()]
    return sorted(rows, key=lambda row: (-row.count, row.label))


def read_label(text: str) -> str:
    """The vocabulary's label, or the caller's error naming the vocabulary."""
    label = normalise_mood(text)
    if label is None:
        raise InvalidInput(
            f"unknown mood {text!r}: use one of {', '.join(MOOD_LABELS)} (or a word for one, e.g. 开心, tired)",
            code="invalid_mood",
        )
    return label


@dataclass(frozen=True)
class MoodOverview:
    """Per whose: the latest entry of today (local day), and the last seven days' distribution."""

    today: dict[str, Mood | None]
    week: dict[str, list[MoodCount]]


class Moods:
    """The timeline of one namespace: entries logged by hand or by the dream, and the
    overview the boot package shows (today's latest per whose, the last seven days)."""

    def __init__(self, db: Database, clock: Clock, config: MemoryConfig) -> None:
        self.store = MoodStore(db)
        self.clock = clock
        self.config = config

    async def log(
        self,
        namespace: str,
        whose: str,
        label: str,
        reason: str,
        intensity: float,
        felt_at: str | None,
        source: str,
    ) -> Mood:
        now = iso(self.clock.now())
        # A time without an offset is read in DREAM_TIME_ZONE, as the owner's day is.
        when = read_time(felt_at, "felt_at", time_zone=self.config.dream_time_zone) if felt_at else now
        mood = mood_row(namespace, whose, read_label(label), reason.strip(), intensity, when, source, None, now)
        return await self.store.add(mood)

    def _days_back(self, days: int) -> str:
        """Where the last ``days`` local days (today included) start, as stored."""
        today = local_date(self.clock.now(), self.config.dream_time_zone)
        return day_bounds(today - timedelta(days=days - 1), self.config.dream_time_zone)[0]

    async def recent(self, namespace: str, days: int, whose: str | None, limit: int) -> list[Mood]:
        return await self.store.since(namespace, self._days_back(days), whose, limit)

    async def overview(self, namespace: str) -> MoodOverview:
        week = await self.store.since(namespace, self._days_back(WEEK_DAYS), None, OVERVIEW_LIMIT)
        today_starts = self._days_back(1)
        return MoodOverview(
            today={w: next((e for e in week if e.whose == w and e.felt_at >= today_starts), None) for w in WHOSE},
            week={w: distribution(e for e in week if e.whose == w) for w in WHOSE},
        )
