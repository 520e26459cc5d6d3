"""Recall: the few memories that matter for a query.

Three channels find candidates — the vector index (meaning), the full-text index
(words, CJK bigrams) and, for fragments no word matches (codes, ids, parts of words), the
substring index — and reciprocal-rank fusion merges them. The pool is cut to the
best ``MEMORY_FILTER_MAX_CANDIDATES``, reranked when a reranker is configured, then
passed through the gates: nothing that repeats a precious row, a floor on the raw
score, then each hit weighed by its learned importance and freshness (domain/weight.py)
and recently injected memories ranked lower. Of two live memories that contradict each
other and wait for the owner's decision, only the newer is returned, flagged. Cold
memories, and instant ones past their waking hours, rest (domain/layers.py): search
finds them, recall does not, except an asleep instant memory that the query names.
Recall (not search) records what it injected, which revives an instant memory.

A query that names a person (memory/people/names.py) is searched under their other names too,
so "my sister", "Ana" and "安娜" find the same memories.

Recall in a namespace also sees the memories approved-shared into it (memory/shares.py),
and may be asked to look in more namespaces at once: every channel reads them all, so
their candidates meet in one fusion and one ranking, and each hit says where it lives
(and, for a shared one, through which share).

Episodes (what was said, memory/episode_recall.py) are ranked in the same ranking: each
channel asks the memories and the episodes, and merges what both answer by the same
measure (cosine, bm25) before the fusion. An episode weighs less than any memory, so a
curated memory outranks an episode of equal relevance; an episode that is the evidence of
a returned memory is not returned beside it, nor one the prompt holds already (the
conversation's own turns, ``in_prompt``).

The modules, in the order a query goes through them:

- ``pipeline``: ``Recall``, which runs the steps below and answers a ``RecallResult``.
- ``reach``: where one recall looks (namespaces, shares, types, episodes) and what it may return.
- ``channels``: the vector, full-text and substring channels.
- ``ranking``: reciprocal-rank fusion into one pool, and the reranker.
- ``relations``: one hop along relation edges, and contradicting memories.
- ``rows``: the memories and episodes one recall reads, each once, whichever step asks.
- ``gates``: what rests, what repeats a precious row, the floors, the weights and decay.
- ``accounting``: what recall records of the memories and episodes it injected.
- ``hits``: the hits and the account of how recall reached them.
"""
