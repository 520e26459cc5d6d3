"""About how many tokens a text takes, without a tokenizer: four ASCII characters make a
token, any other character (CJK, emoji) one. Budgets and thresholds read this."""

from __future__ import annotations

import math


def text_tokens(text: str) -> int:
    ascii_chars = len(text.encode("ascii", "ignore"))  # counted in C: a chat turn counts hundreds of lines
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)
