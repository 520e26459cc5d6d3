"""A fake of a Cloudflare Vectorize V2 binding (``env.VECTORIZE``), in pure Python.

It reproduces the Worker binding API (workerd ``cloudflare-internal:vectorize-api``,
``@cloudflare/workers-types`` ``Vectorize``) as a Python Worker sees it through Pyodide:

- ``upsert(vectors)`` / ``insert(vectors)`` → ``{mutationId}``; ``insert`` keeps existing
  ids, ``upsert`` replaces a vector in full (values and metadata are not merged).
- ``query(vector, {topK=5, returnValues=False, returnMetadata="none", filter, namespace})``
  → ``{count, matches: [{id, score, values?, metadata?, namespace?}]}``, best first.
  ``returnMetadata`` booleans are accepted and mapped to "all"/"none" like workerd does.
  ``queryById(id, options)`` queries with a stored vector's values.
- ``getByIds(ids)`` → ``[{id, values, metadata, namespace?}]``; ``deleteByIds(ids)`` →
  ``{mutationId}``; ``describe()`` → ``{vectorCount, dimensions, processedUpToDatetime,
  processedUpToMutation}``.
- Scores are cosine similarity (-1 … 1, 1 is identical). Values are stored as float32,
  as Vectorize stores them, so returned values show float32 rounding.
- Metadata filtering: ``$eq $ne $in $nin $lt $lte $gt $gte``, implicit ``$eq`` for a bare
  value, several keys AND-ed, read and evaluated by ``companion_memory.vector_filter`` (as
  the local index evaluates it); dotted keys address nested properties. As in Vectorize, only
  *metadata indexes* can be filtered on, and a vector is only in a metadata index if it was
  written after the index was created; string values are indexed (and returned with
  ``returnMetadata: "indexed"``) truncated to their first 64 bytes. ``metadata_indexes=None``
  is a test convenience that treats every top-level property as indexed.

Limits enforced, with the error text the binding throws (``FakeJsException``, surfacing in
Python as ``Error: <message>``). Texts marked *measured* were reported from production;
the others follow the same ``<OP>_ERROR (code = N): ...`` format with an assumed code/wording:

- topK > 100 → ``VECTOR_QUERY_ERROR (code = 40025): max top K is 100, but got N`` (measured
  "max top K is 100"); topK > 50 with returnValues or returnMetadata "all" → *measured*
  "VECTOR_QUERY_ERROR (code = 40025): with returnValues=true or returnMetadata=all, max top K
  is 50, but got N; for a top K up to 100, retry with returnValues=false and
  returnMetadata=indexed". (The docs say 20 there; V2 indexes answer 50.)
- query vector width → *measured* ``VECTOR_QUERY_ERROR (code = 40006): invalid query vector,
  expected D dimensions, and got N dimensions``.
- getByIds > 20 ids / deleteByIds > 100 ids → *measured* ``VECTOR_GET_ERROR`` /
  ``VECTOR_DELETE_ERROR (code = 40007): too many ids in payload; max id count is 20|100, got N``.
- id > 64 bytes → *measured* ``VECTOR_UPSERT_ERROR (code = 40008): id too long; max is 64
  bytes, got N bytes``; wrong vector width, metadata over 10 KiB, more than 1000 vectors in one
  call (the documented Workers batch limit) → assumed wording.

Mutations: the real service applies them asynchronously (typically seconds later; a query
right after an upsert may not see it, and ``vectorCount`` lags). By default this fake
applies them at once; ``eventual=True`` queues them until ``process_mutations()``.
"""

from __future__ import annotations

import array
import copy
import json
import math
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from companion_memory import vector_filter
from tests.fakes.d1 import FakeJsException, FakeJsProxy, _wrap

ResultStyle = Literal["jsproxy", "python"]
MetadataIndexType = Literal["string", "number", "boolean"]

MAX_TOP_K = 100
MAX_TOP_K_WITH_VALUES_OR_ALL_METADATA = 50
MAX_UPSERT_BATCH = 1000
MAX_GET_IDS = 20
MAX_DELETE_IDS = 100
MAX_ID_BYTES = 64
MAX_NAMESPACE_BYTES = 64
MAX_METADATA_BYTES = 10 * 1024
MAX_FILTER_BYTES = 2048
MAX_METADATA_INDEXES = 10
INDEXED_STRING_BYTES = 64
DEFAULT_TOP_K = 5

_MISSING = object()


def _py(value: Any) -> Any:
    if isinstance(value, FakeJsProxy):
        return value.to_py()
    return copy.deepcopy(value)


def _error(op: str, code: int, message: str) -> FakeJsException:
    return FakeJsException(f"{op}_ERROR (code = {code}): {message}")


def _float32(values: list[Any]) -> list[float]:
    return array.array("f", values).tolist()


def _truncate_utf8(text: str, limit: int) -> str:
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode("utf-8", errors="ignore")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _lookup(metadata: Mapping[str, Any], path: str) -> Any:
    if path in metadata:
        return metadata[path]
    current: Any = metadata
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _validate_filter(filter: Any) -> vector_filter.Conditions:
    def bad(reason: str) -> FakeJsException:
        return _error("VECTOR_QUERY", 40027, f"invalid filter: {reason}")

    if not isinstance(filter, dict) or not filter:
        raise bad("filter must be a non-empty object")
    try:
        return vector_filter.parse(filter)
    except ValueError as error:
        raise bad(str(error)) from None


class FakeVectorize:
    """The fake ``env.VECTORIZE`` (a V2 index with the cosine metric)."""

    def __init__(
        self,
        dimensions: int,
        *,
        metadata_indexes: Mapping[str, MetadataIndexType] | None = None,
        result_style: ResultStyle = "jsproxy",
        eventual: bool = False,
    ) -> None:
        self.dimensions = dimensions
        self.metric = "cosine"
        self.result_style = result_style
        self.eventual = eventual
        self.metadata_indexes: dict[str, MetadataIndexType] | None = (
            None if metadata_indexes is None else dict(metadata_indexes)
        )
        if self.metadata_indexes is not None and len(self.metadata_indexes) > MAX_METADATA_INDEXES:
            raise ValueError(f"Vectorize allows at most {MAX_METADATA_INDEXES} metadata indexes")
        # id -> {"id", "values", "metadata", "namespace"?, "_indexed": {property: value}}
        self.vectors: dict[str, dict[str, Any]] = {}
        self.pending: list[tuple[str, Callable[[], None]]] = []
        self.processed_mutation: str | None = None
        self.processed_at: str | None = None
        # Every binding call as (method, size of its payload): lets tests check chunking.
        self.calls: list[tuple[str, int]] = []

    # -- the binding API -------------------------------------------------------------
    async def describe(self) -> Any:
        self.calls.append(("describe", 0))
        return self._out(
            {
                "vectorCount": len(self.vectors),
                "dimensions": self.dimensions,
                "processedUpToDatetime": self.processed_at,
                "processedUpToMutation": self.processed_mutation,
            }
        )

    async def upsert(self, vectors: Any) -> Any:
        return self._write("upsert", vectors)

    async def insert(self, vectors: Any) -> Any:
        return self._write("insert", vectors)

    async def query(self, vector: Any, options: Any = None) -> Any:
        values = _py(vector)
        if isinstance(values, array.array):
            values = values.tolist()
        self.calls.append(("query", 1))
        if not isinstance(values, list) or len(values) != self.dimensions:
            got = len(values) if isinstance(values, list) else 0
            raise _error(
                "VECTOR_QUERY",
                40006,
                f"invalid query vector, expected {self.dimensions} dimensions, and got {got} dimensions",
            )
        return self._out(self._query(_float32(values), _py(options) or {}))

    async def queryById(self, vectorId: str, options: Any = None) -> Any:
        self.calls.append(("queryById", 1))
        stored = self.vectors.get(vectorId)
        if stored is None:
            return self._out({"count": 0, "matches": []})
        return self._out(self._query(stored["values"], _py(options) or {}))

    async def getByIds(self, ids: Any) -> Any:
        ids = self._ids("VECTOR_GET", ids, MAX_GET_IDS)
        self.calls.append(("getByIds", len(ids)))
        found = []
        for id_ in dict.fromkeys(ids):
            stored = self.vectors.get(id_)
            if stored is not None:
                found.append(self._public(stored, values=True, metadata="all"))
        return self._out(found)

    async def deleteByIds(self, ids: Any) -> Any:
        ids = self._ids("VECTOR_DELETE", ids, MAX_DELETE_IDS)
        self.calls.append(("deleteByIds", len(ids)))

        def apply() -> None:
            for id_ in ids:
                self.vectors.pop(id_, None)

        return self._out({"mutationId": self._mutation(apply)})

    # -- test helpers (not part of the binding) -----------------------------------------
    def create_metadata_index(self, property_name: str, index_type: MetadataIndexType) -> None:
        """``wrangler vectorize create-metadata-index``: covers vectors written from now on."""
        if self.metadata_indexes is None:
            self.metadata_indexes = {}
        if len(self.metadata_indexes) >= MAX_METADATA_INDEXES and property_name not in self.metadata_indexes:
            raise ValueError(f"Vectorize allows at most {MAX_METADATA_INDEXES} metadata indexes")
        self.metadata_indexes[property_name] = index_type

    def process_mutations(self) -> None:
        """Apply queued mutations (``eventual=True``), as the service does a few seconds later."""
        pending, self.pending = self.pending, []
        for mutation_id, apply in pending:
            apply()
            self._processed(mutation_id)

    # -- internals -----------------------------------------------------------------------
    def _out(self, value: Any) -> Any:
        if self.result_style == "jsproxy":
            return _wrap(value)
        return copy.deepcopy(value)

    def _processed(self, mutation_id: str) -> None:
        self.processed_mutation = mutation_id
        self.processed_at = datetime.now(UTC).isoformat()

    def _mutation(self, apply: Callable[[], None]) -> str:
        mutation_id = str(uuid.uuid4())
        if self.eventual:
            self.pending.append((mutation_id, apply))
        else:
            apply()
            self._processed(mutation_id)
        return mutation_id

    def _ids(self, op: str, ids: Any, limit: int) -> list[str]:
        ids = _py(ids)
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise _error(op, 40007, "ids must be an array of strings")
        if len(ids) > limit:
            raise _error(op, 40007, f"too many ids in payload; max id count is {limit}, got {len(ids)}")
        return ids

    def _indexed(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """The metadata-index entries a vector gets when written (type-checked, truncated)."""
        indexes = self.metadata_indexes
        names = list(metadata) if indexes is None else list(indexes)
        entries: dict[str, Any] = {}
        for name in names:
            value = _lookup(metadata, name)
            kind = vector_filter.kind(value) if value is not _MISSING else None
            if kind is None or (indexes is not None and indexes[name] != kind):
                continue
            entries[name] = _truncate_utf8(value, INDEXED_STRING_BYTES) if kind == "string" else value
        return entries

    def _write(self, op: str, vectors: Any) -> Any:
        name = "VECTOR_UPSERT" if op == "upsert" else "VECTOR_INSERT"
        vectors = _py(vectors)
        if not isinstance(vectors, list):
            raise _error(name, 40023, "failed to parse vectors request")
        self.calls.append((op, len(vectors)))
        if len(vectors) > MAX_UPSERT_BATCH:
            raise _error(name, 40005, f"too many vectors in payload; max is {MAX_UPSERT_BATCH}, got {len(vectors)}")
        prepared = []
        for vector in vectors:
            if not isinstance(vector, dict) or not isinstance(vector.get("id"), str) or not vector["id"]:
                raise _error(name, 40023, "failed to parse vectors request: every vector needs a string id")
            id_ = vector["id"]
            size = len(id_.encode())
            if size > MAX_ID_BYTES:
                raise _error(name, 40008, f"id too long; max is {MAX_ID_BYTES} bytes, got {size} bytes")
            values = vector.get("values")
            if isinstance(values, array.array):
                values = values.tolist()
            if not isinstance(values, list) or not all(_is_number(v) for v in values):
                raise _error(name, 40023, f"failed to parse vectors request: invalid values for id {id_}")
            if len(values) != self.dimensions:
                raise _error(
                    name,
                    40012,
                    f"invalid vector for id {id_}: expected {self.dimensions} dimensions, got {len(values)}",
                )
            if not all(math.isfinite(v) for v in values):
                raise _error(name, 40023, f"failed to parse vectors request: non-finite value for id {id_}")
            metadata = vector.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise _error(name, 40023, f"failed to parse vectors request: invalid metadata for id {id_}")
            meta_size = len(json.dumps(metadata, separators=(",", ":"), ensure_ascii=False).encode())
            if meta_size > MAX_METADATA_BYTES:
                raise _error(
                    name, 40011, f"metadata too large for id {id_}; max is {MAX_METADATA_BYTES} bytes, got {meta_size}"
                )
            namespace = vector.get("namespace")
            if namespace is not None and (
                not isinstance(namespace, str) or len(namespace.encode()) > MAX_NAMESPACE_BYTES
            ):
                raise _error(name, 40009, f"namespace too long for id {id_}; max is {MAX_NAMESPACE_BYTES} bytes")
            stored: dict[str, Any] = {"id": id_, "values": _float32(values), "metadata": metadata}
            if namespace is not None:
                stored["namespace"] = namespace
            stored["_indexed"] = self._indexed(metadata)
            prepared.append(stored)

        def apply() -> None:
            for stored in prepared:
                if op == "insert" and stored["id"] in self.vectors:
                    continue
                self.vectors[stored["id"]] = stored

        return self._out({"mutationId": self._mutation(apply)})

    def _query(self, query: list[float], options: dict[str, Any]) -> dict[str, Any]:
        top_k = options.get("topK", DEFAULT_TOP_K)
        return_values = bool(options.get("returnValues", False))
        mode = options.get("returnMetadata", "none")
        if isinstance(mode, bool):  # workerd maps booleans for backward compatibility
            mode = "all" if mode else "none"
        if mode is None:
            mode = "none"
        if mode not in ("none", "indexed", "all"):
            raise FakeJsException(
                f'Invalid returnMetadata option. Expected: true, false, "none", "indexed" or "all"; got: {mode}'
            )
        if not _is_number(top_k) or top_k != int(top_k) or top_k < 1:
            raise _error("VECTOR_QUERY", 40025, f"invalid top K {top_k}")
        top_k = int(top_k)
        if (return_values or mode == "all") and top_k > MAX_TOP_K_WITH_VALUES_OR_ALL_METADATA:
            raise _error(
                "VECTOR_QUERY",
                40025,
                f"with returnValues=true or returnMetadata=all, max top K is "
                f"{MAX_TOP_K_WITH_VALUES_OR_ALL_METADATA}, but got {top_k}; for a top K up to "
                f"{MAX_TOP_K}, retry with returnValues=false and returnMetadata=indexed",
            )
        if top_k > MAX_TOP_K:
            raise _error("VECTOR_QUERY", 40025, f"max top K is {MAX_TOP_K}, but got {top_k}")
        conditions = _validate_filter(options["filter"]) if options.get("filter") is not None else {}
        namespace = options.get("namespace")

        scored = []
        for stored in self.vectors.values():
            if namespace is not None and stored.get("namespace") != namespace:
                continue
            if not vector_filter.passes(conditions, stored["_indexed"]):
                continue
            scored.append((_cosine(query, stored["values"]), stored))
        scored.sort(key=lambda pair: (-pair[0], pair[1]["id"]))
        matches = []
        for score, stored in scored[:top_k]:
            match = self._public(stored, values=return_values, metadata=mode)
            match["score"] = score
            matches.append(match)
        return {"count": len(matches), "matches": matches}

    def _public(self, stored: dict[str, Any], *, values: bool, metadata: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": stored["id"]}
        if "namespace" in stored:
            out["namespace"] = stored["namespace"]
        if values:
            out["values"] = list(stored["values"])
        if metadata == "all":
            out["metadata"] = copy.deepcopy(stored["metadata"])
        elif metadata == "indexed":
            out["metadata"] = dict(stored["_indexed"])
        return out


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
