"""People in explicit words, offline: a relation word the owner uses of someone, then their
name ("my sister Ana", "我姐姐安娜"), and two names said to be one person ("Ana, also called
安娜"). The dream without a model reads these; with a model, its answer takes their shape."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PersonFound:
    """A person the dream read in the messages: their name, the names they were called by,
    what they are to the owner, and the words that say so (verbatim)."""

    name: str
    evidence: list[str]
    aliases: list[str] = field(default_factory=list)
    relation: str = ""


@dataclass(frozen=True)
class SamePerson:
    """Two names the messages say belong to one person ("Ana is my sister")."""

    names: tuple[str, str]
    evidence: list[str]


# The relation words of "my sister Ana", "my friend Tom Lee", "我姐姐安娜", "我的朋友叫小雨".
RELATIONS_EN = (
    "best friend",
    "girlfriend",
    "boyfriend",
    "grandmother",
    "grandfather",
    "grandma",
    "grandpa",
    "roommate",
    "flatmate",
    "colleague",
    "coworker",
    "co-worker",
    "classmate",
    "neighbour",
    "neighbor",
    "daughter",
    "husband",
    "partner",
    "brother",
    "sister",
    "cousin",
    "mother",
    "father",
    "friend",
    "teacher",
    "mentor",
    "uncle",
    "aunt",
    "wife",
    "boss",
    "mom",
    "mum",
    "dad",
    "son",
)
RELATIONS_ZH = {
    "姐姐": "sister",
    "妹妹": "sister",
    "哥哥": "brother",
    "弟弟": "brother",
    "妈妈": "mother",
    "爸爸": "father",
    "老婆": "wife",
    "老公": "husband",
    "女朋友": "girlfriend",
    "男朋友": "boyfriend",
    "闺蜜": "best friend",
    "好朋友": "best friend",
    "朋友": "friend",
    "同事": "colleague",
    "同学": "classmate",
    "室友": "roommate",
    "老板": "boss",
    "老师": "teacher",
    "表姐": "cousin",
    "表妹": "cousin",
    "表哥": "cousin",
    "表弟": "cousin",
    "奶奶": "grandmother",
    "爷爷": "grandfather",
    "外婆": "grandmother",
    "外公": "grandfather",
    "舅舅": "uncle",
    "阿姨": "aunt",
    "邻居": "neighbour",
}
_NAME_EN = r"[A-Z][a-z]+(?:[- ][A-Z][a-z]+)?"
# The relation in any case, the name capitalised ("my sister Ana", not "my sister is").
_PERSON_EN = re.compile(
    rf"\b(?i:my\s+(?P<relation>{'|'.join(re.escape(r) for r in RELATIONS_EN)}),?\s+(?:named\s+|called\s+)?)"
    rf"(?P<name>{_NAME_EN})\b"
)
# A Chinese name runs 2–3 characters; it neither starts nor ends where a particle, a time
# or a verb the sentence goes on with begins ("我姐姐安娜今天来了": 安娜; "我姐姐今天来了":
# no one), or at punctuation.
_AFTER_NAME_ZH = "今明昨来去说是在和也都又很要会的了给跟把被让叫想回还就才刚最真好，。！？、,.!?\\s"
_PERSON_ZH = re.compile(
    rf"我的?(?P<relation>{'|'.join(sorted(RELATIONS_ZH, key=len, reverse=True))})(?:叫|是)?"
    rf"(?![{_AFTER_NAME_ZH}])(?P<name>[\u4e00-\u9fff]{{2,3}}?)(?=[{_AFTER_NAME_ZH}]|$)"
)


_ONE_NAME = rf"(?:{_NAME_EN}|[\u4e00-\u9fff]{{2,3}})"
_SAME_PERSON = re.compile(
    rf"(?P<first>{_ONE_NAME})\s*(?:,\s*)?(?:也叫|又叫|就是|aka|a\.k\.a\.|also known as|is also called|also called)"
    rf"\s*(?P<second>{_ONE_NAME})"
)


def same_people_in(text: str) -> list[SamePerson]:
    """Two names the words say are one person: "Ana, also called 安娜", "安娜就是Ana"."""
    return [
        SamePerson(names=(m.group("first"), m.group("second")), evidence=[m.group(0)])
        for m in _SAME_PERSON.finditer(text)
    ]


def people_in(text: str) -> list[PersonFound]:
    """People the words name with their relation to the speaker: "my sister Ana" is Ana,
    also called "my sister"; "我姐姐安娜" is 安娜, also called "我姐姐"."""
    found = []
    for match in _PERSON_EN.finditer(text):
        relation = match.group("relation").lower()
        name = match.group("name")
        if name.lower() in {"and", "is", "was", "the", "i"}:
            continue
        found.append(PersonFound(name=name, aliases=[f"my {relation}"], relation=relation, evidence=[match.group(0)]))
    for match in _PERSON_ZH.finditer(text):
        relation = match.group("relation")
        found.append(
            PersonFound(
                name=match.group("name"),
                aliases=[f"我{relation}"],
                relation=RELATIONS_ZH[relation],
                evidence=[match.group(0)],
            )
        )
    return found
