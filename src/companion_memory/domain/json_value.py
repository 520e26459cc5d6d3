"""What a JSON value must be to be stored: something every reader can read back.

A value is refused at write time, not discovered at read time: one message whose
metadata nests 300 deep once made every export of its namespace fail. The bounds:

- at most ``MAX_DEPTH`` nested arrays and objects (64: deeper is never data a person
  means, and each level costs stack in every encoder that reads it back);
- strings (and object keys) are Unicode text: no lone surrogates such as ``"\\ud800"``,
  which SQLite refuses and D1 silently changes;
- numbers are finite: ``NaN`` and ``Infinity`` are not JSON, and many readers refuse them.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64


def json_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` cannot be stored as JSON, or None when it can. Iterative, so a
    value nested far deeper than the bound is judged without exhausting the stack."""
    pending: list[tuple[Any, int, str]] = [(value, 0, "")]
    while pending:
        item, depth, where = pending.pop()
        if isinstance(item, (dict, list)):
            if depth >= max_depth:
                return f"nests deeper than {max_depth} levels{_at(where)}"
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        return f"has a non-string object key{_at(where)}"
                    if not is_text(key):
                        return f"has an object key with a lone surrogate (not Unicode text){_at(where)}"
                    pending.append((child, depth + 1, f"{where}.{key}" if len(where) < 200 else where))
            else:
                pending.extend(
                    (child, depth + 1, f"{where}[{i}]" if len(where) < 200 else where) for i, child in enumerate(item)
                )
        elif isinstance(item, str):
            if not is_text(item):
                return f"has a string with a lone surrogate (not Unicode text){_at(where)}"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"has a number that is not finite (NaN or Infinity are not JSON){_at(where)}"
        elif item is not None and not isinstance(item, (bool, int)):
            return f"has a {type(item).__name__}, which is not a JSON value{_at(where)}"
    return None


def is_text(value: str) -> bool:
    """True when ``value`` is valid Unicode text (encodable as UTF-8)."""
    if value.isascii():  # most text, and every base64 image in a chat body, without a copy
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def dumps(value: Any) -> str:
    """Compact JSON for a value already judged storable."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _at(where: str) -> str:
    return f" (at {where.lstrip('.')})" if where else ""
