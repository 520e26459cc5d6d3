"""The owner's connected apps: the live grants, what each may do and when it last used
its access, and the owner's revocation of one."""

from __future__ import annotations

import json
from typing import Any

from ..clock import iso
from ..errors import NotFound
from ..ports import Clock
from ..store.oauth import OAuthStore
from .uris import displayable


class ConnectedApps:
    def __init__(self, store: OAuthStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    async def grants(self) -> list[dict[str, Any]]:
        rows = await self.store.live_grants(iso(self.clock.now()))
        for row in rows:
            row["scopes"] = row.pop("scope").split()
            row["redirect_uris"] = json.loads(row["redirect_uris"] or "[]")
            row["client_name"] = displayable(row["client_name"] or "") or "An unnamed app"
        return rows

    async def revoke(self, grant_id: str) -> None:
        if not await self.store.revoke_grant(grant_id, "revoked by the owner", iso(self.clock.now())):
            raise NotFound(f"no connected app with grant {grant_id}")
