"""When two memories cannot both hold: the text rules, in English and Chinese.

A memory is read as a claim: which polar verbs it uses (like, can, is, has, wants,
will; 喜欢/爱, 能/可以, 会, 是, 有, 想/要), whether it is negated (an odd number of
negations: not, never, no longer, 不, 没, 别; "hates" and 讨厌 are a negated "like"),
and its remaining content words. Two claims contradict when

- they use the same polar verbs, one negated and the other not, about the same thing:
  their content words overlap by half (Jaccard), or by a quarter when the caller already
  knows they share a subject (fact_key family, high similarity): "likes coffee" against
  "doesn't like coffee", 能吃辣 against 不能吃辣; or
- they fill the same single-valued slot of the same person with different values: where
  they live ("lives in Paris" against "moved to Berlin", 住在/搬到), what their favourite
  thing is, what their name is.

"Likes tea" and "likes coffee" are two preferences, not a contradiction; nor are two
events (``HAPPENINGS``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from .search_text import cjk_bigrams, stem


@dataclass(frozen=True, kw_only=True)
class Comparable:
    """A live memory's text, read to compare a new one with; ``in_family``: its fact key
    is the new one's family (they share a subject)."""

    id: str
    type: str
    content: str
    created_at: str
    in_family: bool


# Types whose memories record a dated happening. A contradiction is about a lasting state
# (a preference, a fact, an identity, a boundary, a relationship, a habit, a plan): two
# happenings both hold ("didn't go hiking yesterday", "went hiking last week"), and one
# said in a conversation is no correction of another. A happening may still contradict a
# lasting state ("went to Paris" against "has never been to Paris").
HAPPENINGS = frozenset({"event"})

# A claim's content is a subject when at least this share of its words is shared.
SAME_WORDS = 0.5
# The lower share that will do when the subject is known to be the same.
SAME_WORDS_KNOWN_SUBJECT = 0.25

_FAMILY_NAMES = {
    "like": "like/dislike",
    "can": "can/can't",
    "be": "is/isn't",
    "have": "has/hasn't",
    "want": "wants/doesn't want",
    "will": "will/won't",
    "hui": "会/不会",
}

_EN_SPELLED_OUT = (
    (re.compile(r"\b(?:can't|cannot)\b"), "can not"),
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"n't\b"), " not"),
    # Phrases that mean a negated like, or just a negation.
    (re.compile(r"\bcan not (?:stand|bear)\b"), "not like"),
    (re.compile(r"\bno longer\b|\bnot any ?more\b"), "not"),
    (re.compile(r"\b(?:is|am|are) fond of\b"), "like"),
)
_EN_NEGATORS = frozenset({"not", "never", "no"})
_EN_VERBS: dict[str, tuple[str, bool]] = {
    **dict.fromkeys(("like", "likes", "liked", "love", "loves", "loved", "enjoy", "enjoys", "adore"), ("like", False)),
    **dict.fromkeys(("hate", "hates", "hated", "dislike", "dislikes", "detest", "detests", "loathe"), ("like", True)),
    **dict.fromkeys(("can", "could"), ("can", False)),
    **dict.fromkeys(("will", "would"), ("will", False)),
    **dict.fromkeys(("want", "wants", "wanted"), ("want", False)),
    **dict.fromkeys(("have", "has"), ("have", False)),
    **dict.fromkeys(("is", "am", "are"), ("be", False)),
}
# Auxiliaries, people and filler: they say nothing about what a claim is about.
_EN_IGNORED = frozenset(
    re.findall(
        r"\w+",
        """do does did i me my mine myself user the a an she he her his him they them their we our you your
    to of in at on for with and or really very much also still now always just so too anymore any
    currently these days""",
    )
)

# Longest first, so that 不喜欢 is read before 喜欢. A None value is an ordinary word that
# merely contains a marker (可爱 is "cute", 会议 a meeting, 但是 "but").
_ZH_MARKERS: dict[str, tuple[str, bool] | None] = {
    "不喜欢": ("like", True),
    "不可以": ("can", True),
    "讨厌": ("like", True),
    "不爱": ("like", True),
    "喜欢": ("like", False),
    "不能": ("can", True),
    "可以": ("can", False),
    "不会": ("hui", True),
    "不是": ("be", True),
    "没有": ("have", True),
    "不想": ("want", True),
    "不要": ("want", True),
    "从来不": ("", True),
    "从不": ("", True),
    "不再": ("", True),
    "再也不": ("", True),
    **dict.fromkeys(
        (
            "可爱",
            "爱好",
            "能力",
            "可能",
            "会议",
            "机会",
            "社会",
            "但是",
            "还是",
            "就是",
            "可是",
            "于是",
            "只是",
            "总是",
            "是否",
            "有些",
            "有时",
            "所有",
            "只有",
            "需要",
            "重要",
            "只要",
            "主要",
            "想法",
            "思想",
            "不过",
            "不错",
            "不同",
            "不少",
            "不久",
            "不但",
            "不管",
            "不断",
        )
    ),
    "爱": ("like", False),
    "能": ("can", False),
    "会": ("hui", False),
    "是": ("be", False),
    "有": ("have", False),
    "想": ("want", False),
    "要": ("want", False),
    "不": ("", True),
    "没": ("", True),
    "别": ("", True),
}
_ZH_MARKER = re.compile("|".join(sorted(map(re.escape, _ZH_MARKERS), key=len, reverse=True)))
# Stripped from the ends of a Chinese run: people, degree words, particles.
_ZH_FILLER = re.compile(
    r"^(?:我|用户|他|她|你|很|也|都|还|就|真的|非常|特别|一直|现在|已经|最)+|(?:的|了|吗|呢|吧|啊)+$"
)
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_PIECE = re.compile(f"[{_CJK}]+|[a-z0-9]+")
_CJK_RUN = re.compile(f"[{_CJK}]+")


@dataclass(frozen=True)
class Claim:
    families: frozenset[str]
    negated: bool
    words: frozenset[str]


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    for pattern, replacement in _EN_SPELLED_OUT:
        text = pattern.sub(replacement, text)
    return text


# A write compares its memory with up to a few dozen others, and the same ones again on
# the next write: each text is read once.
@lru_cache(maxsize=4096)
def read_claim(text: str) -> Claim:
    families: set[str] = set()
    negations = 0
    words: set[str] = set()
    for piece in _PIECE.findall(_normal(text)):
        if _CJK_RUN.fullmatch(piece):
            negations += _read_chinese(piece, families, words)
        elif piece in _EN_NEGATORS:
            negations += 1
        elif piece in _EN_VERBS:
            family, negated = _EN_VERBS[piece]
            families.add(family)
            negations += negated
        elif piece not in _EN_IGNORED:
            words.add(stem(piece))
    return Claim(frozenset(families), negations % 2 == 1, frozenset(words))


def _read_chinese(run: str, families: set[str], words: set[str]) -> int:
    negations = 0
    start = 0
    for match in _ZH_MARKER.finditer(run):
        marker = _ZH_MARKERS[match.group(0)]
        if marker is None:
            continue
        _chinese_words(run[start : match.start()], words)
        start = match.end()
        family, negated = marker
        if family:
            families.add(family)
        negations += negated
    _chinese_words(run[start:], words)
    return negations


def _chinese_words(text: str, words: set[str]) -> None:
    text = _ZH_FILLER.sub("", text)
    if text:
        words.update(cjk_bigrams(text))


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


# -- single-valued slots -----------------------------------------------------------

_VALUE_EN = r"(?P<value>[a-z][a-z\- ]{0,40}?)(?=$|[,.;!?()]| and | with | since | for | because | now| next| last)"
_VALUE_ZH = r"(?P<value>[^，。,.;；!！?？的了\s]{1,20})"
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "residence",
        re.compile(
            r"\b(?:lives?|living|moved|moving|relocated|relocating|resides?|based)\s+(?:in|to)\s+(?:the\s+)?"
            + _VALUE_EN
        ),
    ),
    ("residence", re.compile(r"(?:住在|搬到|搬去|搬家到|定居在|定居于|现居)" + _VALUE_ZH)),
    ("favourite {what}", re.compile(r"\bfavou?rite\s+(?P<what>[a-z]+)\s+is\s+(?:the\s+)?" + _VALUE_EN)),
    ("favourite {what}", re.compile(r"最喜欢的(?P<what>[^，。,.是]{1,6})是" + _VALUE_ZH)),
    ("name", re.compile(r"\bname is\s+" + _VALUE_EN)),
    ("name", re.compile(r"(?:叫|名字是)" + _VALUE_ZH)),
)


@dataclass(frozen=True)
class Slot:
    name: str
    whose: frozenset[str]
    value: str


@lru_cache(maxsize=4096)
def read_slots(text: str) -> tuple[Slot, ...]:
    """The single-valued slots a text fills, each with whose it is (the words before it)."""
    normal = _normal(text)
    found: list[Slot] = []
    for name, pattern in _SLOTS:
        for match in pattern.finditer(normal):
            before = read_claim(normal[: match.start()])
            if before.negated:  # "doesn't live in Paris" fills no slot
                continue
            slot = name.format(what=match.groupdict().get("what") or "")
            found.append(Slot(slot, before.words, match.group("value").strip()))
    return tuple(found)


# Terms that find the memories filling a slot, for the full-text search (search_text forms).
SLOT_CUES = ("live", "move", "reloc", "resid", "base", "住在", "搬到", "搬去", "定居", "favourit", "name", "名字")


def lookup_terms(text: str) -> list[str]:
    """Full-text index terms (search_text forms) of which a memory holds one if the rules
    can find it contradicts ``text``: the words its claim is about (its verbs, negations and
    filler are in many memories and say nothing of a subject; a lone Chinese character is
    indexed only as the start of a bigram) and, when it fills a slot, the slots' cue words."""
    words = [f"{w}*" if len(w) == 1 and _CJK_RUN.fullmatch(w) else w for w in sorted(read_claim(text).words)]
    return words + (list(SLOT_CUES) if read_slots(text) else [])


def contradiction(newer: str, older: str, *, same_subject: bool = False) -> str | None:
    """Why ``newer`` and ``older`` cannot both hold, or None when they can."""
    for slot in read_slots(newer):
        for other in read_slots(older):
            if (slot.name, slot.whose) == (other.name, other.whose) and not (
                slot.value in other.value or other.value in slot.value
            ):
                return f"{slot.name}: {slot.value} / {other.value}"
    a, b = read_claim(newer), read_claim(older)
    if a.negated == b.negated or a.families != b.families:
        return None
    if _overlap(a.words, b.words) < (SAME_WORDS_KNOWN_SUBJECT if same_subject else SAME_WORDS):
        return None
    names = [_FAMILY_NAMES[f] for f in sorted(a.families)]
    return f"{' '.join(names) or 'negation'} flip"
