"""SQL for the OAuth authorization server: clients, pending consents, grants, codes and
tokens (migrations 0012 and 0013). Secrets arrive here already hashed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..domain.oauth import AuthorizationCode, GrantedToken, LiveGrant, OAuthClient, OAuthGrant, PendingAuthorization
from ..ports import Database, Statement
from .sql import from_json, placeholders, to_json

CLIENT_COLUMNS = (
    "client_id",
    "source",
    "client_name",
    "client_uri",
    "redirect_uris",
    "scope",
    "registered_from",
    "created_at",
    "fetched_at",
)
REQUEST_COLUMNS = (
    "id",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "resource",
    "csrf_hash",
    "created_at",
    "expires_at",
)
CODE_COLUMNS = (
    "code_hash",
    "client_id",
    "redirect_uri",
    "scope",
    "resource",
    "code_challenge",
    "created_at",
    "expires_at",
)


GRANT_COLUMNS = ("id", "client_id", "scope", "resource", "created_at", "last_used_at")


def _insert(table: str, columns: tuple[str, ...], values: Sequence[Any], *, replace: bool = False) -> Statement:
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    return Statement(f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({placeholders(len(columns))})", tuple(values))


def _fields(record: object, columns: tuple[str, ...]) -> list[Any]:
    return [getattr(record, c) for c in columns]


class OAuthStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ clients

    async def save_client(self, client: OAuthClient) -> None:
        row = [
            to_json(list(client.redirect_uris), what="redirect_uris") if c == "redirect_uris" else getattr(client, c)
            for c in CLIENT_COLUMNS
        ]
        await self.db.batch([_insert("oauth_clients", CLIENT_COLUMNS, row, replace=True)])

    async def client(self, client_id: str) -> OAuthClient | None:
        row = await self.db.first(
            f"SELECT {', '.join(CLIENT_COLUMNS)} FROM oauth_clients WHERE client_id = ?", (client_id,)
        )
        if row is None:
            return None
        return OAuthClient(**{**row, "redirect_uris": tuple(from_json(row["redirect_uris"], []))})

    async def document_failure(self, client_id: str, since: str) -> str | None:
        """Why the metadata document at ``client_id`` could not be read, if it failed
        since ``since``."""
        row = await self.db.first(
            "SELECT error FROM oauth_document_failures WHERE client_id = ? AND failed_at >= ?", (client_id, since)
        )
        return str(row["error"]) if row else None

    async def remember_document_failure(self, client_id: str, error: str, at: str, *, forget_before: str) -> None:
        """Keeps the failure, and forgets the ones older than ``forget_before``."""
        await self.db.batch(
            [
                Statement("DELETE FROM oauth_document_failures WHERE failed_at < ?", (forget_before,)),
                Statement(
                    "INSERT OR REPLACE INTO oauth_document_failures (client_id, error, failed_at) VALUES (?, ?, ?)",
                    (client_id, error, at),
                ),
            ]
        )

    async def registrations_since(self, since: str, registered_from: str) -> tuple[int, int]:
        """Registrations since ``since``: all of them, and those from this address."""
        row = await self.db.first(
            "SELECT COUNT(*) AS total, COALESCE(SUM(registered_from = ?), 0) AS mine FROM oauth_clients "
            "WHERE source = 'registered' AND created_at >= ?",
            (registered_from, since),
        )
        return (int(row["total"]), int(row["mine"])) if row else (0, 0)

    async def forget_unused_clients(self, before: str) -> None:
        """Registered clients older than ``before`` that were never granted anything: a
        registration costs nothing, so most of them never come back."""
        await self.db.run(
            "DELETE FROM oauth_clients WHERE source = 'registered' AND created_at < ? "
            "AND client_id NOT IN (SELECT client_id FROM oauth_grants)",
            (before,),
        )

    # ------------------------------------------------------------------ consents waiting for the owner

    async def add_request(self, request: PendingAuthorization, now: str) -> None:
        await self.db.batch(
            [
                Statement("DELETE FROM oauth_requests WHERE expires_at < ?", (now,)),
                _insert("oauth_requests", REQUEST_COLUMNS, _fields(request, REQUEST_COLUMNS)),
            ]
        )

    async def request(self, request_id: str) -> PendingAuthorization | None:
        row = await self.db.first(
            f"SELECT {', '.join(REQUEST_COLUMNS)} FROM oauth_requests WHERE id = ?", (request_id,)
        )
        return PendingAuthorization(**row) if row else None

    async def take_request(self, request_id: str) -> bool:
        """Removes the request; False when another decision took it first."""
        result = await self.db.run("DELETE FROM oauth_requests WHERE id = ?", (request_id,))
        return result.changes > 0

    # ------------------------------------------------------------------ codes

    async def add_code(self, code: AuthorizationCode, now: str) -> None:
        await self.db.batch(
            [
                Statement("DELETE FROM oauth_codes WHERE expires_at < ?", (now,)),
                _insert("oauth_codes", CODE_COLUMNS, _fields(code, CODE_COLUMNS)),
            ]
        )

    async def code(self, code_hash: str) -> AuthorizationCode | None:
        row = await self.db.first(
            f"SELECT {', '.join(CODE_COLUMNS)}, used_at, grant_id FROM oauth_codes WHERE code_hash = ?", (code_hash,)
        )
        return AuthorizationCode(**row) if row else None

    async def use_code(self, code_hash: str, grant_id: str, at: str) -> bool:
        """Marks the code used for ``grant_id``; False when it was used already."""
        result = await self.db.run(
            "UPDATE oauth_codes SET used_at = ?, grant_id = ? WHERE code_hash = ? AND used_at IS NULL",
            (at, grant_id, code_hash),
        )
        return result.changes > 0

    # ------------------------------------------------------------------ grants and tokens

    @staticmethod
    def add_grant(grant: OAuthGrant) -> Statement:
        return _insert("oauth_grants", GRANT_COLUMNS, _fields(grant, GRANT_COLUMNS))

    @staticmethod
    def add_token(
        token_hash: str, grant_id: str, kind: str, created_at: str, expires_at: str, scope: str | None = None
    ) -> Statement:
        """``scope``: what the token may do when that is less than its grant."""
        return Statement(
            "INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at, scope) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (token_hash, grant_id, kind, created_at, expires_at, scope),
        )

    @staticmethod
    def drop_expired_tokens(grant_id: str, now: str) -> Statement:
        return Statement("DELETE FROM oauth_tokens WHERE grant_id = ? AND expires_at < ?", (grant_id, now))

    async def issue(self, statements: list[Statement]) -> None:
        await self.db.batch(statements)

    async def token(self, token_hash: str) -> GrantedToken | None:
        """The token with its grant, whatever state either is in; ``scope`` is the token's
        own, else its grant's."""
        row = await self.db.first(
            "SELECT t.token_hash AS token_hash, t.grant_id AS grant_id, t.kind AS kind, t.expires_at AS expires_at, "
            "t.used_at AS used_at, g.client_id AS client_id, COALESCE(t.scope, g.scope) AS scope, "
            "g.resource AS resource, "
            "g.last_used_at AS last_used_at, g.revoked_at AS revoked_at "
            "FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = ?",
            (token_hash,),
        )
        return GrantedToken(**row) if row else None

    async def use_refresh_token(self, token_hash: str, at: str) -> bool:
        """Marks the refresh token used; False when it was used already."""
        result = await self.db.run(
            "UPDATE oauth_tokens SET used_at = ? WHERE token_hash = ? AND kind = 'refresh' AND used_at IS NULL",
            (at, token_hash),
        )
        return result.changes > 0

    async def delete_token(self, token_hash: str) -> None:
        await self.db.run("DELETE FROM oauth_tokens WHERE token_hash = ?", (token_hash,))

    async def touch_grant(self, grant_id: str, at: str) -> None:
        await self.db.run("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", (at, grant_id))

    async def revoke_grant(self, grant_id: str, reason: str, at: str) -> bool:
        """Revokes the grant and deletes its tokens; False when it was not live."""
        results = await self.db.batch(
            [
                Statement(
                    "UPDATE oauth_grants SET revoked_at = ?, revoked_reason = ? WHERE id = ? AND revoked_at IS NULL",
                    (at, reason, grant_id),
                ),
                Statement("DELETE FROM oauth_tokens WHERE grant_id = ?", (grant_id,)),
            ]
        )
        return results[0].changes > 0

    async def live_grants(self, now: str) -> list[LiveGrant]:
        """Grants neither revoked nor run out (some token of theirs still valid), with
        their client's name, the latest used first."""
        rows = await self.db.all(
            "SELECT g.id AS id, g.client_id AS client_id, c.client_name AS client_name, c.source AS source, "
            "c.redirect_uris AS redirect_uris, g.scope AS scope, g.created_at AS created_at, "
            "g.last_used_at AS last_used_at, "
            "(SELECT MAX(expires_at) FROM oauth_tokens t WHERE t.grant_id = g.id AND t.kind = 'refresh' "
            "AND t.used_at IS NULL) AS expires_at "
            "FROM oauth_grants g LEFT JOIN oauth_clients c ON c.client_id = g.client_id "
            "WHERE g.revoked_at IS NULL AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id "
            "AND t.expires_at > ? AND t.used_at IS NULL) ORDER BY COALESCE(g.last_used_at, g.created_at) DESC, g.id",
            (now,),
        )
        return [
            LiveGrant(
                **{key: value for key, value in row.items() if key not in ("scope", "redirect_uris")},
                redirect_uris=tuple(from_json(row["redirect_uris"], [])),
                scopes=tuple(row["scope"].split()),
            )
            for row in rows
        ]

    async def forget_revoked_grants(self, before: str) -> None:
        await self.db.run("DELETE FROM oauth_grants WHERE revoked_at IS NOT NULL AND revoked_at < ?", (before,))
