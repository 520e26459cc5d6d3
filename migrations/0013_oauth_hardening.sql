-- OAuth, round two (memory/oauth.py).

-- An access token may carry less than its grant: a refresh that asks for a narrower scope
-- (RFC 6749 §6) gets an access token for that scope only. NULL: the grant's scope.
ALTER TABLE oauth_tokens ADD COLUMN scope TEXT;

-- Client ID Metadata Documents that could not be read, remembered for a few minutes: asked
-- for again meanwhile, the server answers from here and connects nowhere.
CREATE TABLE oauth_document_failures (
  client_id TEXT PRIMARY KEY,
  error TEXT NOT NULL,
  failed_at TEXT NOT NULL
);
CREATE INDEX oauth_document_failures_by_time ON oauth_document_failures (failed_at);
