"""Sentences of a chat message, as the embedded dream reads them: where one ends, what
opens it without being part of what it says, whether it asks, and whether it speaks of
the speaker. English and Chinese."""

from __future__ import annotations

import re

# A sentence ends at one of these (with any closing quote or bracket), or at a line break.
_BREAK = re.compile(r"[.!?。！？；;…]+[\"'”’）)\]」』]*|\n+")
# A full stop after these is no end: "Dr. Lee", "8 a.m. tomorrow", "e.g. this".
_ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "prof", "jr", "sr", "vs", "etc", "e.g", "i.e", "a.m", "p.m"})
_WORD_BEFORE = re.compile(r"[A-Za-z.]+$")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def sentences(text: str) -> list[str]:
    """The message's sentences, each a verbatim piece of it, its closing marks kept."""
    found: list[str] = []
    start = 0
    for match in _BREAK.finditer(text):
        if match.group(0).startswith(".") and not match.group(0).startswith(".."):
            after = text[match.end() : match.end() + 1]
            before = _WORD_BEFORE.search(text[start : match.start()])
            word = before.group(0).lower().strip(".") if before else ""
            # "8.30", "example.com", "Dr. Lee", "J. K. Rowling": the sentence goes on.
            if (after and not after.isspace()) or word in _ABBREVIATIONS or (len(word) == 1 and word != "i"):
                continue
        piece = text[start : match.end()].strip()
        if piece:
            found.append(piece)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        found.append(tail)
    return found


def is_chinese(text: str) -> bool:
    """Whether the text is mostly Chinese: "我下周去Tokyo" is, "I'm meeting 小林 on Friday" is not."""
    cjk = len(_CJK.findall(text))
    return cjk > 0 and 3 * cjk >= len(_LATIN.findall(text))


# Words that open a sentence without saying anything of it ("Oh, and …", "对了，…").
_OPENING_EN = re.compile(
    r"^(?:(?:oh|ok|okay|so|and|also|but|btw|by the way|hey|hi|well|yeah|yes|yep|alright|anyway|one more thing|fyi"
    r"|just so you know|actually)\b[\s,!:;–—-]*)+",
    re.IGNORECASE,
)
# A name said to the listener before a request or a rule ("Mel, please remember …").
_VOCATIVE_EN = re.compile(
    r"^[A-Z][a-z]+,\s+(?=(?i:please|remember|never|always|don't|do not|from now on|keep in mind|make sure"
    r"|i want you|i need you|i'd like you|can you|could you|would you|will you)\b)"
)
_OPENING_ZH = re.compile(r"^(?:(?:对了|还有|另外|顺便说一下|顺便|嗯+|好的|好吧|哦|噢|然后|所以|而且|其实)[，,、\s]*)+")


def body(sentence: str) -> str:
    """The sentence without its opening words; a verbatim piece of it."""
    opening = _OPENING_ZH if is_chinese(sentence[:4]) else _OPENING_EN
    rest = opening.sub("", sentence, count=1)
    if not is_chinese(rest[:2]):
        rest = _VOCATIVE_EN.sub("", rest, count=1)
    return rest.strip()


_CLOSERS = " \t\"'”’）)]」』"
_END_MARKS = " \t.!?。！？；;…~～" + _CLOSERS


def without_end(text: str) -> str:
    """The text without the marks that close it."""
    return text.rstrip(_END_MARKS)


def quoted(sentence: str) -> str:
    """A sentence as evidence: verbatim, without the marks that end it ("." "！")."""
    return sentence.rstrip(" \t.!?。！？；;…~～")


def as_sentence(text: str) -> str:
    """A memory's content: the words without their closing marks, a Latin first letter in capitals."""
    text = without_end(text).strip()
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


_AUX = (
    r"(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might|have|has|had"
    r"|don't|doesn't|didn't|isn't|aren't|won't|wouldn't|can't|couldn't|shouldn't)"
)
_ASKED = r"(?:you|i|we|he|she|they|it|there|this|that|u|ya)"
_QUESTION_EN = re.compile(
    rf"^(?:(?:what|when|where|who|whom|whose|why|how|which)\b.*\b{_AUX}\s+{_ASKED}\b|{_AUX}\s+{_ASKED}\b"
    r"|(?:what|where|who|why|how)(?:'s|\s+is|\s+are)\b)",
    re.IGNORECASE,
)
# 是不是, 要不要, 有没有: a choice offered is a question.
_QUESTION_ZH = re.compile(r"([\u4e00-\u9fff])不\1|有没有|[吗呢么嘛]$")


def fold(text: str) -> str:
    """One apostrophe for matching (same length, so a match's span is the original's)."""
    return text.replace("’", "'")


def is_question(text: str) -> bool:
    bare = text.rstrip(_CLOSERS)
    if bare.endswith(("?", "？")):
        return True
    if is_chinese(bare):
        return _QUESTION_ZH.search(without_end(bare)) is not None
    return _QUESTION_EN.search(fold(bare)) is not None


_FIRST_PERSON_EN = re.compile(r"\b(?:i|me|my|mine|myself|we|us|our|ours)\b", re.IGNORECASE)
_FIRST_PERSON_ZH = re.compile(r"我|咱")


def speaks_of_speaker(text: str) -> bool:
    """Whether the speaker is in it: "I", "me", "my", "we", 我, 咱."""
    return _FIRST_PERSON_ZH.search(text) is not None or _FIRST_PERSON_EN.search(text) is not None
