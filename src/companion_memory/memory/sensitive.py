"""Find secrets and personal identifiers: refused in automatic memory writes, masked in episodes.

A memory is recalled into prompts sent to third-party models, so an agent or the
nightly dream must not turn a pasted API key or an ID number into one. The owner can
allow a class (``MEMORY_SENSITIVE_ALLOW``) or write the memory by hand.

An episode (what was said, recalled the same way) keeps the words around a secret and
replaces the secret itself by a mark naming its class (``mask_sensitive``), whatever the
owner allows: nobody chose to keep it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


def _holds(*words: str) -> Callable[[str], bool]:
    return lambda text: any(word in text for word in words)


def _holds_folded(*words: str) -> Callable[[str], bool]:
    """For a case-blind pattern: each character it takes for a letter of ``words`` folds
    to that letter (K, ſ, İ to k, s, i and a dot), so the folded text holds the word."""

    def test(text: str) -> bool:
        folded = text.casefold()
        return any(word in folded for word in words)

    return test


# Each pattern's ``secret`` group, when it has one, is what is masked; the words before it
# ("password is", "Bearer") stay, so the episode still reads as what was said. Beside each,
# words one of which every text it matches holds.
_CREDENTIAL_PATTERNS = [
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"), _holds("sk-")),  # OpenAI / Anthropic
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), _holds("AKIA")),  # AWS access key id
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), _holds("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),  # GitHub tokens
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"), _holds("github_pat_")),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"), _holds("xox")),  # Slack
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), _holds("AIza")),  # Google API key
    (re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), _holds("eyJ")),  # JWT
    (re.compile(r"\bBearer\s+(?P<secret>[A-Za-z0-9_\-.=]{20,})"), _holds("Bearer")),
    (
        re.compile(
            r"(?i)(?:password|passwd|passcode|pwd|api[ _\-]?key|secret|access[ _\-]?token|密码|口令|密钥)"
            r"\s*(?:is|was|[:=：是为])\s*(?P<secret>\S{4,})"
        ),
        _holds_folded("pass", "pwd", "api", "secret", "access", "密码", "口令", "密钥"),
    ),
]
# A key is masked from its header to its footer (or to the end, when it was cut off).
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----(?:.*?-----END (?:[A-Z]+ )*PRIVATE KEY-----|.*)", re.DOTALL
)
_CARD_CANDIDATE = re.compile(r"\b(?:\d[ \-]?){12,18}\d\b")
_CN_ID = re.compile(r"\b\d{17}[\dXx]\b")
_US_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_PHONE = re.compile(
    r"(?<!\d)(?:\+?86[ \-]?)?1[3-9]\d{9}(?!\d)|\+\d{1,3}[ \-]?\(?\d{2,4}\)?[ \-]?\d{3,4}[ \-]?\d{3,4}\b"
)

SENSITIVE_CLASSES = ("credential", "private_key", "payment_card", "national_id", "phone")


@dataclass(frozen=True)
class SensitiveSpan:
    start: int
    end: int
    kind: str


def sensitive_spans(text: str) -> list[SensitiveSpan]:
    """Every secret in ``text`` with its class, in the order of SENSITIVE_CLASSES, then of
    where it is. Spans of different classes may overlap (a card number inside a key)."""
    spans: list[SensitiveSpan] = []
    hinted: dict[Callable[[str], object], object] = {}  # a test the digit classes share runs once
    for rule in _RULES:
        if rule.may_match not in hinted:
            hinted[rule.may_match] = rule.may_match(text)
        if not hinted[rule.may_match]:
            continue
        for match in rule.pattern.finditer(text):
            if rule.valid is None or rule.valid(match.group(0)):
                group = "secret" if "secret" in rule.pattern.groupindex else 0
                spans.append(SensitiveSpan(match.start(group), match.end(group), rule.kind))
    return spans


def find_sensitive(text: str) -> list[str]:
    """The sensitive-data classes present in ``text``, in a stable order."""
    return list(dict.fromkeys(span.kind for span in sensitive_spans(text)))


def refused_classes(text: str, allowed: frozenset[str]) -> list[str]:
    """The sensitive classes in ``text`` the owner has not allowed automatic writers to keep."""
    return [found for found in find_sensitive(text) if found not in allowed]


def mask_sensitive(text: str) -> tuple[str, list[str]]:
    """``text`` with each secret replaced by ``[class]`` (``[phone]``, ``[credential]``…),
    and the classes masked; overlapping secrets become one mark, of the first class."""
    spans = sensitive_spans(text)
    if not spans:
        return text, []
    merged: list[SensitiveSpan] = []
    for span in sorted(spans, key=lambda s: (s.start, SENSITIVE_CLASSES.index(s.kind))):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = SensitiveSpan(last.start, max(last.end, span.end), last.kind)
        else:
            merged.append(span)
    parts: list[str] = []
    at = 0
    for span in merged:
        parts += [text[at : span.start], f"[{span.kind}]"]
        at = span.end
    parts.append(text[at:])
    return "".join(parts), find_sensitive(text)


def _luhn_valid(candidate: str) -> bool:
    digits = re.sub(r"\D", "", candidate)
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cn_id_valid(number: str) -> bool:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    checks = "10X98765432"
    total = sum(int(d) * w for d, w in zip(number[:17], weights, strict=False))
    return checks[total % 11] == number[17].upper()


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    # A quick test every text the pattern matches passes: most texts hold no secret, and
    # a pattern that begins with \b or an alternation is tried at every position (an
    # import masks a hundred thousand messages; the patterns alone took 200 µs each).
    may_match: Callable[[str], object]
    # The check a match must pass.
    valid: Callable[[str], bool] | None = None


# Every digit class needs nine digits or more, with at most spaces, dashes, brackets
# (and the leading +, outside the run) between them.
_DIGIT_RUN = re.compile(r"\d[\d \-()]{7,}\d")
# In the order of SENSITIVE_CLASSES.
_RULES = (
    *(_Rule("credential", pattern, hint) for pattern, hint in _CREDENTIAL_PATTERNS),
    _Rule("private_key", _PRIVATE_KEY, _holds("-----BEGIN ")),
    _Rule("payment_card", _CARD_CANDIDATE, _DIGIT_RUN.search, _luhn_valid),
    _Rule("national_id", _CN_ID, _DIGIT_RUN.search, _cn_id_valid),
    _Rule("national_id", _US_SSN, _DIGIT_RUN.search),
    _Rule("phone", _PHONE, _DIGIT_RUN.search),
)
