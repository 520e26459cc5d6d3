"""A small deterministic embedder for tests that need *some* vectors, not meaning.

Feature hashing over what a text shares with another on the surface: whole words
(crudely stemmed: "drinks" is "drink"), character trigrams of words (so "hike" and
"hiking" are close, not equal), and for Chinese, Japanese and Korean runs each character
and each pair of characters (those scripts put no spaces between words). A short list of English function words weighs
little, so "what is the capital of France?" is not near "the cat is afraid of the
vacuum". Each feature lands in one dimension with a sign, both from a hash, so texts
with nothing in common sit near cosine 0 and the same words in any order or case at 1.

It knows no synonyms and no other language: tests that are about meaning (a
paraphrase finds the right memory, Chinese and English alike) use the real bundled
embedder, with ``@pytest.mark.embedding_quality`` (see ``tests/conftest.py``).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from companion_memory.ports import PLAIN_SIMILARITY

# The real embedder reads one 512-token window; this reads as much, roughly.
HEAD_CHARS = 2048

WORD_WEIGHT = 1.0
STOP_WEIGHT = 0.2
TRIGRAM_WEIGHT = 0.25
CJK_CHAR_WEIGHT = 0.5
CJK_PAIR_WEIGHT = 1.0

_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

STOP_WORDS = frozenset(
    _WORD.findall(
        """a an and are as at be but by can did do does for from had has have he her hers him his
        how i if in into is it its me my no not of on or our she so than that the their them
        then there they this to too up us was we were what when where which who why will with
        would you your"""
    )
)


@lru_cache(maxsize=65536)
def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
    return digest % dimensions, 1.0 if digest >> 63 else -1.0


def stem(word: str) -> str:
    """A crude English stem, so "drinks" and "drink", "trained" and "training" meet."""
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def features(text: str) -> list[tuple[str, float]]:
    """The weighted surface features of ``text``."""
    found: list[tuple[str, float]] = []
    for word in _WORD.findall(unicodedata.normalize("NFKC", text[:HEAD_CHARS]).casefold()):
        rest = word
        for run in _CJK.findall(word):
            rest = rest.replace(run, " ")
            found.extend(("c:" + char, CJK_CHAR_WEIGHT) for char in run)
            found.extend(("c:" + run[i : i + 2], CJK_PAIR_WEIGHT) for i in range(len(run) - 1))
        for part in rest.split():
            found.append(("w:" + stem(part), STOP_WEIGHT if part in STOP_WORDS else WORD_WEIGHT))
            if part not in STOP_WORDS and len(part) > 2:
                padded = f"<{part}>"
                found.extend(("t:" + padded[i : i + 3], TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return found


class HashEmbedder:
    """Deterministic unit vectors from hashed surface features; ``kind`` is ignored.
    ``HashEmbedder()`` (16 dimensions, model "test-hash") stands for another model than
    the default one in switching tests."""

    similarity_range = PLAIN_SIMILARITY

    def __init__(self, dimensions: int = 16, model: str = "test-hash") -> None:
        self.dimensions = dimensions
        self.model = model

    def vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for feature, weight in features(text) or [("", 1.0)]:
            slot, sign = _slot(feature, self.dimensions)
            vector[slot] += sign * weight
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:  # features that cancelled out exactly
            slot, sign = _slot("", self.dimensions)
            vector[slot], norm = sign, 1.0
        return [v / norm for v in vector]

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        return [self.vector(text) for text in texts]
