"""How text meets the full-text index: the document form of a memory, the terms of a
query, and the token sets the recall gates compare.

FTS5's unicode61 tokenizer splits on spaces and punctuation, which leaves a Chinese
sentence as one long token that no two-character query could match. Spelling each
CJK run out as overlapping character bigrams ("我很怕黑" → "我很 很怕 怕黑") lets
"怕黑" match. Latin words are stemmed here (Snowball English: "hiking" → "hike") rather
than by the tokenizer, so that a query term is exactly the indexed term and its document
frequency can be looked up.

Codes, ids and fragments of words ("QW447" of "ZQW4471K") are no whole term of the word
index; the substring index (FTS5's trigram tokenizer over the content) finds them, and
``substring_needles`` picks the parts of a query it should look for.

What is embedded (a memory, a query) is first put in one form (``embedding_text``), so
that the spelling of a question ("Which city…?" or "which city…") cannot move its
similarity to a memory.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_]+", re.UNICODE)
_MAX_QUERY_TERMS = 32
# Runs of anything but spaces and CJK (which the word index already spells out as bigrams).
_SUBSTRING_RUN = re.compile(f"[^\\s{_CJK}]+")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
# The trigram tokenizer matches nothing shorter than one trigram.
MIN_SUBSTRING_CHARS = 3
_MAX_NEEDLES = 8
_MAX_NEEDLE_CHARS = 64
# Typographic quotes and dashes, which keyboards, input methods and editors swap for
# each other, in their ASCII forms (NFKC has already taken care of full-width ones).
_PUNCTUATION_FORMS = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)
_REPEATED_PUNCTUATION = re.compile(r"([^\w\s])\1+")
# Marks that end a sentence or a clause, when they end the text ("…live in?").
_TRAILING_PUNCTUATION = re.compile(r"[\s.?!,;:~\u3001\u3002]+$")
_SPACES = re.compile(r"\s+")
_LATIN_WORD = re.compile(r"[a-z0-9]+")
_STEMMER = snowballstemmer.stemmer("english")
# Words that match nearly every memory: they cost time and add nothing to a ranking.
_STOPWORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "again",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "don",
        "didn",
        "doesn",
        "isn",
        "wasn",
    ]
)


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    return _STEMMER.stemWord(word) if _LATIN_WORD.fullmatch(word) else word


def search_document(text: str) -> str:
    terms: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        if _CJK_RUN.fullmatch(token):
            # The last character also stands alone, so that every character of the run
            # starts some term and a one-character query ("黑"*) can find it.
            terms.extend(cjk_bigrams(token) + ([token[-1]] if len(token) > 1 else []))
        else:
            terms.append(stem(token))
    return " ".join(terms)


def query_terms(query: str) -> list[str]:
    """The distinct index terms of a query, in order. A lone CJK character ends in ``*``:
    it is matched as the start of an indexed bigram."""
    terms: dict[str, None] = {}
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", query).lower()):
        if _CJK_RUN.fullmatch(token):
            for gram in cjk_bigrams(token):
                terms.setdefault(gram + "*" if len(gram) == 1 else gram, None)
        elif token not in _STOPWORDS and (len(token) > 1 or token.isdigit()):
            terms.setdefault(stem(without_diacritics(token)), None)
        if len(terms) >= _MAX_QUERY_TERMS:
            break
    return list(terms)


def _latin(char: str) -> bool:
    return char <= "\u024f" or "\u1e00" <= char <= "\u1eff"


def without_diacritics(token: str) -> str:
    """A Latin letter without its marks ("café" → "cafe"), as the word index's tokenizer
    (unicode61, remove_diacritics 2) stores it: a query word keeping them would match nothing.
    Other scripts keep theirs, as the tokenizer does."""
    if token.isascii():
        return token
    folded = []
    for char in token:
        decomposed = unicodedata.normalize("NFD", char)
        folded.append(decomposed[0] if _latin(decomposed[0]) else char)
    return "".join(folded)


def match_expression(terms: list[str]) -> str | None:
    """An FTS5 MATCH expression that ORs the terms, each quoted, so that no user text is
    ever read as FTS5 syntax. None when there is nothing to search for."""
    quoted = [f'"{t[:-1]}"*' if t.endswith("*") else f'"{t}"' for t in terms]
    return " OR ".join(quoted) or None


def gate_tokens(text: str) -> set[str]:
    """Tokens for overlap checks: Latin words, and each CJK character on its own."""
    tokens: set[str] = set()
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).lower()):
        tokens.update(token if _CJK_RUN.fullmatch(token) else (token,))
    return tokens


def normalised(text: str) -> str:
    """The text with case, width, punctuation and spacing differences removed (dedupe key)."""
    return " ".join(_TOKEN.findall(unicodedata.normalize("NFKC", text).lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def substring_needles(query: str) -> list[str]:
    """The distinct fragments of a query the substring index may look for, in order:
    runs of characters that are neither spaces nor CJK, width-folded (NFKC), lower-cased
    and stripped of punctuation at both ends, of ``MIN_SUBSTRING_CHARS`` or more. A run
    made only of stopwords ("which") is no fragment of anything worth finding."""
    needles: dict[str, None] = {}
    for run in _SUBSTRING_RUN.findall(unicodedata.normalize("NFKC", query).lower()):
        needle = _EDGE_PUNCTUATION.sub("", run)[:_MAX_NEEDLE_CHARS]
        if len(needle) >= MIN_SUBSTRING_CHARS and query_terms(needle):
            needles.setdefault(needle, None)
        if len(needles) >= _MAX_NEEDLES:
            break
    return list(needles)


def substring_forms(needles: list[str]) -> list[str]:
    """Each needle, and its full-width form, which an input method in full-width mode
    writes ("ＱＷ４４７") and the trigram tokenizer does not fold."""
    forms: dict[str, None] = {}
    for needle in needles:
        forms.setdefault(needle, None)
        forms.setdefault("".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in needle), None)
    return list(forms)


def trigrams(text: str) -> list[str]:
    return [text[i : i + MIN_SUBSTRING_CHARS] for i in range(len(text) - MIN_SUBSTRING_CHARS + 1)]


def substring_expression(forms: list[str]) -> str | None:
    """An FTS5 MATCH expression for the substring index: any of the forms, each one
    quoted string, so that no user text is ever read as FTS5 syntax."""
    return " OR ".join('"' + form.replace('"', '""') + '"' for form in forms) or None


def embedding_text(text: str) -> str:
    """The form in which a memory or a query is embedded: width-folded (NFKC), lower
    case, one form of each quote and dash, a repeated mark as one ("??" → "?"), the
    marks that end the text dropped (unless nothing else is left), spaces collapsed.
    Spelling is not meaning: a capital letter or a question mark cannot move a
    similarity across the floor."""
    folded = unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION_FORMS)
    folded = _SPACES.sub(" ", _REPEATED_PUNCTUATION.sub(r"\1", folded)).strip()
    return _TRAILING_PUNCTUATION.sub("", folded) or folded


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` (both as the caller cased them): a Latin name must
    stand as a word ("art" is not in "party"); CJK needs no spaces."""
    if re.search(r"[A-Za-z0-9]", name):
        return re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text) is not None
    return name in text
