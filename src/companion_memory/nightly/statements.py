"""What the embedded dream (no DREAM_MODEL) proposes from the owner's words. A sentence
is proposed only when it is one of three things, whole and in the owner's own words:

- an explicit request to remember ("Please remember that I'm allergic to peanuts",
  "记住：我对花生过敏", "别忘了我下周三去看牙医"): the content is what is to be remembered;
- a rule the owner sets ("Never call me Meiling, just Mei", "From now on, answer in
  English", "以后不要给我推荐花生酱"): the content is the sentence;
- a plan with a day ahead ("I'm flying to Tokyo next Friday", "我下周三去看牙医"): the
  content is the sentence, and the plan ends on the day its words name.

The rest is left to a model. A keyword is never enough: "I'll never forget it" sets no
rule and "It's always nice" none either, a question asks rather than tells ("What food
should you never give me?"), advice to the listener is not about the owner ("Remember that
staying positive is important"), what was done is no plan ("我今天去爬山了"), nor is what
will not be ("I'm not going next week"), and a sentence that leans on the one before ("I'm
going there tomorrow") cannot stand alone."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ..memory.plan_dates import resolve_when
from .sentences import (
    as_sentence,
    body,
    fold,
    is_chinese,
    is_question,
    quoted,
    sentences,
    speaks_of_speaker,
    without_end,
)

REQUEST, RULE, PLAN = "request", "rule", "plan"


@dataclass(frozen=True)
class Statement:
    kind: str
    content: str
    # The sentence it was said in, verbatim (without its closing mark): the evidence.
    quote: str
    # A plan's last day (YYYY-MM-DD).
    valid_to: str | None = None


def statements_in(text: str, said_on: date) -> list[Statement]:
    """The owner's requests, rules and plans in one message said on ``said_on``: at most
    one per sentence (a request, else a rule, else a plan)."""
    found = []
    for sentence in sentences(text):
        words = body(sentence)
        if len(words) < 2:
            continue
        chinese = is_chinese(words)
        statement = (
            (_request_zh(sentence, words) or _rule_zh(sentence, words) or _plan_zh(sentence, words, said_on))
            if chinese
            else (_request_en(sentence, words) or _rule_en(sentence, words) or _plan_en(sentence, words, said_on))
        )
        if statement is not None:
            found.append(statement)
    return found


# -- requests ------------------------------------------------------------------------

_CUE_EN = r"(?:remember|memori[sz]e|keep\s+in\s+mind|don't\s+(?:ever\s+)?forget|do\s+not\s+forget|never\s+forget)"
_CUE = re.compile(rf"{_CUE_EN}\b", re.IGNORECASE)
# "Can you remember that …?" asks for it politely: the one question that is a request.
_POLITE_EN = re.compile(rf"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?={_CUE_EN}\b)", re.IGNORECASE)
# Said to be kept, in so many words: "please remember", "I want you to remember".
_ASKED_EN = re.compile(
    rf"(?:\b(?:please\s+(?:do\s+)?|(?:i\s+(?:want|need|would\s+like)|i'd\s+like)\s+you\s+to\s+)"
    rf"|^make\s+sure\s+(?:you\s+|to\s+))(?={_CUE_EN}\b)",
    re.IGNORECASE,
)
# "Remember when we …", "remember that time …": a memory shared, not one handed over.
_RECALLED_EN = re.compile(
    r"\s*(?:when|how|what|why|where|who|whom|whether|if|back\s+when|the\s+(?:time|day|night|moment|first)"
    r"|that\s+(?:time|day|night|moment|trip|one|epic)|those|these|seeing|meeting|being|going|you\s+(?:mentioning|telling|saying))\b",
    re.IGNORECASE,
)
# "Remember, …" and "Remember Jon, …" speak to the listener: a figure of speech.
_LINK_EN = re.compile(r"\s*(?:(?i:that|this)\b\s*[:,–—-]?|[:–—-]|(?P<comma>,|[A-Z][a-z]+,))?\s*")
# "… remember this when I need it": a time to remember, not a fact.
_WHEN_EN = re.compile(r"(?:when|whenever|if|because|while)\b", re.IGNORECASE)
# What is said to the listener rather than handed over: "remember that staying positive is
# important", "don't forget that you have people cheering you on", "anything is possible".
_ADVICE_EN = re.compile(
    r"^(?:you|your|yourself|\w+ing|anything|everything|everyone|everybody|nobody|no\s+one|nothing|sometimes|life"
    r"|failures?|success|things|every|small|little|tough\s+times|hard\s+work|there's|we\s+all|we're\s+all"
    r"|it's\s+(?:okay|ok|fine|normal|important))\b"
    r"|\bis\s+(?:so\s+|very\s+|really\s+)?(?:important|key|possible|okay|ok|normal|worth\s+it)\b",
    re.IGNORECASE,
)


def _request_en(sentence: str, words: str) -> Statement | None:
    folded = fold(words)
    polite = _POLITE_EN.match(folded)
    if polite is None and is_question(sentence):
        return None
    asked = polite or _ASKED_EN.search(folded)
    cue = _CUE.match(folded, asked.end() if asked else 0)
    if cue is None or _RECALLED_EN.match(folded, cue.end()):
        return None
    link = _LINK_EN.match(folded, cue.end())
    assert link is not None  # every part of it is optional
    fact = without_end(words[link.end() :]).strip()
    if len(fact.split()) < 2 or _WHEN_EN.match(fact):
        return None
    owner = speaks_of_speaker(fact)
    if fact.lower().startswith("to "):
        # "Remember to wake me at 7": a standing instruction, kept as the owner said it.
        return None if polite or not owner else Statement(REQUEST, as_sentence(words), quoted(sentence))
    if asked is None and (link.group("comma") or (not owner and _ADVICE_EN.search(fold(fact)))):
        # "Remember, you're not alone": a figure of speech, nothing to keep.
        return None
    return Statement(REQUEST, as_sentence(fact), quoted(sentence))


_CUE_ZH = r"(?:记住|记下|记好|记一下|记着|牢记|记得|别忘了|别忘记|不要忘了|不要忘记|千万别忘了|千万不要忘了)"
_REQUEST_ZH = re.compile(
    rf"(?:^|[，,：:、；;]\s*)(?P<asked>请你?|麻烦你?|帮我|你要|你得|你可要|你一定要|一定要|我(?:要|希望|想)你|你?能(?:不能)?(?:帮我)?|可以帮我)?"
    rf"你?(?P<cue>{_CUE_ZH})(?![了过住])"
)
_ADVICE_ZH = re.compile(r"^(?:你|自己)|加油|放弃|坚持|努力|一切都会|总会|人生|生活")
# What follows the cue is something to do ("别忘了明天叫我起床"), not a fact: the request is kept whole.
_TO_DO_ZH = re.compile(
    r"^(?:提醒|叫|喊|帮|给|带|买|打|发|告诉|问|做|去|来|把|关|开|订|交|还|拿|接|送|喝|吃|每天|明天|后天|今天|今晚|下周|周[一二三四五六日天末])"
)


def _request_zh(sentence: str, words: str) -> Statement | None:
    match = _REQUEST_ZH.search(words)
    if match is None:
        return None
    asked = match.group("asked")
    polite = asked is not None and ("能" in asked or "可以" in asked)
    if is_question(sentence) and not polite:
        return None
    after = words[match.end() :]
    fact = without_end(after.lstrip("：:，, ")).removesuffix("吗").strip()
    if len(fact) < 2:
        return None
    owner, to_do = speaks_of_speaker(fact), _TO_DO_ZH.match(fact) is not None
    if (
        asked is None
        and not owner
        and (to_do or match.group("cue") == "记得" or after.startswith(("，", ",")) or _ADVICE_ZH.search(fact))
    ):
        # "记得多喝水", "记住，坚持就是胜利": said to the listener, nothing to keep.
        return None
    whole = without_end(words[match.start("asked") if asked else match.start("cue") :]).removesuffix("吗")
    return Statement(REQUEST, whole if to_do else fact, quoted(sentence))


# -- rules ---------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ALWAYS_NEVER_EN = re.compile(
    r"^(?:please\s+)?(?:never(?:\s+ever)?|don't\s+(?:you\s+)?ever|do\s+not\s+ever|always)\s+(?P<verb>[a-z']+)",
    re.IGNORECASE,
)
# A word after "never"/"always" that is no order: "Never thought …", "Always nice …".
_NOT_AN_ORDER = _words(
    "a an the so such too very been there here ready up down on in more better best worth true nice good great fun "
    "happy glad easy hard interesting amazing awesome again ever mind thought knew saw felt had was were got went made "
    "took came said told met gave found heard left lost ran sat won wrote ate drank bought brought caught taught slept "
    "kept understood forgot became began did done seen gone known my your his her our their it that this"
)
# Orders that set a standing rule even without the owner in them ("Always answer in English").
_STANDING_EN = _words("answer reply respond speak write use recommend suggest mention address")
_FROM_NOW_EN = re.compile(
    r"^(?:please\s+)?(?:from\s+now\s+on|going\s+forward|from\s+today\s+on|starting\s+(?:today|now|tomorrow)"
    r"|in\s+(?:the\s+)?future)\b[\s,]*(?P<rest>[\w'].*)",
    re.IGNORECASE,
)
_ENDS_FROM_NOW_EN = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|from\s+today\s+on|ever\s+again|any\s?more)\W*$", re.IGNORECASE
)
_DONT_EN = re.compile(r"^(?:please\s+)?(?:don't|do\s+not)\s+(?P<verb>[a-z']+)", re.IGNORECASE)
# "Don't worry about me anymore" wishes; it sets nothing.
_NOT_A_RULE_EN = _words("worry be feel get let give stop hesitate mind forget")
_STOP_EN = re.compile(r"^(?:please\s+)?stop\s+\w+ing\s+me\b", re.IGNORECASE)
_WEEKDAYS_AND_TIMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|later|tonight|tomorrow)"
_CALL_ME_EN = re.compile(rf"^(?i:please\s+)?(?i:call|address)\s+me\s+(?!(?i:{_WEEKDAYS_AND_TIMES})\b)[A-Z]")
# Who does it, when the words after "from now on" name them: then it is a resolution, no rule.
_SUBJECTS_EN = _words("i we he she they it there this that my our his her their things everything life")
_OPENS_WITH_VERB = re.compile(r"^(?:please\s+)?(?P<first>[a-z]+)\b", re.IGNORECASE)
_NOT_IMPERATIVE = _SUBJECTS_EN | _words(
    "you your the a an and but so if when what where why how who which do does did is are am was were can could would "
    "will should shall may might have has had let's lets"
)
# A rule that leans on what was said before ("Never call me that") cannot stand alone.
_DANGLING_EN = re.compile(
    r"\b(?:call|calling|mention|mentioning|say|saying|do|doing|bring\s+up|tell|telling|use)\s+(?:me\s+)?(?:it|that|this|them)\b",
    re.IGNORECASE,
)


def _is_order(verb: str) -> bool:
    """Whether a word after "never"/"always" reads as a verb told to someone ("call", "book")."""
    verb = verb.lower()
    return not (
        verb in _NOT_AN_ORDER or verb.endswith(("ed", "ing", "ly")) or (verb.endswith("s") and not verb.endswith("ss"))
    )


def _rule_en(sentence: str, words: str) -> Statement | None:
    folded = fold(words)
    if is_question(sentence) or _DANGLING_EN.search(folded):
        return None
    owner = speaks_of_speaker(folded)
    rule = False
    if match := _ALWAYS_NEVER_EN.match(folded):
        verb = match.group("verb")
        rule = _is_order(verb) and (owner or verb.lower() in _STANDING_EN)
    elif match := _FROM_NOW_EN.match(folded):
        rule = re.split(r"[\s',]", match.group("rest").lower(), maxsplit=1)[0] not in _SUBJECTS_EN
    elif match := _DONT_EN.match(folded):
        rule = owner and match.group("verb").lower() not in _NOT_A_RULE_EN and bool(_ENDS_FROM_NOW_EN.search(folded))
    elif _STOP_EN.match(folded) or _CALL_ME_EN.match(folded):
        rule = True
    elif _ENDS_FROM_NOW_EN.search(folded) and (first := _OPENS_WITH_VERB.match(folded)):
        rule = owner and first.group("first").lower() not in _NOT_IMPERATIVE
    return Statement(RULE, as_sentence(words), quoted(sentence)) if rule else None


_FROM_NOW_ZH = r"(?:以后|今后|往后|从现在起|从现在开始|从今天起|从今天开始|从今以后)"
_RULE_ZH = re.compile(
    rf"(?:^|[，,：:、；;]\s*)(?P<rule>(?:请)?你?(?:"
    rf"{_FROM_NOW_ZH}[，,]?\s*你?(?:都|也|就|再|请|一定)*(?P<head>不要|别|不许|不准|不能|不用|请|要|记得|叫我|喊我|称呼我|只|少|多|每次|一律|永远|直接|用|给我|帮我|提醒我)"
    r"|(?:永远|千万|绝对)都?(?P<never>不要|别|不能|不许)"
    r"|(?P<again>不要|别|不许|不准)再"
    r"|(?:不要|别|不许|不准)(?P<address>叫我|喊我|称呼我)"
    r"|(?P<call>叫我|喊我|称呼我)[^，,。！？]{1,12}(?:就好|就行|就可以)))"
)
# Words about how to speak to the owner: a rule of its own even without 我 ("以后不要提这件事").
_SPEECH_ZH = re.compile(r"(?:提|说|叫|喊|称呼|问|回复|回答|推荐|发|讲|用|聊)")
_DANGLING_ZH = re.compile(r"这件事|那件事|这个|那个|它|那里|那儿|这样")


def _rule_zh(sentence: str, words: str) -> Statement | None:
    match = _RULE_ZH.search(words)
    if match is None or is_question(sentence) or _DANGLING_ZH.search(words):
        return None
    owner = speaks_of_speaker(words)
    spoken = _SPEECH_ZH.match(words, match.end()) is not None
    head = match.group("head")
    if match.group("address") or match.group("call"):
        rule = True
    elif head in ("不要", "别", "不许", "不准", "不能", "不用") or match.group("never") or match.group("again"):
        rule = owner or spoken
    else:
        # "以后要多运动" is a resolution, or advice; "以后要提醒我喝水" is a rule.
        rule = owner
    return Statement(RULE, without_end(words[match.start("rule") :]), quoted(sentence)) if rule else None


# -- plans ---------------------------------------------------------------------------

_FUTURE_EN = re.compile(
    r"\b(?:i|we)(?:'ll|\s+will|\s+shall)\b"
    r"|\b(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:(?:also|currently|finally|really|definitely|probably|just|still|actually)\s+)?"
    r"(?:going\s+to|gonna|about\s+to|planning\s+(?:to|on)|hoping\s+to|supposed\s+to|due\s+to|scheduled\s+to|off\s+to"
    r"|thinking\s+(?:about|of)\s+\w+ing|looking\s+forward\s+to"
    r"|(?!(?:feeling|loving|enjoying|missing|kidding|wondering|trying|thinking|hoping|looking|getting\s+(?:better|worse|tired|bored|used)"
    r"|doing\s+(?:well|good|great|ok|okay|fine|alright|better|my\s+best)|having\s+fun"
    r"|having\s+(?:a|an|such\s+a|so\s+much)\s+(?:\w+\s+)?(?:time|day|week|blast|fun))\b)\w+ing)\b"
    r"|\b(?:i|we)(?:\s+plan|\s+intend|\s+hope|\s+want|\s+need|\s+have|'ve\s+got|\s+got|\s+mean)\s+to\s+\w+"
    r"|\b(?:i|we)(?:\s+have|'ve\s+got|\s+got)\s+(?:a|an|my|our)\s+(?:[\w-]+\s+){0,3}?(?:appointment|meeting|interview|exam"
    r"|test|flight|trip|date|class|game|match|show|concert|party|surgery|shift|conference|presentation|deadline|recital"
    r"|performance|wedding|event|session|reservation|check-?up|lesson|race|competition|comp|audition|visit)s?\b"
    # Chat drops the subject ("Gonna volunteer at shelters next month"): the speaker's own plan.
    r"|^(?:gonna|going\s+to|planning\s+to|heading\s+to|off\s+to|flying\s+to|leaving\s+for)\b"
    r"|^my\s+(?:[\w-]+\s+){0,2}?(?:is|'s)\s+(?:on|next|this|tomorrow|in)\b",
    re.IGNORECASE,
)
_PAST_EN = re.compile(
    r"\b(?:yesterday|last|ago|earlier|this\s+morning|just\s+got\s+back|(?:has|have|had)\s+been)\b|'ve\s+been\b",
    re.IGNORECASE,
)
_NOT_EN = re.compile(r"\b(?:not|never|no\s+longer)\b|n't\b", re.IGNORECASE)
_CANT_WAIT = re.compile(r"\bcan't\s+wait\b", re.IGNORECASE)
_LEANS_EN = re.compile(
    r"\b(?:go|going|be|get|head|heading|come|coming)\s+there\b"
    r"|\b(?:do|doing|make|making|try|trying|finish|finishing|start|starting|bring|bringing|show|showing|send|sending)"
    r"\s+(?:it|that|this|them)\b"
    r"|\b(?:see|seeing|talk\s+to|talking\s+to|tell|telling|call|calling|text|texting|message|update|join|joining|meet"
    r"|meeting|catch\s+up\s+with|show|send|let)\s+(?:you|ya|u|y'all)\b",
    re.IGNORECASE,
)


def _day_ahead(words: str, said_on: date) -> str | None:
    when = resolve_when(words, said_on)
    return when[0].isoformat() if when is not None and when[0] >= said_on else None


def _plan_en(sentence: str, words: str, said_on: date) -> Statement | None:
    folded = fold(words)
    if (
        is_question(sentence)
        or _PAST_EN.search(folded)
        or _NOT_EN.search(_CANT_WAIT.sub("", folded))
        or _LEANS_EN.search(folded)
        or not _FUTURE_EN.search(folded)
    ):
        return None
    day = _day_ahead(words, said_on)
    return None if day is None else Statement(PLAN, as_sentence(words), quoted(sentence), day)


_INTENT_ZH = re.compile(r"要|去|打算|准备|计划|约|回|见|参加|考|出差|旅行|搬|面试|开会|上课|出发|飞|体检|聚餐|吃饭")
_PAST_ZH = re.compile(r"昨天|前天|上周|上个?星期|上个?礼拜|上个月|去年|刚才|刚刚|已经|那天|之前|以前")
# 了 and 过 after a deed say it is done; "要…了", "快…了" say it is near.
_DONE_ZH = re.compile(r"(?<![为除])了(?![解不])|(?<![经难不])过(?![生年来去节])")
_NEAR_ZH = re.compile(r"(?:要|会|就|快|将|该|得|打算|准备|计划)[^。！？，,]*了")
_NOT_ZH = re.compile(r"不(?![错少同久过但])|没|(?<![特区分告])别|甭")
_ASKS_ZH = re.compile(r"什么|怎么|为什么|哪|谁|几点|多少|几号|何时|啥|吧$")
_OTHERS_ZH = re.compile(r"你|他|她|它")


def _plan_zh(sentence: str, words: str, said_on: date) -> Statement | None:
    bare = without_end(words)
    done = _PAST_ZH.search(bare) or (_DONE_ZH.search(bare) and not _NEAR_ZH.search(bare))
    others = _OTHERS_ZH.search(bare) and not speaks_of_speaker(bare)
    if (
        is_question(sentence)
        or _ASKS_ZH.search(bare)
        or done
        or _NOT_ZH.search(bare)
        or others
        or _DANGLING_ZH.search(bare)
        or not _INTENT_ZH.search(bare)
    ):
        return None
    day = _day_ahead(words, said_on)
    return None if day is None else Statement(PLAN, bare, quoted(sentence), day)
