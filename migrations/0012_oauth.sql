-- OAuth 2.1 for remote MCP clients (memory/oauth.py): the server is its own authorization
-- server for /mcp. Every secret (consent cookie, code, access and refresh token) is kept
-- only as its SHA-256 hex digest; the values themselves leave once, in an answer.

-- Clients: registered (RFC 7591) or read from a Client ID Metadata Document (client_id is
-- its https URL). redirect_uris is a JSON array, matched exactly. registered_from is a
-- digest of the registering address, for the registration rate limit.
CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  source TEXT NOT NULL CHECK (source IN ('registered', 'metadata_document')),
  client_name TEXT NOT NULL,
  client_uri TEXT,
  redirect_uris TEXT NOT NULL,
  scope TEXT,
  registered_from TEXT,
  created_at TEXT NOT NULL,
  fetched_at TEXT
);
CREATE INDEX oauth_clients_by_time ON oauth_clients (source, created_at);

-- Authorization requests waiting for the owner's decision on the consent page.
CREATE TABLE oauth_requests (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  scope TEXT NOT NULL,
  state TEXT,
  code_challenge TEXT NOT NULL,
  resource TEXT NOT NULL,
  csrf_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);

-- A grant: one approval of one client, the root of its codes' and tokens' lineage.
-- Revoking it (the owner, a revocation request, a reused code or refresh token) deletes
-- its tokens.
CREATE TABLE oauth_grants (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  resource TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT,
  revoked_reason TEXT
);
CREATE INDEX oauth_grants_by_client ON oauth_grants (client_id);

-- Authorization codes: single use (used_at), short-lived; grant_id is the grant the code
-- was redeemed for, revoked if the code comes back.
CREATE TABLE oauth_codes (
  code_hash TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  scope TEXT NOT NULL,
  resource TEXT NOT NULL,
  code_challenge TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT,
  grant_id TEXT
);

-- Access and refresh tokens. A refresh token is used once (used_at) and kept until it
-- expires, so that a second use is recognised and revokes the grant.
CREATE TABLE oauth_tokens (
  token_hash TEXT PRIMARY KEY,
  grant_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
