"""The local vector index's metadata, a column per key, and Vectorize's metadata filter
over it: one mask over every row at once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...vector_filter import Conditions, holds, passes


def grown(array: np.ndarray, capacity: int) -> np.ndarray:
    """``array`` at the head of a zeroed one of ``capacity`` (a row past the stored ones
    has no key, no value and passes no filter)."""
    bigger = np.zeros(capacity, dtype=array.dtype)
    bigger[: array.size] = array
    return bigger


class MetadataColumn:
    """One metadata key over every position: a code per row into its distinct values.
    Code 0 is "absent", so a filter is one lookup per distinct value, then one gather."""

    def __init__(self, capacity: int) -> None:
        self.codes = np.zeros(capacity, dtype=np.int32)
        self.values: list[Any] = [None]
        # Typed, or True and 1 would share a code.
        self._code: dict[tuple[type, Any], int] = {}

    def code(self, value: Any) -> int:
        if value is None:
            return 0
        key = (type(value), value)
        code = self._code.get(key)
        if code is None:
            code = self._code[key] = len(self.values)
            self.values.append(value)
        return code

    def grow(self, capacity: int) -> None:
        self.codes = grown(self.codes, capacity)

    def where(self, op: str, operand: Any, size: int) -> np.ndarray:
        table = np.fromiter((holds(op, operand, v) for v in self.values), dtype=bool, count=len(self.values))
        return table[self.codes[:size]]


def filter_mask(columns: Mapping[str, MetadataColumn], conditions: Conditions, size: int) -> np.ndarray:
    """Which of the first ``size`` rows pass a filter's ``conditions`` (a key no row has:
    a column of absent values)."""
    mask = np.ones(size, dtype=bool)
    for key, condition in conditions.items():
        column = columns.get(key) or MetadataColumn(size)
        for op, operand in condition.items():
            mask &= column.where(op, operand, size)
    return mask


class FilterMask:
    """A filter's mask over the index's capacity, and how many rows pass it, kept up to
    date row by row as rows are put: a chat turn writes its messages' vectors, and a mask
    over a million rows took 5 ms a filter to make again, on every recall after it."""

    def __init__(self, columns: Mapping[str, MetadataColumn], conditions: Conditions, size: int, capacity: int) -> None:
        self.conditions = conditions
        self.mask = grown(filter_mask(columns, conditions, size), capacity)
        self.count = int(np.count_nonzero(self.mask))

    def grow(self, capacity: int) -> None:
        self.mask = grown(self.mask, capacity)

    def put(self, position: int, metadata: Mapping[str, Any]) -> None:
        passed = passes(self.conditions, metadata)
        self.count += int(passed) - int(self.mask[position])
        self.mask[position] = passed
