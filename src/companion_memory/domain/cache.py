"""An entry of the key-value cache clients keep per namespace: a plain dataclass in the
column order of ``cache_entries``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class CacheEntry:
    """A client's JSON value under a key, until ``expires_at`` (None: until replaced)."""

    namespace: str
    key: str
    # Whatever JSON the client stored (domain/json_value.py keeps it readable).
    value: Any
    expires_at: str | None = None
    created_at: str
    updated_at: str
