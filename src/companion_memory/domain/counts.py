"""What a stored integer must be: a whole number from 0 to ``MAX_COUNT`` (2^31 - 1).

Every integer column holds a count, a flag, a number of tokens or milliseconds, an index
into a conversation: none comes near two billion. The bound matters on D1: the Worker's
Pyodide hands a Python int of 2^53 - 1 or more to JavaScript as a BigInt, which D1 refuses
to bind, and reads a larger stored integer back as a float. One memory imported with
``seen_count: 2**63`` made every later write of its row fail. 2^31 - 1 leaves counters
incremented in SQL (``seen_count + 1``) a long way below 2^53, and fits a 32-bit integer
in any client that reads the answers.
"""

from __future__ import annotations

from ..errors import InvalidInput

MAX_COUNT = 2**31 - 1


def count_problem(value: object) -> str | None:
    """Why ``value`` cannot be stored (or was not stored) as a count, or None."""
    if type(value) is not int:  # bool is an int to Python, not to a count
        return f"{_shown(value)} is not a whole number"
    if not 0 <= value <= MAX_COUNT:
        return f"{_shown(value)} is outside 0..{MAX_COUNT}"
    return None


def read_count(value: object, field: str) -> int:
    """``value`` as a count for ``field``; an ``InvalidInput`` (invalid_count) naming it otherwise."""
    problem = count_problem(value)
    if problem:
        raise InvalidInput(f"{field}: {problem}", code="invalid_count")
    assert isinstance(value, int)
    return value


def clamped(value: int) -> int:
    """A count someone else reported (a provider's token usage), kept within the bound."""
    return min(max(int(value), 0), MAX_COUNT)


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."
