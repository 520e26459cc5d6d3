"""The OAuth 2.1 authorization server of ``/mcp``, as the MCP authorization specification
describes it: clients register (RFC 7591) or name a Client ID Metadata Document, the owner
approves each authorization request on the panel's consent page, the client redeems a
single-use, short-lived code with its PKCE verifier (S256 only) for an access token and
a refresh token bound to this server's MCP endpoint (RFC 8707).

Each step is a part of its own, over one store. Every failure is an ``OAuthError``
carrying its OAuth ``error`` value.
"""

from __future__ import annotations

from ..ports import Clock, Database, HttpClient
from ..store.oauth import OAuthStore
from .apps import ConnectedApps
from .codes import Authorization
from .config import OAuthConfig
from .metadata_documents import MetadataDocuments
from .registration import Registration
from .tokens import Tokens


class AuthorizationServer:
    def __init__(self, db: Database, clock: Clock, http: HttpClient, config: OAuthConfig) -> None:
        store = OAuthStore(db)
        self.registration = Registration(store, clock, config)
        self.authorization = Authorization(store, clock, MetadataDocuments(store, clock, http), config)
        self.tokens = Tokens(store, clock, config)
        self.apps = ConnectedApps(store, clock)
