"""The text the full-text index stores for a memory.

FTS5's unicode61 tokenizer splits on spaces and punctuation, which leaves a Chinese
sentence as one long token that no two-character query could match. Spelling each
CJK run out as overlapping character bigrams ("我很怕黑" → "我很 很怕 怕黑") lets
"怕黑" match, while Latin words are indexed as words.
"""

from __future__ import annotations

import re

_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]+")


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def search_document(text: str) -> str:
    parts: list[str] = []
    position = 0
    for match in _CJK_RUN.finditer(text):
        parts.append(text[position : match.start()])
        parts.append(" " + " ".join(cjk_bigrams(match.group(0))) + " ")
        position = match.end()
    parts.append(text[position:])
    return " ".join("".join(parts).lower().split())
