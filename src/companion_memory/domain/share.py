"""A memory shared into another namespace and its audit log, as the services hand them
around: plain dataclasses, the share in the column order of ``memory_shares`` (the order
an export carries)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Share:
    """One memory of ``source_namespace`` proposed for ``target_namespace``: proposed,
    approved (recalled there), rejected or revoked, and who did what."""

    id: str
    memory_id: str
    source_namespace: str
    target_namespace: str
    status: str = "proposed"
    proposed_by: str
    decided_by: str | None = None
    note: str | None = None
    reason: str | None = None
    created_at: str
    updated_at: str
    decided_at: str | None = None


SHARE_FIELDS = tuple(f.name for f in dataclasses.fields(Share))


@dataclass(frozen=True, kw_only=True)
class ShareEvent:
    """One line of a share's audit log: proposed, approved, rejected or revoked."""

    id: int
    event: str
    actor: str
    reason: str | None = None
    created_at: str
