"""Precious words, as the services hand them around: a plain dataclass in the column order
of ``precious``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Precious:
    """Words the owner keeps verbatim (append-only), with a note on why."""

    id: str
    namespace: str
    content: str
    note: str | None = None
    source: str
    created_at: str
