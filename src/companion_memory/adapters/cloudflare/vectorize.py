"""The VectorIndex port over a Cloudflare Vectorize (V2) binding (``env.VECTORIZE``).

What the binding allows, and so what this adapter respects (sources in the docstrings of
the constants; "measured" means the service's own error text, seen in production):

- ``upsert`` takes at most 1000 vectors per call from a Worker; ids are at most 64 bytes;
  metadata is at most 10 KiB per vector; ``values`` must have the index's dimensions.
- ``query`` returns at most 100 matches with ``returnValues: false`` and
  ``returnMetadata: "none" | "indexed"``, and fewer with ``returnValues: true`` or
  ``returnMetadata: "all"`` (the docs say 20; V2 indexes answer 50). We always ask for
  ``"indexed"``: the filter keys the mirror uses (namespace, status, type, kind, pinned)
  must be metadata indexes anyway for the filter to work, so they come back at no cost
  and ``top_k`` can go to 100.
- ``getByIds`` takes at most 20 ids per call, ``deleteByIds`` at most 100.
- Mutations are asynchronous: ``upsert``/``deleteByIds`` return ``{mutationId}`` and the
  change becomes visible to ``query`` (and to ``describe().vectorCount``) seconds later.
  The mirror tolerates this: the database, not the index, is the source of truth.

Values cross into JS only through ``ffi``; results come back through ``ffi.to_py``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NoReturn, TypeVar

from ... import vector_filter
from ...ports import VECTOR_QUERY_MAX_TOP_K, VectorFilterValue, VectorIndexError, VectorMatch, VectorRecord
from . import ffi

# developers.cloudflare.com/vectorize/platform/limits: "Maximum upsert batch size (per
# batch): 1000 (Workers) / 5000 (HTTP API)".
MAX_UPSERT_BATCH = 1000
# Measured: "VECTOR_GET_ERROR (code = 40007): too many ids in payload; max id count is 20".
MAX_GET_IDS = 20
# Measured: "VECTOR_DELETE_ERROR (code = 40007): too many ids in payload; max id count is 100".
MAX_DELETE_IDS = 100
# Limits page: "Maximum returned results (topK) without values and metadata: 100"; the
# service's own hint says the same holds for returnMetadata="indexed" ("for a top K up to
# 100, retry with returnValues=false and returnMetadata=indexed").
MAX_TOP_K = VECTOR_QUERY_MAX_TOP_K
# (With returnValues=true or returnMetadata="all" the cap is lower: 20 in the docs and on V1
# indexes, 50 on V2 indexes, "VECTOR_QUERY_ERROR (code = 40025): ... max top K is 50, but got
# 60". This adapter never asks for either, so it never meets that cap.)
# Limits page: "Maximum vector ID length: 64 bytes"; "Metadata per vector: 10KiB".
MAX_ID_BYTES = 64
MAX_METADATA_BYTES = 10 * 1024

QUERY_METADATA_MODE = "indexed"
_SCALAR = (str, int, float, bool)

T = TypeVar("T")


class VectorizeError(VectorIndexError):
    """The Vectorize binding refused an operation (``VECTOR_<OP>_ERROR (code = N): ...``)
    or failed in some other way (the binding's own error is the ``__cause__``)."""


def _raise_translated(error: Exception) -> NoReturn:
    # Failures reach Python as JsException("Error: VECTOR_QUERY_ERROR (code = 40025): ...").
    # Anything else the binding throws is an index failure all the same: the port raises
    # VectorIndexError and nothing else.
    message = str(error).removeprefix("Error: ")
    if "VECTOR_" not in message and "INDEX_GET" not in message:
        message = f"Vectorize: {type(error).__name__}: {message or 'no detail'}"
    raise VectorizeError(message) from error


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _metadata(record: VectorRecord) -> dict[str, Any]:
    metadata = dict(record.metadata)
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"vector {record.id}: metadata keys must be non-empty strings, got {key!r}")
        if not isinstance(value, _SCALAR):
            raise ValueError(f"vector {record.id}: metadata {key!r} must be str, number or bool, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"vector {record.id}: metadata {key!r} is not a finite number")
    size = len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"vector {record.id}: metadata is {size} bytes; Vectorize allows {MAX_METADATA_BYTES}")
    return metadata


class VectorizeIndex:
    """Implements ``ports.VectorIndex`` on a Vectorize binding object (``self.env.VECTORIZE``)."""

    def __init__(self, binding: Any, *, dimensions: int) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be positive")
        self._binding = binding
        self.dimensions = dimensions
        # The id of the last mutation sent; ``describe().processedUpToMutation`` catches up with it.
        self.last_mutation_id: str | None = None

    def _values(self, id_: str, values: Sequence[float]) -> list[float]:
        if len(values) != self.dimensions:
            raise ValueError(f"vector {id_} has {len(values)} dimensions, the index has {self.dimensions}")
        out = [float(v) for v in values]
        if not all(math.isfinite(v) for v in out):
            raise ValueError(f"vector {id_} has a value that is not a finite number")
        return out

    def _vector(self, record: VectorRecord) -> dict[str, Any]:
        if not isinstance(record.id, str) or not record.id:
            raise ValueError(f"vector ids must be non-empty strings, got {record.id!r}")
        size = len(record.id.encode())
        if size > MAX_ID_BYTES:
            raise ValueError(f"vector id {record.id!r} is {size} bytes; Vectorize allows {MAX_ID_BYTES}")
        vector: dict[str, Any] = {"id": record.id, "values": self._values(record.id, record.values)}
        metadata = _metadata(record)
        if metadata:
            vector["metadata"] = metadata
        return vector

    async def _mutate(self, method: str, payload: list[Any]) -> None:
        try:
            result = ffi.to_py(await getattr(self._binding, method)(ffi.to_js(payload)))
        except Exception as error:  # noqa: BLE001 - whatever the binding throws is translated to our errors
            _raise_translated(error)
        if isinstance(result, dict) and result.get("mutationId") is not None:
            self.last_mutation_id = str(result["mutationId"])

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        # Validate everything before sending anything; within a call the last record for an
        # id wins, as it would across calls.
        vectors = list({record.id: self._vector(record) for record in records}.values())
        for chunk in _chunks(vectors, MAX_UPSERT_BATCH):
            await self._mutate("upsert", list(chunk))

    async def query(
        self, vector: Sequence[float], *, top_k: int, filter: Mapping[str, VectorFilterValue] | None = None
    ) -> list[VectorMatch]:
        if top_k <= 0:
            return []
        values = self._values("(query)", vector)
        options: dict[str, Any] = {
            "topK": min(int(top_k), MAX_TOP_K),
            "returnValues": False,
            "returnMetadata": QUERY_METADATA_MODE,
        }
        if filter:
            # Read here, so that a filter Vectorize would refuse fails before any call, as
            # locally; evaluated by the binding.
            vector_filter.parse(filter)
            options["filter"] = vector_filter.to_json(filter)
        try:
            result = ffi.to_py(await self._binding.query(ffi.to_js(values), ffi.to_js(options)))
        except Exception as error:  # noqa: BLE001 - whatever the binding throws is translated to our errors
            _raise_translated(error)
        matches = (result or {}).get("matches") or []
        return [
            VectorMatch(id=str(m["id"]), score=float(m["score"]), metadata=dict(m.get("metadata") or {}))
            for m in matches
        ]

    async def get(self, ids: Sequence[str]) -> list[VectorRecord]:
        wanted = _unique(ids)
        found: dict[str, VectorRecord] = {}
        for chunk in _chunks(wanted, MAX_GET_IDS):
            try:
                vectors = ffi.to_py(await self._binding.getByIds(ffi.to_js(list(chunk))))
            except Exception as error:  # noqa: BLE001 - whatever the binding throws is translated to our errors
                _raise_translated(error)
            for v in vectors or []:
                found[str(v["id"])] = VectorRecord(
                    id=str(v["id"]),
                    values=[float(x) for x in v.get("values") or []],
                    metadata=dict(v.get("metadata") or {}),
                )
        return [found[i] for i in wanted if i in found]

    async def delete(self, ids: Sequence[str]) -> None:
        for chunk in _chunks(_unique(ids), MAX_DELETE_IDS):
            await self._mutate("deleteByIds", list(chunk))

    async def count(self) -> int:
        """``describe().vectorCount``: eventually consistent, it lags recent mutations."""
        try:
            info = ffi.to_py(await self._binding.describe()) or {}
        except Exception as error:  # noqa: BLE001 - whatever the binding throws is translated to our errors
            _raise_translated(error)
        count = info.get("vectorCount")
        if count is None:  # V1 indexes (and some older type definitions) spell it vectorsCount
            count = info.get("vectorsCount", 0)
        return int(count or 0)
