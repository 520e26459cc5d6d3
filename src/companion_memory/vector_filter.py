"""The VectorIndex port's metadata filter, Vectorize's language, read and evaluated in one place.

The local index evaluates a filter here, and so does the tests' fake of the Vectorize
binding; the Cloudflare adapter reads it here and sends it to the binding, which
evaluates it. So a filter one runtime takes, the other takes, and both pass the same rows.

A filter maps a metadata key to a condition, the conditions AND-ed: a bare value (``$eq``),
or operators: ``$eq $ne $lt $lte $gt $gte`` take a string, number, boolean or null, ``$in
$nin`` a list of strings, numbers or booleans. Values compare as JSON does (true is not 1,
1 is 1.0). A key a vector lacks equals nothing but null, is in no list, passes ``$ne`` and
``$nin``, and is neither less nor greater than anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

VALUE_OPERATORS = frozenset({"$eq", "$ne", "$lt", "$lte", "$gt", "$gte"})
LIST_OPERATORS = frozenset({"$in", "$nin"})
OPERATORS = VALUE_OPERATORS | LIST_OPERATORS
# Vectorize's metadata filtering reference: a filter's compact JSON is under 2048 bytes,
# and a key at most 512 characters, without '$' at its start or '"' in it.
MAX_FILTER_BYTES = 2048
MAX_KEY_CHARS = 512

# Key → {operator: operand}, each bare value read as $eq.
Conditions = dict[str, dict[str, Any]]


def kind(value: Any) -> str | None:
    """The JSON kind of a value a filter can name, None for any other."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else None


def to_json(filter: Mapping[str, Any]) -> dict[str, Any]:
    """The filter as Vectorize takes it: plain objects and lists, as it was written."""
    return {
        key: {op: list(x) if op in LIST_OPERATORS else x for op, x in value.items()}
        if isinstance(value, Mapping)
        else value
        for key, value in filter.items()
    }


def parse(filter: Mapping[str, Any]) -> Conditions:
    """The filter's conditions; ``ValueError``, saying what is wrong, for one Vectorize refuses."""
    conditions: Conditions = {}
    for key, value in filter.items():
        if not isinstance(key, str) or not key or key.startswith("$") or '"' in key or len(key) > MAX_KEY_CHARS:
            raise ValueError(f"invalid filter key {key!r}")
        conditions[key] = {"$eq": value} if value is None or kind(value) else _condition(key, value)
    size = len(json.dumps(to_json(filter), separators=(",", ":"), ensure_ascii=False).encode())
    if size >= MAX_FILTER_BYTES:
        raise ValueError(f"filter is {size} bytes of JSON; Vectorize allows less than {MAX_FILTER_BYTES}")
    return conditions


def _condition(key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"filter {key!r}: a condition is a value or operators, got {value!r}")
    condition: dict[str, Any] = {}
    for op, operand in value.items():
        if op in LIST_OPERATORS:
            if isinstance(operand, (str, bytes)) or not isinstance(operand, Sequence) or not all(map(kind, operand)):
                raise ValueError(f"filter {key!r}: {op} takes a list of strings, numbers or booleans")
            condition[op] = list(operand)
        elif op in VALUE_OPERATORS:
            if operand is not None and kind(operand) is None:
                raise ValueError(f"filter {key!r}: {op} takes a string, number, boolean or null")
            condition[op] = operand
        else:
            raise ValueError(f"filter {key!r}: unsupported operator {op!r} (Vectorize has {sorted(OPERATORS)})")
    return condition


def holds(op: str, operand: Any, value: Any) -> bool:
    """One condition on one value; ``value`` is None when the vector lacks the key."""
    if op in ("$eq", "$ne"):
        equal = value is None if operand is None else _same(value, operand)
        return equal == (op == "$eq")
    if op in LIST_OPERATORS:
        return any(_same(value, item) for item in operand) == (op == "$in")
    value_kind = kind(value)
    if value_kind not in ("number", "string") or value_kind != kind(operand):
        return False
    if op == "$lt":
        return bool(value < operand)
    if op == "$lte":
        return bool(value <= operand)
    if op == "$gt":
        return bool(value > operand)
    return bool(value >= operand)


def passes(conditions: Conditions, metadata: Mapping[str, Any]) -> bool:
    """Whether a vector with this metadata passes every condition."""
    return all(
        holds(op, operand, metadata.get(key))
        for key, condition in conditions.items()
        for op, operand in condition.items()
    )


def _same(value: Any, operand: Any) -> bool:
    return kind(value) == kind(operand) and value == operand
