"""Names: how two names are compared, and which people a text names (a Latin name as a
word, a CJK one anywhere), for the registry and for recall."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

from ...domain.person import Person


def name_key(name: str) -> str:
    """How two names are compared: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


@functools.lru_cache(maxsize=64)
def names_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    """One expression finding any of these names (as ``name_key`` gives them, the longest
    first) in folded text, as ``mentions`` would: a Latin name as a word, CJK anywhere.
    Cached: recall asks with the same registry turn after turn."""
    parts = [
        rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])" if re.search(r"[a-z0-9]", key) else re.escape(key)
        for key in sorted(keys, key=lambda k: (-len(k), k))
    ]
    return re.compile("|".join(parts) or "(?!)")


def _found_keys(people: Sequence[Person], text: str) -> set[str]:
    keys = tuple(sorted({k for p in people for n in p.names if len(k := name_key(n)) >= 2}))
    return {m.group(0) for m in names_pattern(keys).finditer(name_key(text))} if keys else set()


def named_in(people: Sequence[Person], text: str) -> list[Person]:
    """The people one of whose names ``text`` holds (a name shorter than 2 characters
    names no one: "A" is everywhere)."""
    found = _found_keys(people, text)
    return [p for p in people if any(name_key(n) in found for n in p.names)]


def other_names(people: Sequence[Person], text: str) -> list[str]:
    """The names of the people ``text`` names that it does not hold itself: what recall
    adds to a query so that "my sister" finds what was said of "Ana" and "安娜"."""
    said = _found_keys(people, text)
    found: dict[str, str] = {}
    for person in (p for p in people if any(name_key(n) in said for n in p.names)):
        for name in person.names:
            if name_key(name) not in said:
                found.setdefault(name_key(name), name)
    return list(found.values())


def names_any(text: str, keys: Sequence[str]) -> bool:
    """Whether ``text`` names one of these names (``name_key``s)."""
    usable = tuple(sorted({k for k in keys if len(k) >= 2}))
    return bool(usable) and names_pattern(usable).search(name_key(text)) is not None


def called(people: Iterable[Person], name: str) -> Person | None:
    """The person one of whose names is ``name``."""
    return next((p for p in people if name_key(name) in map(name_key, p.names)), None)


def clean_names(names: Iterable[str]) -> list[str]:
    """The names with their spaces collapsed, the empty ones and repeats (by ``name_key``)
    left out, in order."""
    kept: dict[str, str] = {}
    for name in names:
        name = " ".join(name.split())
        if name:
            kept.setdefault(name_key(name), name)
    return list(kept.values())
