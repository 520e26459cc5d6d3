"""What the owner's settings make of the OAuth server: the scopes it grants, how long
tokens live, how many registrations an hour it takes."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import OAuthError

# Granted always (refresh tokens are always issued): a client that asks for it is not refused.
OFFLINE_ACCESS = "offline_access"


@dataclass(frozen=True)
class OAuthConfig:
    scopes: tuple[str, ...]
    access_token_minutes: int
    refresh_token_days: int
    registrations_per_hour: int

    def granted_scopes(self, requested: str | None, *, error: str) -> list[str]:
        """The scopes ``requested`` names, in this server's order (all of them when it
        names none); ``OAuthError`` ``error`` for a scope this server does not grant."""
        asked = [s for s in (requested or "").split() if s != OFFLINE_ACCESS]
        unknown = [s for s in asked if s not in self.scopes]
        if unknown:
            raise OAuthError(
                f"unknown scope {unknown[0][:100]!r}; this server grants {' '.join(self.scopes)}", code=error
            )
        return [s for s in self.scopes if s in asked] if asked else list(self.scopes)
