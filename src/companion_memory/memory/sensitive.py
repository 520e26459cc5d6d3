"""Refuse secrets and personal identifiers in automatic memory writes.

A memory is recalled into prompts sent to third-party models, so an agent or the
nightly dream must not turn a pasted API key or an ID number into one. The owner can
allow a class (``MEMORY_SENSITIVE_ALLOW``) or write the memory by hand.
"""

from __future__ import annotations

import re

_CREDENTIAL_PATTERNS = [
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"),  # OpenAI / Anthropic
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),  # Google API key
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWT
    re.compile(r"\bBearer\s+[A-Za-z0-9_\-.=]{20,}"),
    re.compile(
        r"(?i)(?:password|passwd|passcode|pwd|api[ _\-]?key|secret|access[ _\-]?token|密码|口令|密钥)"
        r"\s*(?:is|was|[:=：是为])\s*\S{4,}"
    ),
]
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----")
_CARD_CANDIDATE = re.compile(r"\b(?:\d[ \-]?){12,18}\d\b")
_CN_ID = re.compile(r"\b\d{17}[\dXx]\b")
_US_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_PHONE = re.compile(
    r"(?<!\d)(?:\+?86[ \-]?)?1[3-9]\d{9}(?!\d)|\+\d{1,3}[ \-]?\(?\d{2,4}\)?[ \-]?\d{3,4}[ \-]?\d{3,4}\b"
)

SENSITIVE_CLASSES = ("credential", "private_key", "payment_card", "national_id", "phone")


def find_sensitive(text: str) -> list[str]:
    """The sensitive-data classes present in ``text``, in a stable order."""
    found: list[str] = []
    if any(p.search(text) for p in _CREDENTIAL_PATTERNS):
        found.append("credential")
    if _PRIVATE_KEY.search(text):
        found.append("private_key")
    if any(_luhn_valid(re.sub(r"\D", "", m.group(0))) for m in _CARD_CANDIDATE.finditer(text)):
        found.append("payment_card")
    if any(_cn_id_valid(m.group(0)) for m in _CN_ID.finditer(text)) or _US_SSN.search(text):
        found.append("national_id")
    if _PHONE.search(text):
        found.append("phone")
    return found


def refused_classes(text: str, allowed: frozenset[str]) -> list[str]:
    """The sensitive classes in ``text`` the owner has not allowed automatic writers to keep."""
    return [found for found in find_sensitive(text) if found not in allowed]


def _luhn_valid(digits: str) -> bool:
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
