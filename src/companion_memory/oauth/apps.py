"""The owner's connected apps: the live grants, what each may do and when it last used
its access, and the owner's revocation of one."""

from __future__ import annotations

import dataclasses

from ..clock import iso
from ..domain.oauth import LiveGrant
from ..errors import NotFound
from ..ports import Clock
from ..store.oauth import OAuthStore
from .uris import displayable


class ConnectedApps:
    def __init__(self, store: OAuthStore, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    async def grants(self) -> list[LiveGrant]:
        return [
            dataclasses.replace(grant, client_name=displayable(grant.client_name or "") or "An unnamed app")
            for grant in await self.store.live_grants(iso(self.clock.now()))
        ]

    async def revoke(self, grant_id: str) -> None:
        if not await self.store.revoke_grant(grant_id, "revoked by the owner", iso(self.clock.now())):
            raise NotFound(f"no connected app with grant {grant_id}")
