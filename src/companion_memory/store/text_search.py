"""The full-text and substring indexes of a table, as recall and search query them.

Memories and episodes are each indexed twice (migrations 0001, 0002, 0014): words
(FTS5 over ``search_text``, CJK spelled out as bigrams) and substrings (FTS5 trigrams over
``content``), each with its fts5vocab table. One ``TextIndex`` per table holds what the
two share: which query terms are worth scoring (the postings budget), the counts of
common terms kept between recalls, and the MATCH queries themselves. The caller says
which rows are live (its WHERE clause on the table, aliased ``r``).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..domain.search_text import match_expression, substring_expression, substring_forms, trigrams
from ..ports import Database, SqlValue
from .sql import chunks, placeholders

# At most this many matches are scored by a full-text query (see ``TextIndex.words``). 500
# keeps a words-only recall of 10k memories under 2 ms (p50) with LoCoMo recall unchanged
# (R@5 0.650 vs 0.654 at 1000, MRR 0.535 vs 0.533): bench/recall_latency.py, bench/locomo_recall.py.
POSTINGS_BUDGET = 500
# Counting a term's rows reads its whole posting list: a word in 15,000 of 100,000
# memories took 1 ms, and a recall asks for a dozen terms. The count of a term in more
# than this many rows is kept for _COMMON_TERM_SECONDS: past POSTINGS_BUDGET it only
# ranks the term behind rarer ones, which a few more rows do not change. A rarer term's
# count is cheap and read every time, so a new row's words are found at once.
_COMMON_TERM_ROWS = 2 * POSTINGS_BUDGET
_COMMON_TERM_SECONDS = 300.0
_common_terms: weakref.WeakKeyDictionary[Database, dict[tuple[str, str], tuple[int, float]]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class TextTables:
    """A table and its two indexes, with their vocabularies (names from the migrations)."""

    rows: str
    words: str
    substrings: str

    @property
    def words_vocab(self) -> str:
        return f"{self.words}_vocab"

    @property
    def substrings_vocab(self) -> str:
        return f"{self.substrings}_vocab"


MEMORY_TEXT = TextTables("memories", "memories_fts", "memories_substring")
EPISODE_TEXT = TextTables("episodes", "episodes_fts", "episodes_substring")


async def term_counts(db: Database, asked: Sequence[tuple[str, Sequence[str]]]) -> list[dict[str, int]]:
    """``TextIndex.term_frequencies`` of each (vocabulary, terms), in one read (on D1,
    each read is a round trip)."""
    now = time.monotonic()
    common = _common_terms.setdefault(db, {})
    found: list[dict[str, int]] = [{} for _ in asked]
    unknown: list[tuple[int, str]] = []
    for which, (vocabulary, terms) in enumerate(asked):
        for term in dict.fromkeys(terms):
            known = common.get((vocabulary, term))
            if known is not None and known[1] > now:
                found[which][term] = known[0]
            else:
                unknown.append((which, term))
    for part in chunks(unknown):
        by_asked: dict[int, list[str]] = {}
        for which, term in part:
            by_asked.setdefault(which, []).append(term)
        rows = await db.all(
            " UNION ALL ".join(
                f"SELECT {which} AS asked, term, doc FROM {asked[which][0]} WHERE term IN ({placeholders(len(terms))})"
                for which, terms in by_asked.items()
            ),
            tuple(t for terms in by_asked.values() for t in terms),
        )
        for row in rows:
            found[row["asked"]][row["term"]] = row["doc"]
            if row["doc"] > _COMMON_TERM_ROWS:
                common[(asked[row["asked"]][0], row["term"])] = (row["doc"], now + _COMMON_TERM_SECONDS)
    return found


async def word_counts(
    indexes: Sequence[TextIndex], terms: Sequence[str], needles: Mapping[str, Sequence[str]]
) -> list[dict[str, int]]:
    """``term_frequencies`` in each index's word index of the query ``terms`` and of the
    terms of the ``needles`` (``substring_needles``, each with its ``query_terms``): one
    read serves ``words`` and ``unmatched`` of every index (the indexes share one database)."""
    if not indexes:
        return []
    exact = [t for t in terms if not t.endswith("*")]
    wanted = list(dict.fromkeys([*exact, *(t for found in needles.values() for t in found)]))
    return await term_counts(indexes[0].db, [(index.tables.words_vocab, wanted) for index in indexes])


async def substring_counts(looked: Sequence[tuple[TextIndex, Sequence[str]]]) -> list[dict[str, int]]:
    """``term_frequencies`` in each index's substring index of the trigrams of its
    needles (of ``substrings``), in one read (the indexes share one database)."""
    if not looked:
        return []
    asked = [(index.tables.substrings_vocab, _trigrams_of(_forms(needles))) for index, needles in looked]
    return await term_counts(looked[0][0].db, asked)


def _forms(needles: Sequence[str]) -> dict[str, list[str]]:
    """Each form of the needles (``substring_forms``), with its trigrams."""
    return {form: trigrams(form) for form in substring_forms(list(needles))}


def _trigrams_of(forms: Mapping[str, list[str]]) -> list[str]:
    return sorted({g for grams in forms.values() for g in grams})


class TextIndex:
    def __init__(self, db: Database, tables: TextTables) -> None:
        self.db = db
        self.tables = tables

    async def term_frequencies(self, terms: Sequence[str], vocabulary: str | None = None) -> dict[str, int]:
        """How many rows (of any namespace and status) an index holds each term in, the
        word index unless ``vocabulary`` names the substring one; a term it lacks is left
        out. A common term's count may be a few minutes old."""
        return (await term_counts(self.db, [(vocabulary or self.tables.words_vocab, terms)]))[0]

    async def match(self, terms: Sequence[str]) -> str | None:
        """The MATCH expression of the word index for these query terms: the terms it
        has, rarest first while the rows they match stay within ``POSTINGS_BUDGET`` (the
        rarest one always), and the prefix terms. Scoring postings is the whole cost of
        the query, and a term common enough to blow the budget barely changes which rows
        come out on top."""
        return (await self._scored(terms))[0]

    async def _scored(self, terms: Sequence[str], counts: Mapping[str, int] | None = None) -> tuple[str | None, int]:
        """``match``'s expression, and how many rows hold its rarest term; ``counts``:
        ``word_counts`` of the terms, read already."""
        exact = [t for t in terms if not t.endswith("*")]
        frequency = counts if counts is not None else await self.term_frequencies(exact)
        kept: list[str] = []
        postings = 0
        for term in sorted((t for t in exact if t in frequency), key=frequency.__getitem__):
            if kept and postings + frequency[term] > POSTINGS_BUDGET:
                break
            kept.append(term)
            postings += frequency[term]
        rarest = frequency[kept[0]] if kept else 0
        return match_expression(kept + [t for t in terms if t.endswith("*")]), rarest

    async def words(
        self,
        terms: Sequence[str],
        where: str,
        params: Sequence[SqlValue],
        *,
        limit: int,
        counts: Mapping[str, int] | None = None,
    ) -> list[dict[str, Any]]:
        """id and bm25 ``rank`` of the rows ``r`` matching any of the terms and ``where``,
        best first (``counts``: ``word_counts`` of the terms, when read already).

        When even the rarest term is in more rows than ``POSTINGS_BUDGET``, only the newest
        rows are read, as many as hold about that many of its postings: every word of the
        query is common there (a year of messages says "camping" 8,000 times), so no order
        of all its rows is worth scoring them all, and the newest are the likelier to
        matter. At 1M episodes that took their word search from 110 to 23 ms (p95), and
        recall from 120 to 40 ms (bench/recall_split.py)."""
        expression, rarest = await self._scored(terms, counts)
        if expression is None:
            return []
        fts, rows = self.tables.words, self.tables.rows
        newest, after = "", ()  # type: tuple[str, tuple[SqlValue, ...]]
        if rarest > POSTINGS_BUDGET:
            found = await self.db.first(f"SELECT max(rowid) AS top FROM {rows}")
            top = int(found["top"] or 0) if found else 0
            newest, after = f" AND {fts}.rowid > ?", (top - top * POSTINGS_BUDGET // rarest,)
        return await self.db.all(
            f"SELECT r.id AS id, bm25({fts}) AS rank FROM {fts} JOIN {rows} r ON r.rowid = {fts}.rowid "
            f"WHERE {fts} MATCH ?{newest} AND {where} ORDER BY rank LIMIT ?",
            (expression, *after, *params, limit),
        )

    @staticmethod
    def unmatched(needles: Mapping[str, Sequence[str]], counts: Mapping[str, int]) -> list[str]:
        """The needles (``substring_needles`` of a query, each with its ``query_terms``)
        with a term the word index lacks, by its ``word_counts``: what only the substring
        index can find here (the index keeps one vocabulary for every namespace)."""
        return [needle for needle, terms in needles.items() if any(t not in counts for t in terms)]

    async def substrings(
        self,
        needles: Sequence[str],
        where: str,
        params: Sequence[SqlValue],
        *,
        limit: int,
        counts: Mapping[str, int] | None = None,
    ) -> list[dict[str, Any]]:
        """id and bm25 ``rank`` of the rows ``r`` whose content holds any of the needles
        and matching ``where``, best first (``counts``: ``substring_counts`` of the
        needles, when read already).

        A form of a needle with a trigram no row has cannot match and is not looked for;
        nor is one whose rarest trigram is in more than ``POSTINGS_BUDGET`` rows: a
        fragment that common picks out nothing, and scoring its matches would be the
        whole cost of the query.
        """
        forms = _forms(needles)
        frequency = (
            counts
            if counts is not None
            else await self.term_frequencies(_trigrams_of(forms), self.tables.substrings_vocab)
        )
        kept = [
            form
            for form, grams in forms.items()
            if all(g in frequency for g in grams) and min(frequency[g] for g in grams) <= POSTINGS_BUDGET
        ]
        expression = substring_expression(kept)
        if expression is None:
            return []
        fts, rows = self.tables.substrings, self.tables.rows
        return await self.db.all(
            f"SELECT r.id AS id, bm25({fts}) AS rank FROM {fts} JOIN {rows} r ON r.rowid = {fts}.rowid "
            f"WHERE {fts} MATCH ? AND {where} ORDER BY rank LIMIT ?",
            (expression, *params, limit),
        )
